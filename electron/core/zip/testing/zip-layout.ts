// Test support: where the parts of a well-formed ZIP sit (end record, central records,
// local headers, entry data), so hostile mutations of archives made by real tools (yazl,
// Info-ZIP) can cut or patch exactly the field they mean to.

export interface LaidOutEntry {
  name: string;
  /** the central record: its start, its whole length */
  centralOffset: number;
  centralLength: number;
  localOffset: number;
  /** the local header's length (fixed part, name and extra) */
  localLength: number;
  dataOffset: number;
  compressedSize: number;
}

export interface ZipLayout {
  endOffset: number;
  directoryOffset: number;
  directorySize: number;
  entries: LaidOutEntry[];
}

/** Field offsets inside a central record and a local header (APPNOTE 4.3.7, 4.3.12). */
export const CENTRAL = { flags: 8, method: 10, time: 12, crc: 16, compressedSize: 20, size: 24, nameLength: 28, extraLength: 30, commentLength: 32, attributes: 38, localOffset: 42 } as const;
export const LOCAL = { flags: 6, method: 8, crc: 14, compressedSize: 18, size: 22, nameLength: 26, extraLength: 28 } as const;
export const END = { diskEntries: 8, entries: 10, directorySize: 12, directoryOffset: 16, commentLength: 20 } as const;

/** Throws on anything it cannot lay out: it is for archives known to be well formed. */
export function zipLayout(zip: Buffer): ZipLayout {
  let endOffset = -1;
  for (let i = zip.length - 22; i >= Math.max(0, zip.length - 22 - 0xffff); i--) {
    if (zip.readUInt32LE(i) === 0x06054b50) {
      endOffset = i;
      break;
    }
  }
  if (endOffset < 0) throw new Error('no end of central directory record');
  const count = zip.readUInt16LE(endOffset + END.entries);
  const directorySize = zip.readUInt32LE(endOffset + END.directorySize);
  const directoryOffset = zip.readUInt32LE(endOffset + END.directoryOffset);
  const entries: LaidOutEntry[] = [];
  let at = directoryOffset;
  for (let i = 0; i < count; i++) {
    if (zip.readUInt32LE(at) !== 0x02014b50) throw new Error(`no central record at ${at}`);
    const nameLength = zip.readUInt16LE(at + CENTRAL.nameLength);
    const centralLength = 46 + nameLength + zip.readUInt16LE(at + CENTRAL.extraLength) + zip.readUInt16LE(at + CENTRAL.commentLength);
    const localOffset = zip.readUInt32LE(at + CENTRAL.localOffset);
    const localLength = 30 + zip.readUInt16LE(localOffset + LOCAL.nameLength) + zip.readUInt16LE(localOffset + LOCAL.extraLength);
    entries.push({
      name: zip.toString('utf8', at + 46, at + 46 + nameLength),
      centralOffset: at,
      centralLength,
      localOffset,
      localLength,
      dataOffset: localOffset + localLength,
      compressedSize: zip.readUInt32LE(at + CENTRAL.compressedSize),
    });
    at += centralLength;
  }
  return { endOffset, directoryOffset, directorySize, entries };
}
