import { open, type FileHandle } from 'node:fs/promises';
import yauzl from 'yauzl';
import { decodeEntryName } from './entry-name.js';

// yauzl reads a central directory one record at a time, two small reads (two trips through
// the thread pool) per entry: a 100,000-entry archive took ~10 s to list. The directory is
// one contiguous run of bytes, so it is read here in large chunks and parsed in a loop,
// making the same yauzl.Entry objects (ZIP64 sizes and offsets exactly as yauzl gives them),
// which yauzl then opens as usual for the entry data. The end records are checked here too
// (checkEndRecords, before open-archive.ts lets yauzl follow them). The one reader of central directories in Ferry: uploads and the
// offline library both read theirs here. Names are decoded by entry-name.ts and judged by
// the policy (entry-policy.ts), never here: a hostile name is read as it is, then refused.

const CHUNK_BYTES = 4 * 1024 * 1024;
const RECORD_BYTES = 46;
const DIRECTORY_SIGNATURE = 0x02014b50;

/** Where the central directory is, as yauzl found it (its end records are parsed by yauzl.open); offsets within the archive. */
interface DirectoryPosition {
  entryCount: number;
  /** yauzl keeps the directory's start here until entries are read */
  readEntryCursor: number;
  fileSize: number;
}

/**
 * The central directory in columns: what a listing needs of each record (its name, sizes,
 * offset and flags), with no object per record. The full yauzl.Entry of a record (to open
 * its bytes, for its date or CRC) is parsed from the kept directory bytes on first use.
 */
export class DirectoryTable {
  readonly names: string[];
  /**
   * 1 when the name is plain: printable ASCII, no backslash, not absolute, and no segment
   * that is empty (but a folder's trailing slash), '.', '..' or only dots and spaces. Such
   * a name needs none of the checks and clean-ups of a hostile or odd one (but its length).
   */
  readonly plain: Uint8Array;
  readonly flags: Uint16Array;
  readonly method: Uint16Array;
  /** the low byte of "version needed to extract": 20 is 2.0 */
  readonly versionNeeded: Uint8Array;
  readonly externalAttributes: Uint32Array;
  readonly compressedSize: Float64Array;
  readonly uncompressedSize: Float64Array;
  readonly localHeaderOffset: Float64Array;
  /** where each record is: the chunk and the offset in it (filled by scanCentralDirectory) */
  readonly chunkOf: Uint32Array;
  readonly at: Uint32Array;
  /** records parsed whole so far (odd ones by the scanner, the rest on first use) */
  readonly parsed: (yauzl.Entry | undefined)[];
  /** where the directory starts in the archive: every entry's bytes lie before it */
  directoryOffset = 0;

  constructor(
    readonly count: number,
    private readonly chunks: Buffer[],
  ) {
    this.names = new Array<string>(count);
    this.plain = new Uint8Array(count);
    this.flags = new Uint16Array(count);
    this.method = new Uint16Array(count);
    this.versionNeeded = new Uint8Array(count);
    this.externalAttributes = new Uint32Array(count);
    this.compressedSize = new Float64Array(count);
    this.uncompressedSize = new Float64Array(count);
    this.localHeaderOffset = new Float64Array(count);
    this.chunkOf = new Uint32Array(count);
    this.at = new Uint32Array(count);
    this.parsed = new Array(count);
  }

  /** Record `i` as yauzl would give it (parsed once, then kept). */
  entry(i: number): yauzl.Entry {
    let entry = this.parsed[i];
    if (entry === undefined) {
      entry = parseAt(this.chunks[this.chunkOf[i]!]!, this.at[i]!);
      this.parsed[i] = entry;
    }
    return entry;
  }
}

/**
 * Every central-directory record of `zip` (opened by openArchive, not yet read), as
 * yauzl.Entry objects in directory order. Throws yauzl's messages for the same defects (bad
 * signature, size mismatch of stored entries). `onEntry` may throw to stop early (a limit).
 * `base`: the bytes of other data before the archive (see openArchive).
 */
