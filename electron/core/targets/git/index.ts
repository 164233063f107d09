import type { FerryConfig } from '../../config.js';
import type { SecretStore } from '../../keychain/port.js';
import type { Target } from '../../target.js';
import { GitTarget, type GitTargetOptions } from './git-target.js';

export { GitTarget, type GitTargetOptions } from './git-target.js';
export { parseGitToken, type GitCredentials } from './credentials.js';
export { gitId, parseGitId } from './ids.js';

/**
 * The generic `git` target. Like WebDAV its server is per account, so the repository URL lives
 * in the token (see credentials.ts): `{"url": ..., "username": ..., "password": ...}`.
 */
export function createGitTarget(_config: FerryConfig, _secrets: SecretStore, overrides: GitTargetOptions = {}): Target {
  return new GitTarget(overrides);
}
