import type { FerryConfig } from '../config.js';
import type { SecretStore } from '../keychain/port.js';
import type { Target } from '../target.js';
import { LocalTarget } from './local/local-target.js';
import { createOfflineTarget } from './offline/index.js';

/** Every target Ferry ships, in the order the UI offers them. */
export function builtinTargets(config: FerryConfig, secrets: SecretStore): Target[] {
  return [new LocalTarget({ root: config.workspace }), createOfflineTarget(config, secrets)];
}
