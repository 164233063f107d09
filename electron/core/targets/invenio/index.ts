import type { FerryConfig } from '../../config.js';
import type { SecretStore } from '../../keychain/port.js';
import type { Target } from '../../target.js';
import { InvenioTarget, type InvenioTargetOptions } from './invenio-target.js';

export { InvenioTarget, FOLDER_SEPARATOR, type InvenioTargetOptions } from './invenio-target.js';
export { parseInvenioToken, type InvenioAccount } from './credentials.js';
export { communityId, fileId, parseInvenioId, recordId } from './ids.js';

/**
 * The `invenio` target. A bare token is for `config.remotes.invenioUrl` (none by default:
 * there is no one InvenioRDM); a JSON token names its own instance (credentials.ts).
 * `overrides` is for tests.
 */
export function createInvenioTarget(config: FerryConfig, _secrets: SecretStore, overrides: Partial<InvenioTargetOptions> = {}): Target {
  return new InvenioTarget({ defaultUrl: config.remotes.invenioUrl ?? '', ...overrides });
}
