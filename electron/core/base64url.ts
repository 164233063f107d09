// base64url (RFC 4648 §5, unpadded) of text whose characters are bytes (0–255): ASCII
// paths are their own UTF-8, so ids of 100,000 listed paths are encoded from the strings as
// they are, with no Buffer made per id. One alphabet and one way to encode, for the local
// target's ids (as strings) and the offline index's (written into one buffer of all ids).

export const BASE64URL_DIGITS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const DIGIT_BYTES = Buffer.from(BASE64URL_DIGITS, 'latin1');

/** base64url of `bytes` (a string of chars 0–255), as a string. */
export function byteStringToBase64url(bytes: string): string {
  const length = bytes.length;
  let out = '';
  let i = 0;
  for (; i + 2 < length; i += 3) {
    const a = bytes.charCodeAt(i);
    const b = bytes.charCodeAt(i + 1);
    const c = bytes.charCodeAt(i + 2);
    out += BASE64URL_DIGITS[a >> 2]! + BASE64URL_DIGITS[((a & 3) << 4) | (b >> 4)]! + BASE64URL_DIGITS[((b & 15) << 2) | (c >> 6)]! + BASE64URL_DIGITS[c & 63]!;
  }
  if (i < length) {
    const a = bytes.charCodeAt(i);
    const b = i + 1 < length ? bytes.charCodeAt(i + 1) : 0;
    out += BASE64URL_DIGITS[a >> 2]! + BASE64URL_DIGITS[((a & 3) << 4) | (b >> 4)]!;
    if (i + 1 < length) out += BASE64URL_DIGITS[(b & 15) << 2]!;
  }
  return out;
}

/** base64url of `bytes` (a string of chars 0–255) written into `out` at `at`; returns the end. */
export function writeByteStringAsBase64url(bytes: string, out: Uint8Array, at: number): number {
  const length = bytes.length;
  let i = 0;
  for (; i + 2 < length; i += 3) {
    const n = (bytes.charCodeAt(i) << 16) | (bytes.charCodeAt(i + 1) << 8) | bytes.charCodeAt(i + 2);
    out[at++] = DIGIT_BYTES[n >>> 18]!;
    out[at++] = DIGIT_BYTES[(n >>> 12) & 63]!;
    out[at++] = DIGIT_BYTES[(n >>> 6) & 63]!;
    out[at++] = DIGIT_BYTES[n & 63]!;
  }
  if (i < length) {
    const n = (bytes.charCodeAt(i) << 16) | (i + 1 < length ? bytes.charCodeAt(i + 1) << 8 : 0);
    out[at++] = DIGIT_BYTES[n >>> 18]!;
    out[at++] = DIGIT_BYTES[(n >>> 12) & 63]!;
    if (i + 1 < length) out[at++] = DIGIT_BYTES[(n >>> 6) & 63]!;
  }
  return at;
}
