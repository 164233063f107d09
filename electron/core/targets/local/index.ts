import path from 'node:path';
import type { FerryConfig } from '../../config.js';
import type { SecretStore } from '../../keychain/port.js';
import type { Target } from '../../target.js';
import { LocalTarget } from './local-target.js';

export { LocalTarget, LOCAL_HASH_ALGORITHMS, type LocalTargetOptions } from './local-target.js';
export { encodeLocalId, decodeLocalId } from './ids.js';

/** The `local` target over the configured workspace (it needs no secrets); what downloads remember is kept in the data folder. */
export function createLocalTarget(config: FerryConfig, _secrets: SecretStore): Target {
  return new LocalTarget({ root: config.workspace, digestsFile: path.join(config.dataDir, 'remembered-digests.json') });
}

/** A folder the person chose (electron/core/local-roots.ts), served as a target of its own. */
export function createLocalRootTarget(config: FerryConfig, root: { name: string; label: string; path: string }): Target {
  return new LocalTarget({
    root: root.path,
    name: root.name,
    readableName: root.label,
    digestsFile: path.join(config.dataDir, `remembered-digests-${root.name}.json`),
  });
}
