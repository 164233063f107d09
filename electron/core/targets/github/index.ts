import type { FerryConfig } from '../../config.js';
import type { SecretStore } from '../../keychain/port.js';
import type { Target } from '../../target.js';
import { GithubTarget, type GithubTargetOptions } from './github-target.js';

export { GithubTarget } from './github-target.js';

/**
 * GitHub (or GitHub Enterprise Server: `config.remotes.githubApiUrl = https://host/api/v3`).
 * `tuning` exists for tests (shorter spacing between writes, shorter rate-limit waits).
 */
export function createGithubTarget(config: FerryConfig, _secrets: SecretStore, tuning: Partial<GithubTargetOptions> = {}): Target {
  return new GithubTarget({ baseUrl: config.remotes.githubApiUrl, ...tuning });
}
