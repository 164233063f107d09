// Which token a request carries for a target (API.md "Security gate"). The one module that
// reads credentials from headers, so the rules live in one place:
// - `access-key` targets (local folders, the offline library): the token header, or
//   `Authorization: Bearer`, must be Ferry's access key (compared in constant time).
// - `remote` targets: the token header when sent; otherwise `Authorization: Bearer <access
//   key>` stands for the token kept in the keychain for that target.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { FerryCore } from '../core/ferry-core.js';
import { unauthorized } from '../core/errors.js';
import { tokenAccount } from '../core/keychain/port.js';
import type { Target } from '../core/target.js';
import { rememberSecret } from './request-secrets.js';

export type TokenRole = 'source' | 'destination';
export const tokenHeaderName = (role: TokenRole) => `service-${role}-token` as const;

type Headers = FastifyRequest['headers'];

function headerValue(headers: Headers, name: string): string | undefined {
  const value = headers[name];
  const first = Array.isArray(value) ? value[0] : value;
  const trimmed = first?.trim();
  return trimmed ? trimmed : undefined;
}

export function tokenFromHeader(headers: Headers, role: TokenRole): string | undefined {
  return headerValue(headers, tokenHeaderName(role));
}

export function bearerToken(headers: Headers): string | undefined {
  const authorization = headerValue(headers, 'authorization');
  const match = authorization ? /^Bearer\s+(\S+)$/i.exec(authorization) : null;
  return match?.[1];
}

/**
 * Constant-time equality. Both sides are hashed first, so the buffers always have equal
 * length and the comparison leaks neither content nor length.
 */
export function secretsEqual(candidate: string, secret: string): boolean {
  const a = createHash('sha256').update(candidate).digest();
  const b = createHash('sha256').update(secret).digest();
  return timingSafeEqual(a, b);
}

export function isAccessKey(core: FerryCore, candidate: string | undefined): boolean {
  return candidate !== undefined && secretsEqual(candidate, core.accessKey);
}

const ACCESS_KEY_INVALID = 'The access key is invalid. The current one is in endpoint.json in the Ferry data directory.';

/** For routes only the app itself (holding the access key) may use: /app/*, the job list and events. */
export function requireAccessKey(core: FerryCore, request: FastifyRequest): void {
  const candidate = bearerToken(request.headers);
  if (candidate === undefined) throw unauthorized('Send the access key as Authorization: Bearer <key> (see endpoint.json).');
  if (!isAccessKey(core, candidate)) throw unauthorized(ACCESS_KEY_INVALID);
}

/** The token to hand to `target` for this request, or a 401 FerryError saying what to send. */
export async function resolveTargetToken(core: FerryCore, target: Target, request: FastifyRequest, role: TokenRole): Promise<string> {
  const token = await findTargetToken(core, target, request, role);
  rememberSecret(request, token); // so a logged error for this request is scrubbed of it
  return token;
}

async function findTargetToken(core: FerryCore, target: Target, request: FastifyRequest, role: TokenRole): Promise<string> {
  const header = tokenHeaderName(role);
  const sent = tokenFromHeader(request.headers, role);
  const bearer = bearerToken(request.headers);

  if (target.info.credential === 'access-key') {
    const candidate = sent ?? bearer;
    if (candidate === undefined) throw unauthorized(`Send the access key in ${header} or Authorization: Bearer (see endpoint.json).`);
    if (!isAccessKey(core, candidate)) throw unauthorized(ACCESS_KEY_INVALID);
    return core.accessKey;
  }

  if (sent !== undefined) return sent;
  if (bearer !== undefined) {
    if (!isAccessKey(core, bearer)) throw unauthorized(ACCESS_KEY_INVALID);
    const stored = await core.secrets.get(tokenAccount(target.info.name));
    if (!stored) throw unauthorized(`No ${target.info.readable_name} token is stored; add one in Accounts or send ${header}.`);
    return stored;
  }
  throw unauthorized(
    `Send your ${target.info.readable_name} token in ${header}, or the access key as Authorization: Bearer to use the stored one.`,
  );
}

/** Every credential the request carries, for checking against a job's owners. */
export function presentedTokens(request: FastifyRequest): string[] {
  return [tokenFromHeader(request.headers, 'source'), tokenFromHeader(request.headers, 'destination'), bearerToken(request.headers)].filter(
    (token): token is string => token !== undefined,
  );
}