export async function readCentralDirectory(file: string, zip: yauzl.ZipFile, options: { onEntry?(entry: yauzl.Entry, index: number): void; base?: number } = {}): Promise<yauzl.Entry[]> {
  const table = await scanCentralDirectory(file, zip, options.base);
  const entries: yauzl.Entry[] = [];
  for (let i = 0; i < table.count; i++) {
    const entry = table.entry(i);
    entries.push(entry);
    options.onEntry?.(entry, i);
  }
  return entries;
}

/**
 * The central directory of `zip` (opened by openArchive, not yet read) as a DirectoryTable,
 * read in big chunks and parsed in one loop over the bytes. Sizes and offsets are exactly
 * what yauzl gives: a record that is not plain (extra fields, non-ASCII or odd names,
 * encryption flags, a stored size mismatch) is parsed the way yauzl does it, and throws
 * yauzl's message for the same defect in its structure. Names: see decodeEntryName.
 * `base`: the bytes of other data before the archive (offsets in it are relative to its start).
 */
export async function scanCentralDirectory(file: string, zip: yauzl.ZipFile, base = 0): Promise<DirectoryTable> {
  const position = zip as unknown as DirectoryPosition;
  const { entryCount, fileSize } = position;
  const cursor = position.readEntryCursor;
  if (!Number.isSafeInteger(entryCount) || !Number.isSafeInteger(cursor) || cursor > fileSize) {
    throw new Error('the central directory offset lies beyond the end of the file');
  }
  const chunks: Buffer[] = [];
  const table = new DirectoryTable(entryCount, chunks);
  table.directoryOffset = cursor;
  const handle = await open(file, 'r');
  try {
    const reader = new ChunkReader(handle, cursor + base, fileSize + base, chunks);
    let i = 0;
    while (i < entryCount) {
      await reader.ensure(RECORD_BYTES);
      const scanned = scanChunk(table, reader.buffer, chunks.length - 1, reader.at, i);
      i = scanned.next;
      reader.at = scanned.at;
      if (i < entryCount) {
        // the next record runs past this chunk: read on, its fixed part first
        await reader.ensure(RECORD_BYTES);
        const b = reader.buffer;
        const at = reader.at;
        await reader.ensure(RECORD_BYTES + (b[at + 28]! | (b[at + 29]! << 8)) + (b[at + 30]! | (b[at + 31]! << 8)) + (b[at + 32]! | (b[at + 33]! << 8)));
      }
    }
  } finally {
    await handle.close();
  }
  return table;
}

/**
 * The directory's bytes in big chunks (a record never spans two). A class, not a closure
 * over the scan's variables: the scan's loop then keeps its position in locals, and its
 * optimized code stays valid from one archive to the next.
 */
class ChunkReader {
  buffer: Buffer = Buffer.alloc(0);
  /** where the next record starts in `buffer` */
  at = 0;

  constructor(
    private readonly handle: FileHandle,
    private cursor: number,
    private readonly fileSize: number,
    private readonly chunks: Buffer[],
  ) {}

  /** Makes sure `need` bytes from `at` are in `buffer`, reading on in big chunks. */
  async ensure(need: number): Promise<void> {
    if (this.at + need <= this.buffer.length) return;
    const keep = this.buffer.subarray(this.at);
    const size = Math.max(need, Math.min(CHUNK_BYTES, this.fileSize - this.cursor + keep.length));
    const next = Buffer.allocUnsafe(size);
    keep.copy(next, 0);
    let filled = keep.length;
    while (filled < need) {
      const { bytesRead } = await this.handle.read(next, filled, size - filled, this.cursor);
      if (bytesRead === 0) throw new Error('unexpected EOF');
      filled += bytesRead;
      this.cursor += bytesRead;
    }
    this.buffer = next.subarray(0, filled);
    this.chunks.push(this.buffer);
    this.at = 0;
  }
}

/**
 * Every whole record of `buffer` (chunk number `chunk`) from `at`, as record `i` on, into
 * `table`. Returns the next record's number and where it starts (past this chunk's end
 * when it does not fit whole).
 */
