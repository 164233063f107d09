import { unauthorized } from '../../errors.js';

/**
 * A WebDAV account is a server URL plus HTTP Basic credentials, so the target's one
 * "token" (kept in the keychain like any other) is a JSON string:
 *
 *   {"url":"https://cloud.example.org/remote.php/dav/files/alice/","username":"alice","password":"app-password"}
 *
 * For Nextcloud/ownCloud use an app password (Settings → Security → Devices & sessions),
 * which also works with SSO and two-factor login. The password never appears in a message.
 */
export interface WebdavCredentials {
  url: string;
  username: string;
  password: string;
}

const SHAPE = 'The WebDAV token must be JSON like {"url":"https://cloud.example.org/remote.php/dav/files/<user>/","username":"<user>","password":"<app password>"}.';

export function parseWebdavToken(token: string): WebdavCredentials {
  let parsed: unknown;
  try {
    parsed = JSON.parse(token);
  } catch {
    throw unauthorized(SHAPE);
  }
  const { url, username, password } = (parsed ?? {}) as Record<string, unknown>;
  if (typeof url !== 'string' || typeof username !== 'string' || typeof password !== 'string') throw unauthorized(SHAPE);
  let parsedUrl: URL;
  try {
    parsedUrl = new URL(url);
  } catch {
    throw unauthorized(`The WebDAV server URL is not a URL. ${SHAPE}`);
  }
  if (parsedUrl.protocol !== 'https:' && parsedUrl.protocol !== 'http:') throw unauthorized('The WebDAV server URL must start with https:// (or http://).');
  if (parsedUrl.username || parsedUrl.password) throw unauthorized('Put the WebDAV username and password in their own fields, not in the URL.');
  return { url: parsedUrl.href.endsWith('/') ? parsedUrl.href : `${parsedUrl.href}/`, username, password };
}
