import { isUtf8 } from 'node:buffer';
import yauzl from 'yauzl';
import { crc32 } from '../crc32.js';

const UTF8_FLAG = 0x800;
const UNICODE_PATH_FIELD = 0x7075;

type ExtraField = { id: number; data: Buffer };

/**
 * An entry's name as its writer meant it, the one decoding of names in Ferry (uploads and
 * the offline library alike):
 * - an Info-ZIP Unicode Path field (0x7075, version 1) whose CRC-32 matches the plain name
 *   gives the UTF-8 name (a stale field, CRC not matching, is ignored, as the spec says);
 * - flag bit 11: UTF-8;
 * - plain ASCII is ASCII: Python's zipfile and Info-ZIP write ASCII names without the flag,
 *   and a CP437 reading would turn TAB, LF or BEL into ○ ◙ • (a name nobody wrote, silently);
 * - other bytes that are valid UTF-8: UTF-8, as Info-ZIP's `zip` on Linux writes UTF-8 names
 *   without the flag (a CP437 reading of such bytes is never what anyone typed);
 * - anything else: CP437, the spec's default.
 * Control characters are decoded as what they are; the policy refuses them (entry-policy.ts).
 */
export function decodeEntryName(generalPurposeBitFlag: number, raw: Buffer, extraFields: readonly ExtraField[]): string {
  const unicodePath = applicableUnicodePath(raw, extraFields);
  if (unicodePath !== null) return unicodePath.toString('utf8');
  if ((generalPurposeBitFlag & UTF8_FLAG) !== 0) return raw.toString('utf8');
  if (isAscii(raw) || isUtf8(raw)) return raw.toString(isAscii(raw) ? 'latin1' : 'utf8');
  // yauzl's CP437 table (without extra fields and strict: no other change to the name)
  return yauzl.getFileNameLowLevel(0, raw, [], true);
}

/**
 * True when the name the entry claims is UTF-8 is not valid UTF-8: overlong encodings of
 * '.' and '/' (C0 AE, C0 AF, E0 80 AE) and other broken bytes. Decoding would silently turn
 * them into U+FFFD (a name nobody wrote), and a less careful tool may read them as "../".
 * Checked for the name under flag bit 11, and for an Info-ZIP Unicode Path field that
 * applies (version 1, CRC-32 of the plain name matching).
 */
export function hasInvalidUtf8Name(generalPurposeBitFlag: number, raw: Buffer, extraFields: readonly ExtraField[]): boolean {
  const unicodePath = applicableUnicodePath(raw, extraFields);
  if (unicodePath !== null) return !isUtf8(unicodePath);
  return (generalPurposeBitFlag & UTF8_FLAG) !== 0 && !isUtf8(raw);
}

/** The UTF-8 bytes of the first Unicode Path field that applies to `raw`, or null. */
function applicableUnicodePath(raw: Buffer, extraFields: readonly ExtraField[]): Buffer | null {
  for (const field of extraFields) {
    if (field.id !== UNICODE_PATH_FIELD || field.data.length < 6 || field.data[0] !== 1) continue;
    if (field.data.readUInt32LE(1) !== crc32(raw) >>> 0) continue;
    return field.data.subarray(5);
  }
  return null;
}

function isAscii(raw: Buffer): boolean {
  for (let i = 0; i < raw.length; i++) if (raw[i]! > 0x7f) return false;
  return true;
}

const CONTROL_NAMES: Record<number, string> = { 0x00: 'NUL', 0x07: 'BEL', 0x08: 'BS', 0x09: 'TAB', 0x0a: 'LF', 0x0b: 'VT', 0x0c: 'FF', 0x0d: 'CR', 0x1b: 'ESC', 0x7f: 'DEL' };

/**
 * The first control character of `name` (C0, DEL, C1), named as a person knows it ("TAB",
 * "LF", "U+0085"), or null. A file name holding one is legal on some systems, invisible or
 * line-breaking in every listing, and not writable on others.
 */
export function controlCharacterIn(name: string): string | null {
  for (let i = 0; i < name.length; i++) {
    const code = name.charCodeAt(i);
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return CONTROL_NAMES[code] ?? `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
  }
  return null;
}

/**
 * A name as shown in a sentence: in double quotes, control characters escaped (\t, \n, \0,
 * \u0085) so the sentence stays one readable line, cut at 120 characters.
 */
export function shownName(name: string): string {
  const escaped = JSON.stringify(name.length > 120 ? `${name.slice(0, 120)}…` : name);
  return escaped.replace(/[\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
