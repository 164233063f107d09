import { unauthorized } from '../../errors.js';

/**
 * A generic git account is a repository URL plus HTTP Basic credentials, so the target's one
 * "token" (kept in the keychain like any other) is a JSON string, shaped like the WebDAV
 * target's:
 *
 *   {"url":"https://git.example.org/alice/data.git","username":"alice","password":"<access token>"}
 *
 * `branch` (optional) names the branch to read and write; by default the repository's own
 * HEAD (for an empty repository: "main"). Gitea/Forgejo, Bitbucket and self-managed GitLab
 * take an access token as the password. The password never appears in a message.
 */
export interface GitCredentials {
  url: string;
  username: string;
  password: string;
  branch: string | null;
}

const SHAPE = 'The git token must be JSON like {"url":"https://git.example.org/<owner>/<repository>.git","username":"<user>","password":"<access token>"}.';

export function parseGitToken(token: string): GitCredentials {
  let parsed: unknown;
  try {
    parsed = JSON.parse(token);
  } catch {
    throw unauthorized(SHAPE);
  }
  const { url, username, password, branch } = (parsed ?? {}) as Record<string, unknown>;
  if (typeof url !== 'string' || typeof username !== 'string' || typeof password !== 'string') throw unauthorized(SHAPE);
  if (branch !== undefined && (typeof branch !== 'string' || !/^[A-Za-z0-9._/-]+$/.test(branch) || branch.includes('..'))) {
    throw unauthorized('The git branch must be a plain branch name such as "main".');
  }
  let parsedUrl: URL;
  try {
    parsedUrl = new URL(url);
  } catch {
    throw unauthorized(`The git repository URL is not a URL. ${SHAPE}`);
  }
  if (parsedUrl.protocol !== 'https:' && parsedUrl.protocol !== 'http:') throw unauthorized('The git repository URL must start with https:// (or http://); Ferry speaks git over HTTP only.');
  if (parsedUrl.username || parsedUrl.password) throw unauthorized('Put the git username and token in their own fields, not in the URL.');
  if (parsedUrl.search || parsedUrl.hash) throw unauthorized('The git repository URL must not carry a query or a fragment.');
  return { url: parsedUrl.href.replace(/\/+$/, ''), username, password, branch: typeof branch === 'string' ? branch : null };
}
