import path from 'node:path';
import type { FerryConfig } from '../../config.js';
import type { SecretStore } from '../../keychain/port.js';
import type { Target } from '../../target.js';
import { DataverseTarget, type DataverseTargetOptions } from './dataverse-target.js';

export { DataverseTarget, type DataverseTargetOptions } from './dataverse-target.js';
export { parseDataverseToken, type DataverseAccount } from './credentials.js';
export { datasetId, fileId, folderId, parseDataverseId } from './ids.js';

/** The installation a bare API token is for, when none is configured. */
export const DEFAULT_DATAVERSE_URL = 'https://dataverse.harvard.edu';

/**
 * The `dataverse` target. A bare token is for `config.remotes.dataverseUrl`; a token given
 * as JSON names its own installation (credentials.ts), so one target serves several
 * installations, one keychain entry each. Direct uploads are journaled under the data dir so
 * a resumed job sends only the parts still missing, and registers without sending again what
 * storage already holds. `overrides` is for tests.
 */
export function createDataverseTarget(config: FerryConfig, _secrets: SecretStore, overrides: Partial<DataverseTargetOptions> = {}): Target {
  return new DataverseTarget({ defaultUrl: config.remotes.dataverseUrl || DEFAULT_DATAVERSE_URL, journalDir: path.join(config.dataDir, 'dataverse-uploads'), ...overrides });
}
