import type { FerryConfig } from '../../config.js';
import type { SecretStore } from '../../keychain/port.js';
import type { Target } from '../../target.js';
import { FigshareTarget, type FigshareTargetOptions } from './figshare-target.js';

export { FigshareTarget, FOLDER_SEPARATOR, parseFigshareId, type FigshareTargetOptions } from './figshare-target.js';

/**
 * The `figshare` target on `config.remotes.figshareApiUrl` (https://api.figshare.com/v2).
 * One request a second by default, as figshare asks; tests raise it through `overrides`.
 */
export function createFigshareTarget(config: FerryConfig, _secrets: SecretStore, overrides: Partial<FigshareTargetOptions> = {}): Target {
  return new FigshareTarget({ baseUrl: config.remotes.figshareApiUrl, ...overrides });
}
