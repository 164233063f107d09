import type { FerryConfig } from '../../config.js';
import type { SecretStore } from '../../keychain/port.js';
import type { Target } from '../../target.js';
import type { GitlabApiOptions } from './gitlab-api.js';
import { GitlabTarget } from './gitlab-target.js';

export { GitlabTarget } from './gitlab-target.js';

/**
 * GitLab: gitlab.com or a self-managed instance (`config.remotes.gitlabUrl`, the instance base;
 * Ferry appends /api/v4). `tuning` exists for tests (shorter rate-limit waits).
 */
export function createGitlabTarget(config: FerryConfig, _secrets: SecretStore, tuning: Partial<GitlabApiOptions> = {}): Target {
  return new GitlabTarget({ baseUrl: config.remotes.gitlabUrl, ...tuning });
}
