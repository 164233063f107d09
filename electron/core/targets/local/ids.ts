// Resource ids of the `local` target: a fixed prefix + base64url of the '/'-joined path
// relative to the workspace root. Opaque to clients, stable while the file stays put,
// safe in one URL path segment and free of '.', so `<id>.json/` splits unambiguously.
// The name's bytes are encoded exactly as stored (NFC and NFD spellings stay distinct).

import { notFound } from '../../errors.js';
import { byteStringToBase64url } from '../../base64url.js';
import { isAscii } from '../../name-fold.js';
import { checkRelativePath } from './safe-path.js';

const PREFIX = 'loc_';
const BASE64URL = /^[A-Za-z0-9_-]+$/;

export function encodeLocalId(relativePath: string): string {
  return PREFIX + Buffer.from(relativePath, 'utf8').toString('base64url');
}

/**
 * encodeLocalId for the children of one folder, with the folder's part encoded once.
 * base64 of (A + B) is base64(A) + base64(B) whenever A's length is a multiple of 3 bytes,
 * so the folder's bytes up to the last whole group are encoded once and only the 0–2 bytes
 * left over, plus the child's name, per child. Listings run to 100,000 children.
 */
export function childIdEncoder(folderPath: string): (name: string) => string {
  const folderBytes = folderPath === '' ? Buffer.alloc(0) : Buffer.from(`${folderPath}/`, 'utf8');
  const whole = folderBytes.length - (folderBytes.length % 3);
  const head = PREFIX + folderBytes.toString('base64url', 0, whole);
  const carried = folderBytes.subarray(whole);
  // the 0–2 carried bytes as one char each, to be prefixed to ASCII names (one byte per char)
  const carriedChars = String.fromCharCode(...carried);
  return (name) => {
    if (isAscii(name)) return head + byteStringToBase64url(carriedChars + name);
    return head + Buffer.concat([carried, Buffer.from(name, 'utf8')]).toString('base64url');
  };
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
