import { open } from 'node:fs/promises';
import yauzl from 'yauzl';

// yauzl reads a central directory one record at a time, two small reads (two trips through
// the thread pool) per entry: a 100,000-entry archive took ~10 s to list. The directory is
// one contiguous run of bytes, so it is read here in large chunks and parsed in a loop,
// making the same yauzl.Entry objects (yauzl's own helpers decode names and extra fields,
// so names, ZIP64 sizes and offsets are exactly what yauzl would give), which yauzl then
// opens as usual for the entry data. yauzl still finds and checks the end records.

const CHUNK_BYTES = 4 * 1024 * 1024;
const RECORD_BYTES = 46;
const SIGNATURE = 0x02014b50;

/** Where the central directory is, as yauzl found it (its end records are parsed by yauzl.open). */
interface DirectoryPosition {
  entryCount: number;
  /** yauzl keeps the directory's start here until entries are read */
  readEntryCursor: number;
  fileSize: number;
}

/**
 * Every central-directory record of `zip` (opened with lazyEntries and decodeStrings, not
 * yet read), as yauzl.Entry objects in directory order. Throws yauzl's messages for the
 * same defects (bad signature, hostile names, size mismatch of stored entries).
 * `onEntry` may throw to stop early (a limit).
 */
export async function readCentralDirectory(file: string, zip: yauzl.ZipFile, options: { onEntry?(entry: yauzl.Entry, index: number): void } = {}): Promise<yauzl.Entry[]> {
  const position = zip as unknown as DirectoryPosition;
  const { entryCount, fileSize } = position;
  let cursor = position.readEntryCursor;
  if (!Number.isSafeInteger(entryCount) || !Number.isSafeInteger(cursor) || cursor > fileSize) {
    throw new Error('the central directory offset lies beyond the end of the file');
  }
  const entries: yauzl.Entry[] = [];
  const handle = await open(file, 'r');
  try {
    let buffer = Buffer.alloc(0);
    let at = 0;
    /** Makes sure `need` bytes from `at` are in `buffer`, reading on in big chunks. */
    const ensure = async (need: number) => {
      if (at + need <= buffer.length) return;
      const keep = buffer.subarray(at);
      const size = Math.max(need, Math.min(CHUNK_BYTES, fileSize - cursor + keep.length));
      const next = Buffer.allocUnsafe(size);
      keep.copy(next, 0);
      let filled = keep.length;
      while (filled < need) {
        const { bytesRead } = await handle.read(next, filled, size - filled, cursor);
        if (bytesRead === 0) throw new Error('unexpected EOF');
        filled += bytesRead;
        cursor += bytesRead;
      }
      buffer = next.subarray(0, filled);
      at = 0;
    };
    for (let i = 0; i < entryCount; i++) {
      await ensure(RECORD_BYTES);
      const signature = buffer.readUInt32LE(at);
      if (signature !== SIGNATURE) throw new Error(`invalid central directory file header signature: 0x${signature.toString(16)}`);
      const nameLength = buffer.readUInt16LE(at + 28);
      const extraLength = buffer.readUInt16LE(at + 30);
      const commentLength = buffer.readUInt16LE(at + 32);
      await ensure(RECORD_BYTES + nameLength + extraLength + commentLength);
      // The variable parts are copied out: entries outlive this chunk, and a view would pin it.
      const entry = parseRecord(buffer, at, nameLength, extraLength, commentLength);
      at += RECORD_BYTES + nameLength + extraLength + commentLength;
      entries.push(entry);
      options.onEntry?.(entry, i);
    }
  } finally {
    await handle.close();
  }
  return entries;
}

