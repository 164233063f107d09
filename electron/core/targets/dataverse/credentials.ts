import { unauthorized } from '../../errors.js';

/**
 * One Dataverse account: an installation, an API token for it, and the collection new
 * datasets go into. The target's one "token" (kept in the keychain like any other) is either
 *
 *   - the bare API token, for the installation Ferry is configured with
 *     (`--dataverse-url` / FERRY_DATAVERSE_URL, default https://dataverse.harvard.edu), or
 *   - JSON naming the installation with it, so Harvard Dataverse and DataverseNO are two
 *     accounts of the one target at once, as WebDAV servers are (webdav/credentials.ts):
 *     {"url":"https://dataverse.no","token":"xxxxxxxx-…","collection":"myinstitution"}
 *
 * Why the URL travels with the token: a Dataverse API token carries its user's full rights
 * on exactly one installation. Binding the two in one keychain entry means a token is only
 * ever sent to the installation it was issued by, never to whichever URL happens to be
 * configured. The token never appears in a message.
 */
export interface DataverseAccount {
  /** the installation's root, ending in '/': "https://dataverse.no/" */
  url: string;
  token: string;
  /** alias of the collection new datasets are created in (`:root` by default) */
  collection: string;
}

const SHAPE = 'The Dataverse token is the API token from your account page (Account → API Token), or JSON like {"url":"https://dataverse.no","token":"<API token>","collection":"<collection alias>"}.';

export function parseDataverseToken(token: string, defaultUrl: string): DataverseAccount {
  const trimmed = token.trim();
  if (!trimmed.startsWith('{')) {
    if (!trimmed || /\s/.test(trimmed)) throw unauthorized(SHAPE);
    return { url: installationUrl(defaultUrl), token: trimmed, collection: ':root' };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(trimmed);
  } catch {
    throw unauthorized(SHAPE);
  }
  const { url, token: apiToken, collection } = (parsed ?? {}) as Record<string, unknown>;
  if (typeof apiToken !== 'string' || !apiToken.trim() || (url !== undefined && typeof url !== 'string') || (collection !== undefined && typeof collection !== 'string')) throw unauthorized(SHAPE);
  return { url: installationUrl(typeof url === 'string' ? url : defaultUrl), token: apiToken.trim(), collection: (collection as string | undefined)?.trim() || ':root' };
}

function installationUrl(raw: string): string {
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw unauthorized(`The Dataverse installation URL '${raw}' is not a URL. ${SHAPE}`);
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw unauthorized('The Dataverse installation URL must start with https:// (or http://).');
  if (parsed.username || parsed.password) throw unauthorized('Put the Dataverse API token in its own field, not in the URL.');
  // the installation's root: an /api suffix someone pasted is dropped, the API paths add it
  const path = parsed.pathname.replace(/\/+$/, '').replace(/\/api$/, '');
  return `${parsed.origin}${path}/`;
}
