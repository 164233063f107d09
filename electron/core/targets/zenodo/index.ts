import type { FerryConfig } from '../../config.js';
import type { SecretStore } from '../../keychain/port.js';
import type { Target } from '../../target.js';
import { InvenioTarget, type InvenioTargetOptions } from '../invenio/index.js';
import { zenodoInstance } from './instance.js';

export { FOLDER_SEPARATOR } from '../invenio/index.js';
export { zenodoInstance } from './instance.js';

/**
 * The `zenodo` target: Zenodo's InvenioRDM records API on `config.remotes.zenodoUrl`
 * (https://zenodo.org, or the sandbox https://sandbox.zenodo.org with its own account and
 * token), through the invenio target's code with Zenodo's limits (instance.ts). The token
 * arrives per request (TargetContext.token) from the keychain entry of the target id
 * `zenodo`, as before the move from the legacy deposit API. `overrides` is for tests.
 */
export function createZenodoTarget(config: FerryConfig, _secrets: SecretStore, overrides: Partial<InvenioTargetOptions> = {}): Target {
  // Zenodo allows 100 requests a minute per user; one a second stays under it
  return new InvenioTarget({ defaultUrl: config.remotes.zenodoUrl, instance: zenodoInstance(config.remotes.zenodoUrl), ratePerSecond: 1, pageSize: 100, ...overrides });
}
