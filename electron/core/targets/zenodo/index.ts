import type { FerryConfig } from '../../config.js';
import type { SecretStore } from '../../keychain/port.js';
import type { Target } from '../../target.js';
import { ZenodoTarget, type ZenodoTargetOptions } from './zenodo-target.js';

export { ZenodoTarget, FOLDER_SEPARATOR, type ZenodoTargetOptions } from './zenodo-target.js';

/**
 * The `zenodo` target on `config.remotes.zenodoUrl` (https://zenodo.org, or the sandbox
 * https://sandbox.zenodo.org with its own account and token). The token arrives per request
 * (TargetContext.token), so `secrets` is not needed here. `overrides` is for tests.
 */
export function createZenodoTarget(config: FerryConfig, _secrets: SecretStore, overrides: Partial<ZenodoTargetOptions> = {}): Target {
  return new ZenodoTarget({ baseUrl: config.remotes.zenodoUrl, ...overrides });
}
