import { notFound } from '../../errors.js';

/**
 * Ids of the generic git target: "t" + base64url of the path from the repository root. The
 * repository is the account (like a WebDAV server's root), so its root entries are the top
 * level; base64url keeps any path inside one URL segment with no '.'.
 */
export const gitId = (path: string) => `t${Buffer.from(path, 'utf8').toString('base64url')}`;

export function parseGitId(id: string): string {
  const match = /^t([A-Za-z0-9_-]+)$/.exec(id);
  const path = match ? Buffer.from(match[1]!, 'base64url').toString('utf8') : '';
  if (!match || gitId(path) !== id || path.split('/').some((s) => s === '' || s === '.' || s === '..')) {
    throw notFound(`"${id}" is not a resource of this git repository.`);
  }
  return path;
}
