import { isUtf8 } from 'node:buffer';
import yauzl from 'yauzl';

const UTF8_FLAG = 0x800;

/**
 * An entry's name as its author meant it. The ZIP spec says: UTF-8 when flag bit 11 is set
 * (or an Info-ZIP Unicode Path field is present), CP437 otherwise. But Info-ZIP's `zip` on
 * Linux writes UTF-8 names without the flag, so a name that is valid UTF-8 and not plain
 * ASCII is read as UTF-8: a CP437 reading of such bytes is never what anyone typed.
 */
export function decodeEntryName(generalPurposeBitFlag: number, raw: Buffer, extraFields: { id: number; data: Buffer }[]): string {
  const flagged = (generalPurposeBitFlag & UTF8_FLAG) !== 0 || extraFields.some((field) => field.id === 0x7075);
  if (!flagged && raw.some((byte) => byte > 0x7f) && isUtf8(raw)) return raw.toString('utf8');
  return yauzl.getFileNameLowLevel(generalPurposeBitFlag, raw, extraFields, true);
}