function scanChunk(table: DirectoryTable, buffer: Buffer, chunk: number, at: number, i: number): { next: number; at: number } {
  const { names, plain, flags, method: methods, versionNeeded, externalAttributes, compressedSize, uncompressedSize, localHeaderOffset, chunkOf, parsed } = table;
  const atOf = table.at;
  const entryCount = table.count;
  const end = buffer.length;
  const b = buffer;
  for (; i < entryCount; i++) {
    if (at + RECORD_BYTES > end) break;
    const signature = (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) >>> 0;
    if (signature !== DIRECTORY_SIGNATURE) throw new Error(`invalid central directory file header signature: 0x${signature.toString(16)}`);
    const nameLength = b[at + 28]! | (b[at + 29]! << 8);
    const extraLength = b[at + 30]! | (b[at + 31]! << 8);
    const commentLength = b[at + 32]! | (b[at + 33]! << 8);
    const length = RECORD_BYTES + nameLength + extraLength + commentLength;
    if (at + length > end) break;
    const flag = b[at + 8]! | (b[at + 9]! << 8);
    const method = b[at + 10]! | (b[at + 11]! << 8);
    const compressed = b.readUInt32LE(at + 20);
    const uncompressed = b.readUInt32LE(at + 24);
    const nameStart = at + RECORD_BYTES;
    let simple = extraLength === 0 && (flag & 0x40) === 0 && isPlainName(b, nameStart, nameStart + nameLength);
    // as yauzl's validateEntrySizes (the slow path throws its message)
    if (simple && method === 0 && compressed !== uncompressed + (flag & 0x1 ? 12 : 0)) simple = false;
    chunkOf[i] = chunk;
    atOf[i] = at;
    methods[i] = method;
    versionNeeded[i] = b[at + 6]!;
    externalAttributes[i] = b.readUInt32LE(at + 38);
    if (simple) {
      names[i] = latin1Slice(b, nameStart, nameStart + nameLength);
      plain[i] = 1;
      flags[i] = flag;
      compressedSize[i] = compressed;
      uncompressedSize[i] = uncompressed;
      localHeaderOffset[i] = b.readUInt32LE(at + 42);
    } else {
      const entry = parseRecord(b, at, nameLength, extraLength, commentLength);
      names[i] = entry.fileName;
      flags[i] = entry.generalPurposeBitFlag;
      compressedSize[i] = entry.compressedSize;
      uncompressedSize[i] = entry.uncompressedSize;
      localHeaderOffset[i] = entry.relativeOffsetOfLocalHeader;
      parsed[i] = entry;
    }
    at += length;
  }
  return { next: i, at };
}

/**
 * Printable ASCII, no backslash, not absolute ('/…' or a drive letter), and every segment
 * neither empty (but the last, after a folder's slash) nor made only of dots and spaces.
 * Anything else takes yauzl's own path (and Ferry's full name checks).
 */
function isPlainName(b: Buffer, start: number, end: number): boolean {
  if (end === start) return false;
  const first = b[start]!;
  // a drive letter: 'C:'
  if (end - start >= 2 && b[start + 1] === 0x3a && ((first >= 0x41 && first <= 0x5a) || (first >= 0x61 && first <= 0x7a))) return false;
  let segmentStart = start;
  let onlyDotsAndSpaces = true;
  for (let i = start; i < end; i++) {
    const byte = b[i]!;
    if (byte === 0x2f) {
      if (i === segmentStart || onlyDotsAndSpaces) return false;
      segmentStart = i + 1;
      onlyDotsAndSpaces = true;
    } else if (byte < 0x20 || byte > 0x7e || byte === 0x5c) {
      return false;
    } else if (byte !== 0x2e && byte !== 0x20) {
      onlyDotsAndSpaces = false;
    }
  }
  // the last segment: empty after a folder's trailing slash is fine
  return segmentStart === end || !onlyDotsAndSpaces;
}

