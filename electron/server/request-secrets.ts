// The credentials a request carried or made the server use (a token from the keychain, the
// access key), remembered per request so that an error logged for it can be scrubbed of
// them: an unexpected error's message or stack may quote a URL or header with the token.
import type { FastifyRequest } from 'fastify';

const seen = new WeakMap<object, Set<string>>();
const HEADERS = ['authorization', 'service-source-token', 'service-destination-token', 'cookie'];
/** query parameters services use for tokens (figshare `?token=`, GitLab `private_token`) */
const QUERY_TOKEN = /([?&;](?:token|access_token|private_token|api_key|key)=)[^&#\s"']+/gi;

export function rememberSecret(request: FastifyRequest, secret: string | null | undefined): void {
  if (!secret) return;
  let set = seen.get(request.raw);
  if (!set) seen.set(request.raw, (set = new Set()));
  set.add(secret);
}

function secretsOf(request: FastifyRequest): string[] {
  const out = new Set(seen.get(request.raw) ?? []);
  for (const name of HEADERS) {
    const value = request.headers[name];
    for (const text of Array.isArray(value) ? value : value ? [value] : []) {
      out.add(text.trim());
      const bare = /^\S+\s+(\S+)$/.exec(text.trim())?.[1]; // "Bearer <key>"
      if (bare) out.add(bare);
    }
  }
  return [...out].filter((secret) => secret.length >= 6).sort((a, b) => b.length - a.length);
}

export function scrub(text: string, request: FastifyRequest): string {
  let out = text.replace(QUERY_TOKEN, '$1[redacted]');
  for (const secret of secretsOf(request)) out = out.split(secret).join('[redacted]');
  return out;
}

/** What the log gets for an unexpected error: its type, message and stack, scrubbed. */
export function scrubbedError(error: unknown, request: FastifyRequest): Record<string, unknown> {
  if (!(error instanceof Error)) return { message: scrub(String(error), request) };
  const cause = (error as { cause?: unknown }).cause;
  return {
    type: error.name,
    message: scrub(error.message, request),
    stack: error.stack ? scrub(error.stack, request) : undefined,
    ...(cause !== undefined ? { cause: scrubbedError(cause, request) } : {}),
  };
}
