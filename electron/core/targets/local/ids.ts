// Resource ids of the `local` target: a fixed prefix + base64url of the '/'-joined path
// relative to the workspace root. Opaque to clients, stable while the file stays put,
// safe in one URL path segment and free of '.', so `<id>.json/` splits unambiguously.
// The name's bytes are encoded exactly as stored (NFC and NFD spellings stay distinct).

import { notFound } from '../../errors.js';
import { checkRelativePath } from './safe-path.js';

const PREFIX = 'loc_';
const BASE64URL = /^[A-Za-z0-9_-]+$/;

export function encodeLocalId(relativePath: string): string {
  return PREFIX + Buffer.from(relativePath, 'utf8').toString('base64url');
}

/**
 * The relative path an id names, or a 404 FerryError for anything that is not an id this
 * target made: wrong prefix, non-canonical base64, invalid UTF-8, or a path that would
 * leave the root (`..`, absolute, NUL). Existence is checked by the caller.
 */
export function decodeLocalId(id: string): string {
  const unknown = () => notFound(`There is no local resource with id '${id.slice(0, 80)}'. List the target to find valid ids.`);
  if (typeof id !== 'string' || !id.startsWith(PREFIX)) throw unknown();
  const body = id.slice(PREFIX.length);
  if (!BASE64URL.test(body)) throw unknown();
  const bytes = Buffer.from(body, 'base64url');
  // Canonical form only: one path has exactly one id.
  if (bytes.toString('base64url') !== body) throw unknown();
  const relativePath = bytes.toString('utf8');
  if (Buffer.from(relativePath, 'utf8').toString('base64url') !== body) throw unknown();
  if (checkRelativePath(relativePath) !== null) throw unknown();
  return relativePath;
}
