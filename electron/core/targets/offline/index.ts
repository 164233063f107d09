import type { FerryConfig } from '../../config.js';
import type { SecretStore } from '../../keychain/port.js';
import { defaultLibraryDir, OfflineTarget, offlineStateDir } from './offline-target.js';

export { OfflineTarget } from './offline-target.js';

/** The data directory's own library first (downloads are kept there), then the user's extra folders. */
export function createOfflineTarget(config: FerryConfig, _secrets?: SecretStore): OfflineTarget {
  return new OfflineTarget({
    libraryDirs: [defaultLibraryDir(config.dataDir), ...config.libraryDirs],
    stateDir: offlineStateDir(config.dataDir),
    limits: config.limits,
  });
}
