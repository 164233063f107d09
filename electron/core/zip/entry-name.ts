import { isUtf8 } from 'node:buffer';
import yauzl from 'yauzl';
import { crc32 } from '../crc32.js';

const UTF8_FLAG = 0x800;
const UNICODE_PATH_FIELD = 0x7075;

/**
 * An entry's name as its author meant it. The ZIP spec says: UTF-8 when flag bit 11 is set
 * (or an Info-ZIP Unicode Path field is present), CP437 otherwise. But Info-ZIP's `zip` on
 * Linux writes UTF-8 names without the flag, so a name that is valid UTF-8 and not plain
 * ASCII is read as UTF-8: a CP437 reading of such bytes is never what anyone typed.
 */
export function decodeEntryName(generalPurposeBitFlag: number, raw: Buffer, extraFields: { id: number; data: Buffer }[]): string {
  const flagged = (generalPurposeBitFlag & UTF8_FLAG) !== 0 || extraFields.some((field) => field.id === UNICODE_PATH_FIELD);
  if (!flagged && raw.some((byte) => byte > 0x7f) && isUtf8(raw)) return raw.toString('utf8');
  return yauzl.getFileNameLowLevel(generalPurposeBitFlag, raw, extraFields, true);
}

/**
 * True when the name the entry claims is UTF-8 is not valid UTF-8: overlong encodings of
 * '.' and '/' (C0 AE, C0 AF, E0 80 AE) and other broken bytes. Decoding would silently turn
 * them into U+FFFD (a name nobody wrote), and a less careful tool may read them as "../".
 * Checked for the name under flag bit 11, and for an Info-ZIP Unicode Path field that
 * applies (version 1, CRC-32 of the plain name matching), as yauzl would use it.
 */
export function hasInvalidUtf8Name(generalPurposeBitFlag: number, raw: Buffer, extraFields: { id: number; data: Buffer }[]): boolean {
  for (const field of extraFields) {
    if (field.id !== UNICODE_PATH_FIELD || field.data.length < 6 || field.data[0] !== 1) continue;
    if (field.data.readUInt32LE(1) !== crc32(raw) >>> 0) continue;
    return !isUtf8(field.data.subarray(5));
  }
  return (generalPurposeBitFlag & UTF8_FLAG) !== 0 && !isUtf8(raw);
}
