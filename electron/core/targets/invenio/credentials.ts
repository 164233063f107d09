import { unauthorized } from '../../errors.js';

/**
 * One InvenioRDM account: an instance and a personal access token for it (the instance's
 * Applications → Personal access tokens, scope `deposit:write`). The target's "token" is the
 * bare token, for the instance configured with `--invenio-url` / FERRY_INVENIO_URL, or JSON
 * naming its own instance, so several instances are several keychain entries of the one
 * target and a token only goes to the instance that issued it (as dataverse/credentials.ts):
 *
 *   {"url":"https://repository.example.org","token":"<personal access token>"}
 */
export interface InvenioAccount {
  /** the instance's root, ending in '/' */
  url: string;
  token: string;
}

const SHAPE = 'The InvenioRDM token is a personal access token, given with its instance as JSON like {"url":"https://repository.example.org","token":"<personal access token>"}.';

export function parseInvenioToken(token: string, defaultUrl: string): InvenioAccount {
  const trimmed = token.trim();
  if (!trimmed.startsWith('{')) {
    if (!trimmed || /\s/.test(trimmed)) throw unauthorized(SHAPE);
    if (!defaultUrl) throw unauthorized(`No InvenioRDM instance is configured (--invenio-url). ${SHAPE}`);
    return { url: instanceUrl(defaultUrl), token: trimmed };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(trimmed);
  } catch {
    throw unauthorized(SHAPE);
  }
  const { url, token: apiToken } = (parsed ?? {}) as Record<string, unknown>;
  if (typeof apiToken !== 'string' || !apiToken.trim()) throw unauthorized(SHAPE);
  const chosen = typeof url === 'string' ? url : defaultUrl;
  if (!chosen) throw unauthorized(SHAPE);
  return { url: instanceUrl(chosen), token: apiToken.trim() };
}

function instanceUrl(raw: string): string {
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw unauthorized(`The InvenioRDM instance URL '${raw}' is not a URL. ${SHAPE}`);
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw unauthorized('The InvenioRDM instance URL must start with https:// (or http://).');
  if (parsed.username || parsed.password) throw unauthorized('Put the InvenioRDM token in its own field, not in the URL.');
  const path = parsed.pathname.replace(/\/+$/, '').replace(/\/api$/, '');
  return `${parsed.origin}${path}/`;
}