/**
 * Buffer's own latin1 decoder of a range, without toString's argument handling (100,000
 * names a listing, ~50 ns each saved). Undocumented, so toString stands in where it is gone.
 */
const latin1Slice: (buffer: Buffer, start: number, end: number) => string =
  typeof (Buffer.prototype as Partial<LatinSlicing>).latin1Slice === 'function'
    ? (buffer, start, end) => (buffer as LatinSlicing).latin1Slice(start, end)
    : (buffer, start, end) => buffer.toString('latin1', start, end);
type LatinSlicing = Buffer & { latin1Slice(start: number, end: number): string };

function parseAt(buffer: Buffer, at: number): yauzl.Entry {
  return parseRecord(buffer, at, buffer.readUInt16LE(at + 28), buffer.readUInt16LE(at + 30), buffer.readUInt16LE(at + 32));
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
  // decoded as its writer meant it, and not judged here: the policy names what is wrong with it
  entry.fileName = decodeEntryName(entry.generalPurposeBitFlag, entry.fileNameRaw as Buffer, entry.extraFields);
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

// ---- The end records: where the central directory is, checked before yauzl follows them

const END_RECORD_BYTES = 22;
const END_RECORD_SIGNATURE = 0x06054b50;
const ZIP64_LOCATOR_BYTES = 20;
const ZIP64_LOCATOR_SIGNATURE = 0x07064b50;
const ZIP64_END_RECORD_BYTES = 56;
const ZIP64_END_RECORD_SIGNATURE = 0x06064b50;

/** A local file header, or the end record that is all an empty ZIP holds. */
const ZIP_STARTS = [0x04034b50, END_RECORD_SIGNATURE];

/**
 * Whether `file` is recognisably a ZIP, cheaply, before it is kept (an upload's spool): it
 * starts with a ZIP record, or, with other data in front (a self-extractor, padding), its
 * tail holds an end-of-central-directory record, where every reader looks for one. Whether
 * it is a readable ZIP is openArchive's to say.
 */
export async function looksLikeZip(file: string): Promise<boolean> {
  const handle = await open(file, 'r');
  try {
    const { size } = await handle.stat();
    const head = Buffer.alloc(4);
    if ((await handle.read(head, 0, 4, 0)).bytesRead === 4 && ZIP_STARTS.includes(head.readUInt32LE(0))) return true;
    const tailBytes = Math.min(size, END_RECORD_BYTES + 0xffff);
    if (tailBytes < END_RECORD_BYTES) return false;
    const tail = Buffer.alloc(tailBytes);
    await handle.read(tail, 0, tailBytes, size - tailBytes);
    return lastEndRecordAt(tail) >= 0;
  } finally {
    await handle.close();
  }
}

/**
 * The end records checked before yauzl follows them, and the bytes in front of the archive
 * found. Returns `base` (see OpenedArchive). Throws a plain Error with a short reason.
 *
 * yauzl reads the ZIP64 end record wherever the locator says, inside a read callback: an
 * offset past 2^53 made fs.read throw there, an uncaught exception (the service went down,
 * the job never ended). Found by the hostile corpus.
 *
 * Data in front: the end record says where the central directory starts counting from the
 * archive's first byte, but the directory ends where the end record (or the ZIP64 end
 * record) begins. When the two disagree by `base` bytes and a directory record is found
 * there and not at the stated offset, the archive starts `base` bytes into the file: as
 * Info-ZIP's unzip and Go's archive/zip read self-extractors whose offsets were never
 * adjusted (`zip -A` adjusts them; then base is 0).
 */
export async function checkEndRecords(file: string, fileSize: number): Promise<number> {
  const tailBytes = Math.min(fileSize, ZIP64_LOCATOR_BYTES + END_RECORD_BYTES + 0xffff);
  const tail = Buffer.alloc(tailBytes);
  const handle = await open(file, 'r');
  try {
    await handle.read(tail, 0, tailBytes, fileSize - tailBytes);
    const at = lastEndRecordAt(tail);
    if (at < 0) return 0; // yauzl says so itself
    const endOffset = fileSize - tailBytes + at;
    let directorySize = tail.readUInt32LE(at + 12);
    let directoryOffset = tail.readUInt32LE(at + 16);
    let directoryEnd = endOffset;
    if (at >= ZIP64_LOCATOR_BYTES && tail.readUInt32LE(at - ZIP64_LOCATOR_BYTES) === ZIP64_LOCATOR_SIGNATURE) {
      const statedOffset = tail.readBigUInt64LE(at - ZIP64_LOCATOR_BYTES + 8);
      if (statedOffset > BigInt(fileSize - ZIP64_END_RECORD_BYTES)) throw new Error('its ZIP64 end record is said to lie past the end of the file');
      let recordOffset = Number(statedOffset);
      const record = Buffer.alloc(ZIP64_END_RECORD_BYTES);
      await handle.read(record, 0, ZIP64_END_RECORD_BYTES, recordOffset);
      if (record.readUInt32LE(0) !== ZIP64_END_RECORD_SIGNATURE) {
        // In front of an archive whose offsets were never adjusted, the locator's offset is
        // short by the same bytes: the record is then found where writers put it, right
        // before the locator (as Info-ZIP looks for it). Read through the shifted view,
        // yauzl then finds it at the stated offset.
        const before = endOffset - ZIP64_LOCATOR_BYTES - ZIP64_END_RECORD_BYTES;
        if (before <= recordOffset || (await signatureAt(handle, before, fileSize)) !== ZIP64_END_RECORD_SIGNATURE) return 0; // yauzl says so itself
        await handle.read(record, 0, ZIP64_END_RECORD_BYTES, before);
        const base = before - recordOffset;
        if (record.readBigUInt64LE(48) + BigInt(base) > BigInt(fileSize) || record.readBigUInt64LE(40) > BigInt(fileSize)) return 0;
        if (record.readBigUInt64LE(32) > BigInt(Math.ceil(fileSize / 46))) throw new Error('it claims more entries than the file can hold');
        const shifted = Number(record.readBigUInt64LE(48)) + base;
        return (await signatureAt(handle, shifted, fileSize)) === DIRECTORY_SIGNATURE ? base : 0;
      }
      recordOffset = Number(statedOffset);
      if (record.readBigUInt64LE(48) > BigInt(fileSize)) throw new Error('its central directory is said to start past the end of the file');
      if (record.readBigUInt64LE(32) > BigInt(Math.ceil(fileSize / 46))) throw new Error('it claims more entries than the file can hold');
      // both under the file's size, checked above and just now
      if (record.readBigUInt64LE(40) > BigInt(fileSize)) return 0;
      directorySize = Number(record.readBigUInt64LE(40));
      directoryOffset = Number(record.readBigUInt64LE(48));
      directoryEnd = recordOffset;
    }
    const base = directoryEnd - directorySize - directoryOffset;
    if (base <= 0 || directorySize === 0) return 0;
    // the stated offset holds a directory record after all (a directory followed by other data): no shift
    if (await signatureAt(handle, directoryOffset, fileSize) === DIRECTORY_SIGNATURE) return 0;
    return (await signatureAt(handle, base + directoryOffset, fileSize)) === DIRECTORY_SIGNATURE ? base : 0;
  } finally {
    await handle.close();
  }
}

async function signatureAt(handle: FileHandle, offset: number, fileSize: number): Promise<number | null> {
  if (offset < 0 || offset + 4 > fileSize) return null;
  const bytes = Buffer.alloc(4);
  const { bytesRead } = await handle.read(bytes, 0, 4, offset);
  return bytesRead === 4 ? bytes.readUInt32LE(0) : null;
}

/** Where the last end-record signature in `tail` starts (from the end, as yauzl and other readers look for it), or -1. */
function lastEndRecordAt(tail: Buffer): number {
  for (let i = tail.length - END_RECORD_BYTES; i >= 0; i--) if (tail.readUInt32LE(i) === END_RECORD_SIGNATURE) return i;
  return -1;
}
