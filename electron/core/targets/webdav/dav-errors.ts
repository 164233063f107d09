import { FerryError, badRequest, forbidden, notFound, tooLarge, unauthorized } from '../../errors.js';

/**
 * WebDAV failures as FerryErrors whose message a person can act on. A SabreDAV server
 * (Nextcloud, ownCloud, plain SabreDAV) says why in its error body —
 * `<s:message>` and, from Nextcloud/ownCloud's InvalidPath and Forbidden exceptions,
 * `<o:reason>` — and that sentence is passed on; other servers' bodies (Apache's HTML,
 * rclone's plain text) are not.
 */
export const UNAUTHORIZED = 'The WebDAV token is invalid or expired: the server refused the username or app password.';

/** The server's own sentence from a Sabre error body, or null. */
export function sabreReason(body: string): string | null {
  if (!/<[a-z]+:error\b/i.test(body)) return null;
  const pick = (tag: string) => new RegExp(`<[a-z]+:${tag}(?:\\s[^>]*)?>([\\s\\S]*?)</[a-z]+:${tag}>`, 'i').exec(body)?.[1];
  const text = (pick('reason') ?? pick('message') ?? '').replace(/<[^>]*>/g, '').trim();
  if (!text) return null;
  const decoded = text.replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
  return decoded.length > 300 ? `${decoded.slice(0, 297)}...` : decoded;
}

/** Reads a failed answer's body (small, bounded) for sabreReason; null when there is none. */
export async function reasonOf(response: { text?(): Promise<string> } | undefined): Promise<string | null> {
  if (!response || typeof response.text !== 'function') return null;
  try {
    return sabreReason((await response.text()).slice(0, 64 * 1024));
  } catch {
    return null;
  }
}

/** How a sentence names a path on the server. */
export function shownName(remotePath: string): string {
  return remotePath === '/' ? 'the top folder' : `'${remotePath}'`;
}

/** The webdav client's errors (`status`, `response`) and network failures → FerryError. */
export function toFerryError(error: unknown, remotePath: string, reason: string | null = null): FerryError {
  if (error instanceof FerryError) return error;
  const status = (error as { status?: number }).status ?? (error as { response?: { status?: number } }).response?.status;
  const headers = (error as { response?: { headers?: { get?(name: string): string | null } } }).response?.headers;
  const retryAfterHeader = typeof headers?.get === 'function' ? headers.get('retry-after') : null;
  const retryAfter = retryAfterHeader && Number.isFinite(Number(retryAfterHeader)) ? Number(retryAfterHeader) : undefined;
  const name = shownName(remotePath);
  const because = reason ? `: ${reason.replace(/\.$/, '')}` : '';
  switch (status) {
    case undefined: {
      const code = (error as { cause?: { code?: string }; code?: string }).cause?.code ?? (error as { code?: string }).code;
      return new FerryError(502, 'upstream_unavailable', `The WebDAV server could not be reached${code ? ` (${code})` : ''}.`);
    }
    case 400:
      return badRequest(`The WebDAV server refused ${name}${because || ' as a bad request (HTTP 400)'}.`);
    case 401:
      return unauthorized(UNAUTHORIZED);
    case 403:
      return forbidden(`The WebDAV account may not do this to ${name}${because}.`);
    case 404:
      return notFound(`The WebDAV server has no ${name}, or the account cannot see it.`);
    case 405:
    case 409:
    case 412:
    case 423:
      return new FerryError(409, 'conflict', `The WebDAV server refused ${name} (HTTP ${status}${status === 423 ? ': locked' : ''})${because}.`);
    case 413:
    case 507:
      return tooLarge(`The WebDAV server has no room for ${name} (HTTP ${status})${because}.`);
    case 429:
      return new FerryError(429, 'rate_limited', `The WebDAV server is limiting the request rate; try again${retryAfter ? ` in ${retryAfter} s` : ' later'}.`, retryAfter);
    default:
      if (status >= 500) return new FerryError(status === 503 ? 503 : 502, status === 503 ? 'upstream_unavailable' : 'upstream_error', `The WebDAV server failed with HTTP ${status}${because}.`, retryAfter);
      return new FerryError(502, 'upstream_error', `The WebDAV server answered HTTP ${status} for ${name}${because}.`);
  }
}
