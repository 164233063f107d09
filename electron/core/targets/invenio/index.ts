import type { FerryConfig } from '../../config.js';
import type { SecretStore } from '../../keychain/port.js';
import type { Target } from '../../target.js';
import { InvenioTarget, type InvenioTargetOptions } from './invenio-target.js';
import { rateFromEnv } from '../../remote/rate-setting.js';

export { InvenioTarget, FOLDER_SEPARATOR, type InvenioTargetOptions } from './invenio-target.js';
export { parseInvenioToken, type InvenioAccount } from './credentials.js';
export { communityId, fileId, parseInvenioId, recordId } from './ids.js';

/**
 * The `invenio` target. A bare token is for `config.remotes.invenioUrl` (none by default:
 * there is no one InvenioRDM); a JSON token names its own instance (credentials.ts). Requests a
 * second to an instance: 2 (api.ts), or FERRY_INVENIO_RATE_PER_SECOND (an instance that allows
 * more; the bench's latency rows). `overrides` is for tests.
 */
export function createInvenioTarget(config: FerryConfig, _secrets: SecretStore, overrides: Partial<InvenioTargetOptions> = {}): Target {
  return new InvenioTarget({ defaultUrl: config.remotes.invenioUrl ?? '', ratePerSecond: rateFromEnv('FERRY_INVENIO_RATE_PER_SECOND'), ...overrides });
}