function parseRecord(buffer: Buffer, at: number, nameLength: number, extraLength: number, commentLength: number): yauzl.Entry {
  const entry = new yauzl.Entry() as yauzl.Entry & Record<string, unknown>;
  entry.versionMadeBy = buffer.readUInt16LE(at + 4);
  entry.versionNeededToExtract = buffer.readUInt16LE(at + 6);
  entry.generalPurposeBitFlag = buffer.readUInt16LE(at + 8);
  entry.compressionMethod = buffer.readUInt16LE(at + 10);
  entry.lastModFileTime = buffer.readUInt16LE(at + 12);
  entry.lastModFileDate = buffer.readUInt16LE(at + 14);
  entry.crc32 = buffer.readUInt32LE(at + 16);
  entry.compressedSize = buffer.readUInt32LE(at + 20);
  entry.uncompressedSize = buffer.readUInt32LE(at + 24);
  entry.fileNameLength = nameLength;
  entry.extraFieldLength = extraLength;
  entry.fileCommentLength = commentLength;
  entry.internalFileAttributes = buffer.readUInt16LE(at + 36);
  entry.externalFileAttributes = buffer.readUInt32LE(at + 38);
  entry.relativeOffsetOfLocalHeader = buffer.readUInt32LE(at + 42);
  if (entry.generalPurposeBitFlag & 0x40) throw new Error('strong encryption is not supported');

  const start = at + RECORD_BYTES;
  const variable = Buffer.from(buffer.subarray(start, start + nameLength + extraLength + commentLength));
  entry.fileNameRaw = variable.subarray(0, nameLength);
  entry.extraFieldRaw = variable.subarray(nameLength, nameLength + extraLength);
  entry.fileCommentRaw = variable.subarray(nameLength + extraLength);
  entry.extraFields = extraLength === 0 ? [] : yauzl.parseExtraFields(entry.extraFieldRaw as Buffer);

  const isUtf8 = (entry.generalPurposeBitFlag & 0x800) !== 0;
  entry.fileComment = commentLength === 0 ? '' : decodeComment(entry.fileCommentRaw as Buffer, isUtf8);
  entry.fileName = decodeName(entry);
  const problem = yauzl.validateFileName(entry.fileName);
  if (problem !== null) throw new Error(problem);
  entry.comment = entry.fileComment;

  const zip64 = entry.extraFields.find((field) => field.id === 0x0001);
  if (zip64) {
    const data = zip64.data;
    let index = 0;
    const wide = (what: string) => {
      if (index + 8 > data.length) throw new Error(`zip64 extended information extra field does not include ${what}`);
      const value = data.readUInt32LE(index + 4) * 0x100000000 + data.readUInt32LE(index);
      index += 8;
      return value;
    };
    if (entry.uncompressedSize === 0xffffffff) entry.uncompressedSize = wide('uncompressed size');
    if (entry.compressedSize === 0xffffffff) entry.compressedSize = wide('compressed size');
    if (entry.relativeOffsetOfLocalHeader === 0xffffffff) entry.relativeOffsetOfLocalHeader = wide('relative header offset');
  }
  // as yauzl's validateEntrySizes
  if (entry.compressionMethod === 0) {
    const expected = entry.uncompressedSize + (entry.isEncrypted() ? 12 : 0);
    if (entry.compressedSize !== expected) {
      throw new Error(`compressed/uncompressed size mismatch for stored file: ${entry.compressedSize} != ${entry.uncompressedSize}`);
    }
  }
  return entry;
}

/** Printable ASCII means the same in CP437 and UTF-8: decoded at once; anything else the way yauzl does. */
function decodeName(entry: yauzl.Entry & Record<string, unknown>): string {
  const raw = entry.fileNameRaw as Buffer;
  const hasUnicodeField = entry.extraFields.some((field) => field.id === 0x7075);
  if (!hasUnicodeField && isPrintableAscii(raw)) return raw.toString('latin1').replace(/\\/g, '/');
  return yauzl.getFileNameLowLevel(entry.generalPurposeBitFlag, raw, entry.extraFields, false);
}

function decodeComment(raw: Buffer, isUtf8: boolean): string {
  if (isUtf8 || isPrintableAscii(raw)) return raw.toString(isUtf8 ? 'utf8' : 'latin1');
  // yauzl decodes CP437 by table; getFileNameLowLevel without extra fields does exactly that
  return yauzl.getFileNameLowLevel(0, raw, [], true);
}

function isPrintableAscii(raw: Buffer): boolean {
  for (let i = 0; i < raw.length; i++) {
    const byte = raw[i]!;
    if (byte < 0x20 || byte > 0x7e) return false;
  }
  return true;
}
