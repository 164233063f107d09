import { open, stat, type FileHandle } from 'node:fs/promises';
import yauzl from 'yauzl';
import { decodeEntryName, hasInvalidUtf8Name } from './entry-name.js';
import { formatBytes } from '../../../shared/format.js';
import type { Entry } from '../target.js';
import { FerryError, badRequest, isFerryError, tooLarge } from '../errors.js';
import type { Limits } from '../limits.js';
import { validateBag, type BagFile, type BagHashes, type ValidateBagOptions } from './bag-validator.js';
import { OPENS_INDEPENDENTLY, withReadWhole } from '../jobs/whole-entry.js';
import { ArchiveWindow, canReadWhole, describeZipError, openZipEntry, readZipEntryWhole } from './zip-entry-stream.js';

// An uploaded ZIP (already spooled to disk) read through its central directory, never
// extracted. Everything hostile or over a limit is refused before the archive is handed
// out, and a bag is fully validated first, so a writer never starts on a bad upload.

export interface UploadArchive {
  kind: 'bag' | 'plain';
  /** top-level names of the payload (for a bag, under data/) */
  topLevel: string[];
  /** those of them that are files, not folders */
  topLevelFiles: string[];
  fileCount: number;
  totalBytes: number;
  /**
   * payload entries (for a bag: relative to data/, hashes from its manifests); re-iterable.
   * An entry with a manifest digest is not CRC-checked here: its reader must check `hashes`
   * (the job's WatchedEntries does, for every byte it hands a writer).
   */
  entries(): AsyncIterable<Entry>;
  close(): Promise<void>;
}

/** A kept entry of the central directory, by normalised path (no trailing slash). */
interface ZipRecord {
  path: string;
  kind: 'file' | 'folder';
  size: number;
  mtime: Date;
  entry: yauzl.Entry;
}

/** Per-entry ratio is only judged from this size up: tiny files can legitimately shrink a lot. */
const RATIO_MIN_BYTES = 1024 * 1024;
const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;
/** what most file systems allow for one name (ext4, APFS, NTFS in UTF-16 units ~ bytes here) */
const MAX_SEGMENT_BYTES = 255;
const IGNORED_NAMES = new Set(['.ds_store', 'thumbs.db', 'desktop.ini']);
/** the fixed part of a local file header (APPNOTE 4.3.7) */
const LOCAL_HEADER_BYTES = 30;

/**
 * `payload` says when the payload's bytes are checked. 'check' (the default): before the
 * archive is handed out — a bag's against its manifests, a plain ZIP's against their CRC-32s —
 * so a destination that cannot stage (a remote one publishes each file as it goes) never
 * starts on a damaged archive. 'defer': not here; the caller checks every byte as it writes
 * (entries() streams are CRC-checked) and puts nothing in place unless all passed (a staged write).
 */
export type UploadReadOptions = ValidateBagOptions;

export async function openUploadZip(zipPath: string, limits: Limits, options: UploadReadOptions = {}): Promise<UploadArchive> {
  const fileSize = (await stat(zipPath)).size;
  if (fileSize > limits.maxUploadBytes) {
    throw tooLarge(`The uploaded ZIP is ${formatBytes(fileSize)}; the limit is ${formatBytes(limits.maxUploadBytes)}.`);
  }
  let zip: yauzl.ZipFile;
  try {
    await checkEndRecords(zipPath, fileSize);
    zip = await yauzl.openPromise(zipPath, { lazyEntries: true, autoClose: false, decodeStrings: false, validateEntrySizes: true, strictFileNames: true });
    readInLargeChunks(zip);
    await readCentralDirectoryAtOnce(zip, zipPath, fileSize);
  } catch (error) {
    throw notAZip(error);
  }
  let handle: FileHandle | null = null;
  try {
    if (zip.entryCount > limits.maxEntries) {
      throw tooLarge(`The uploaded ZIP holds ${zip.entryCount} entries; the limit is ${limits.maxEntries}.`);
    }
    const records = await readCentralDirectory(zip, fileSize, limits);
    // small entries are read whole through one window on the file (readZipEntryWhole)
    handle = await open(zipPath, 'r');
    const source: ArchiveSource = { zip, handle, window: new ArchiveWindow(handle, fileSize) };
    const bagRoot = findBagRoot(records);
    if (bagRoot === null) {
      if (options.payload !== 'defer') await checkEveryCrc(source, records);
      return plainArchive(source, records);
    }
    const bagRecords = records.filter((r) => r.path.startsWith(bagRoot)).map((r) => ({ ...r, path: r.path.slice(bagRoot.length) }));
    const hashes = await validateBag(
      bagRecords
        .filter((r) => r.kind === 'file')
        .map((r): BagFile => ({ path: r.path, size: r.size, open: () => openZipEntry(zip, r.entry, bagRoot + r.path) })),
      options,
    );
    return bagArchive(source, bagRecords, bagRoot, hashes);
  } catch (error) {
    zip.close();
    await handle?.close().catch(() => undefined);
    throw isFerryError(error) ? error : notAZip(error);
  }
}

/** what an entry's stored bytes are read in: yauzl's stream reads in Node's default 16 KiB (a syscall and a chunk through every stream per 16 KiB) */
const ENTRY_READ_BYTES = 1024 * 1024;

/** Entry streams read ENTRY_READ_BYTES at a time (yauzl's reader passes its options to its Readable). */
function readInLargeChunks(zip: yauzl.ZipFile): void {
  const reader = (zip as unknown as { reader: { createReadStream(options: object): unknown } }).reader;
  const create = reader.createReadStream.bind(reader);
  reader.createReadStream = (options: object) => create({ highWaterMark: ENTRY_READ_BYTES, ...options });
}

/** the most of an archive's central directory held in memory while it is read (about 400,000 entries) */
const CENTRAL_DIRECTORY_MAX_BYTES = 64 * 1024 * 1024;

/**
 * The central directory read with one call, and yauzl's reads of it served from memory: yauzl
 * reads each record with two small positional reads, one after the other through the thread
 * pool, and for a ZIP of thousands of entries those round trips (not the parsing) were most
 * of the time before the first file could be written. Reads outside it go to the file.
 */
async function readCentralDirectoryAtOnce(zip: yauzl.ZipFile, zipPath: string, fileSize: number): Promise<void> {
  const start = (zip as unknown as { readEntryCursor: number }).readEntryCursor;
  if (!Number.isSafeInteger(start) || start < 0 || start >= fileSize || fileSize - start > CENTRAL_DIRECTORY_MAX_BYTES) return;
  const directory = Buffer.allocUnsafe(fileSize - start);
  const handle = await open(zipPath, 'r');
  try {
    for (let filled = 0; filled < directory.length; ) {
      const { bytesRead } = await handle.read(directory, filled, directory.length - filled, start + filled);
      if (bytesRead === 0) throw new Error('unexpected EOF');
      filled += bytesRead;
    }
  } finally {
    await handle.close();
  }
  type Read = (buffer: Buffer, offset: number, length: number, position: number, callback: (error: Error | null, bytesRead: number, buffer: Buffer) => void) => void;
  const reader = (zip as unknown as { reader: { read: Read } }).reader;
  const fromFile = reader.read.bind(reader);
  reader.read = (buffer, offset, length, position, callback) => {
    if (position < start || position + length > fileSize) return fromFile(buffer, offset, length, position, callback);
    const copied = directory.copy(buffer, offset, position - start, position - start + length);
    // asynchronously, as a file read answers
    queueMicrotask(() => callback(null, copied, buffer));
  };
}

async function readCentralDirectory(zip: yauzl.ZipFile, fileSize: number, limits: Limits): Promise<ZipRecord[]> {
  const records: ZipRecord[] = [];
  const kinds = new Map<string, 'file' | 'folder'>();
  /** folded (NFC, lower case) path → the spelling first seen */
  const spellings = new Map<string, string>();
  /** local header offset → the entry that owns it */
  const owners = new Map<number, string>();
  /** where each entry's local header and data lie at the least (the header's name and extra field not counted) */
  const extents: { start: number; end: number; name: string }[] = [];
  let totalBytes = 0;
  for await (const entry of zip.eachEntry()) {
    const raw = entry.fileName as unknown as Buffer;
    const name = decodeEntryName(entry.generalPurposeBitFlag, raw, entry.extraFields);
    if (hasInvalidUtf8Name(entry.generalPurposeBitFlag, raw, entry.extraFields)) {
      throw badRequest(`The ZIP entry ${JSON.stringify(name.replace(/\0/g, '\\0').slice(0, 120))} says its name is UTF-8, but the name's bytes are not valid UTF-8 (overlong or broken); the ZIP is damaged or hostile.`);
    }
    refuseHostile(entry, name, limits);
    // two records over one local header: the same bytes under two names (an alias, and the
    // overlap trick of "better zip bombs")
    const owner = owners.get(entry.relativeOffsetOfLocalHeader);
    if (owner !== undefined) {
      throw badRequest(`The ZIP entries "${owner}" and "${name}" share the same stored data; each entry must have its own.`);
    }
    owners.set(entry.relativeOffsetOfLocalHeader, name);
    extents.push({ start: entry.relativeOffsetOfLocalHeader, end: entry.relativeOffsetOfLocalHeader + LOCAL_HEADER_BYTES + entry.compressedSize, name });

    totalBytes += entry.uncompressedSize;
    if (totalBytes > limits.maxTotalUncompressedBytes) {
      throw tooLarge(`The uploaded ZIP would unpack to more than ${formatBytes(limits.maxTotalUncompressedBytes)}, the limit.`);
    }
    if (entry.uncompressedSize >= RATIO_MIN_BYTES && entry.uncompressedSize / Math.max(entry.compressedSize, 1) > limits.maxCompressionRatio) {
      throw tooLarge(
        `The ZIP entry "${name}" unpacks to ${Math.round(entry.uncompressedSize / Math.max(entry.compressedSize, 1))} times its packed size, ` +
          `over the limit of ${limits.maxCompressionRatio} (a "zip bomb" guard).`,
      );
    }

    const segments = name.split('/').filter((s) => s !== '' && s !== '.');
    if (segments.length === 0 || isIgnored(segments)) continue;
    const path = segments.join('/');
    const kind = name.endsWith('/') ? 'folder' : 'file';
    const earlier = kinds.get(path);
    if (earlier === 'folder' && kind === 'folder') continue; // a repeated folder entry changes nothing
    if (earlier) throw badRequest(`The ZIP holds "${path}" twice; each path may appear only once.`);
    for (let i = 1; i < segments.length; i++) {
      const ancestor = segments.slice(0, i).join('/');
      if (kinds.get(ancestor) === 'file') throw badRequest(`The ZIP holds "${ancestor}" both as a file and as a folder.`);
      kinds.set(ancestor, 'folder');
    }
    refuseLookAlikes(segments, spellings);
    kinds.set(path, kind);
    records.push({ path, kind, size: kind === 'file' ? entry.uncompressedSize : 0, mtime: entry.getLastModDate(), entry });
  }
  refuseOverlaps(extents, fileSize);
  if (totalBytes >= RATIO_MIN_BYTES && totalBytes / Math.max(fileSize, 1) > limits.maxCompressionRatio) {
    throw tooLarge(
      `The uploaded ZIP unpacks to ${Math.round(totalBytes / fileSize)} times its size, over the limit of ${limits.maxCompressionRatio} (a "zip bomb" guard).`,
    );
  }
  return records;
}

/**
 * Entries whose stored bytes overlap: one entry's local header inside another's data. No
 * tool writes that; it is how the "better zip bomb" makes thousands of entries out of one
 * kernel (each entry covering all those after it) while every entry alone looks harmless,
 * and under the ratio limit it would still be written out many times over.
 */
function refuseOverlaps(extents: { start: number; end: number; name: string }[], fileSize: number): void {
  const sorted = [...extents].sort((a, b) => a.start - b.start);
  // an entry whose bytes would lie past the end: refused now, not after the files before it were written
  const outside = sorted.find((extent) => extent.end > fileSize);
  if (outside) throw badRequest(`The ZIP entry "${outside.name}" lies past the end of the file; the ZIP is truncated or corrupt.`);
  for (let i = 1; i < sorted.length; i++) {
    const before = sorted[i - 1]!;
    const after = sorted[i]!;
    if (after.start < before.end) {
      throw badRequest(`The ZIP entries "${before.name}" and "${after.name}" overlap in the archive (one is stored inside the other); each entry must have its own bytes.`);
    }
  }
}

const END_RECORD_BYTES = 22;
const ZIP64_LOCATOR_BYTES = 20;
const ZIP64_END_RECORD_BYTES = 56;

/**
 * The end records' offsets checked before yauzl follows them. yauzl reads the ZIP64 end
 * record wherever the locator says, inside a read callback: an offset past 2^53 made
 * fs.read throw there, an uncaught exception (the service went down, the job never ended).
 * Found by the hostile corpus. Throws a plain Error with a short reason.
 * Exported for the offline library, which opens archives the same way.
 */
export async function checkEndRecords(zipPath: string, fileSize: number): Promise<void> {
  const tailBytes = Math.min(fileSize, ZIP64_LOCATOR_BYTES + END_RECORD_BYTES + 0xffff);
  const tail = Buffer.alloc(tailBytes);
  const handle = await open(zipPath, 'r');
  try {
    await handle.read(tail, 0, tailBytes, fileSize - tailBytes);
    // as yauzl: the last end-record signature from the end
    let at = -1;
    for (let i = tailBytes - END_RECORD_BYTES; i >= 0; i--) {
      if (tail.readUInt32LE(i) === 0x06054b50) {
        at = i;
        break;
      }
    }
    if (at < ZIP64_LOCATOR_BYTES || tail.readUInt32LE(at - ZIP64_LOCATOR_BYTES) !== 0x07064b50) return;
    const recordOffset = tail.readBigUInt64LE(at - ZIP64_LOCATOR_BYTES + 8);
    if (recordOffset > BigInt(fileSize - ZIP64_END_RECORD_BYTES)) throw new Error('its ZIP64 end record is said to lie past the end of the file');
    const record = Buffer.alloc(ZIP64_END_RECORD_BYTES);
    await handle.read(record, 0, ZIP64_END_RECORD_BYTES, Number(recordOffset));
    if (record.readUInt32LE(0) !== 0x06064b50) return; // yauzl says so itself
    if (record.readBigUInt64LE(48) > BigInt(fileSize)) throw new Error('its central directory is said to start past the end of the file');
    if (record.readBigUInt64LE(32) > BigInt(Math.ceil(fileSize / 46))) throw new Error('it claims more entries than the file can hold');
  } finally {
    await handle.close();
  }
}

/** Entries that could land outside their folder, or that Ferry cannot read faithfully. */
function refuseHostile(entry: yauzl.Entry, name: string, limits: Limits): void {
  const shown = JSON.stringify(name.replace(/\0/g, '\\0'));
  const outside = `would land outside its folder`;
  if (name.includes('\0')) throw badRequest(`The ZIP entry ${shown} has a NUL character in its name.`);
  if (name.includes('\\')) throw badRequest(`The ZIP entry ${shown} uses backslashes; ZIP paths must use "/" between folders.`);
  if (name.startsWith('/')) throw badRequest(`The ZIP entry ${shown} has an absolute path and ${outside}.`);
  if (/^[A-Za-z]:/.test(name)) throw badRequest(`The ZIP entry ${shown} starts with a drive letter and ${outside}.`);
  if (name.split('/').includes('..')) throw badRequest(`The ZIP entry ${shown} contains ".." and ${outside}.`);
  // what a file system may make of a segment: Unicode-normalised (NFKC maps fullwidth dots
  // to '.'), trailing dots and spaces dropped (Windows) — none may come out as '..'
  for (const segment of name.normalize('NFKC').split('/')) {
    if (segment !== '.' && segment !== '' && /^[. ]+$/.test(segment)) {
      throw badRequest(`The ZIP entry ${shown} has a folder name made only of dots and spaces, which some systems read as ".."; it ${outside}.`);
    }
  }
  for (const segment of name.split('/')) {
    if (Buffer.byteLength(segment, 'utf8') > MAX_SEGMENT_BYTES) {
      throw badRequest(`The ZIP entry ${shown.slice(0, 120)} has a name longer than ${MAX_SEGMENT_BYTES} bytes, more than file systems allow.`);
    }
  }
  const type = (entry.externalFileAttributes >>> 16) & S_IFMT;
  if (type === S_IFLNK) {
    throw badRequest(`The ZIP entry ${shown} is a symbolic link; Ferry does not follow links in uploads. Zip the files themselves instead.`);
  }
  if (type !== 0 && type !== S_IFREG && type !== S_IFDIR) {
    throw badRequest(`The ZIP entry ${shown} is a device, pipe or socket, not a regular file or folder; Ferry uploads only files and folders.`);
  }
  if (entry.generalPurposeBitFlag & 0x1) throw badRequest(`The ZIP entry ${shown} is encrypted (password-protected); Ferry cannot read it. Upload an unencrypted ZIP.`);
  if (entry.compressionMethod !== 0 && entry.compressionMethod !== 8) {
    throw badRequest(`The ZIP entry ${shown} uses compression method ${entry.compressionMethod}; Ferry reads only stored and deflated entries.`);
  }
  if (name.length > limits.maxPathLength) {
    throw tooLarge(`A ZIP entry's path is ${name.length} characters long; the limit is ${limits.maxPathLength}.`);
  }
}

/**
 * Names that differ only by case or Unicode normalisation are one name on macOS and
 * Windows (and look the same to anyone): the second would silently replace or be merged
 * into the first there, so the ZIP is refused wherever it is written.
 */
function refuseLookAlikes(segments: string[], spellings: Map<string, string>): void {
  for (let i = 1; i <= segments.length; i++) {
    const spelled = segments.slice(0, i).join('/');
    const folded = spelled.normalize('NFC').toLowerCase();
    const earlier = spellings.get(folded);
    if (earlier === undefined) spellings.set(folded, spelled);
    else if (earlier !== spelled) {
      throw badRequest(`The ZIP holds "${earlier}" and "${spelled}", names that differ only in case or Unicode form; rename one of them.`);
    }
  }
}

/** macOS and Windows desktop litter, never part of anyone's data. */
function isIgnored(segments: string[]): boolean {
  return segments[0] === '__MACOSX' || IGNORED_NAMES.has(segments[segments.length - 1]!.toLowerCase());
}

/** "" for a bag at the archive root, "<root>/" for a bag inside one top folder, null: no bag. */
function findBagRoot(records: ZipRecord[]): string | null {
  const isFile = (path: string) => records.some((r) => r.path === path && r.kind === 'file');
  if (isFile('bagit.txt')) return '';
  const roots = new Set(records.map((r) => r.path.split('/')[0]));
  if (roots.size !== 1) return null;
  const [root] = roots;
  return isFile(`${root}/bagit.txt`) ? `${root}/` : null;
}

/**
 * Every file entry read and its CRC-32 checked, before a byte is written anywhere: a plain
 * ZIP has no other fixity, and a destination that publishes as it goes cannot take back the
 * files written before a damaged one. Throws the damaged entry's FerryError.
 */
async function checkEveryCrc({ zip, window }: ArchiveSource, records: ZipRecord[]): Promise<void> {
  for (const record of records) {
    if (record.kind !== 'file') continue;
    if (canReadWhole(record.entry)) {
      await readZipEntryWhole(window, record.entry, record.path, []);
      continue;
    }
    const stream = await openZipEntry(zip, record.entry, record.path);
    for await (const chunk of stream) void chunk;
  }
}

/** The open archive: yauzl for streams, a window on the file for entries read whole. */
interface ArchiveSource {
  zip: yauzl.ZipFile;
  handle: FileHandle;
  window: ArchiveWindow;
}

function plainArchive(source: ArchiveSource, records: ZipRecord[]): UploadArchive {
  return makeArchive(source, 'plain', records, '', () => ({}));
}

function bagArchive(source: ArchiveSource, bagRecords: ZipRecord[], bagRoot: string, hashes: BagHashes): UploadArchive {
  const payload = bagRecords.filter((r) => r.path.startsWith('data/')).map((r) => ({ ...r, path: r.path.slice('data/'.length) }));
  return makeArchive(source, 'bag', payload, `${bagRoot}data/`, (path) => ({ ...hashes.get(path) }));
}

/** digests the job checks every byte against (entry-stream.ts), each stronger than a CRC-32 */
const STRONGER_THAN_CRC: ReadonlySet<string> = new Set(['md5', 'sha1', 'sha256', 'sha512']);

/** `records` are the payload with paths relative to what the writer should create. */
function makeArchive(
  { zip, handle, window }: ArchiveSource,
  kind: UploadArchive['kind'],
  records: ZipRecord[],
  zipPrefix: string,
  hashesOf: (path: string) => Record<string, string>,
): UploadArchive {
  const files = records.filter((r) => r.kind === 'file');
  const topLevel = [...new Set(records.map((r) => r.path.split('/')[0]!))];
  // explicit folder entries give their folder's mtime even when they come after its contents
  const folderTimes = new Map(records.filter((r) => r.kind === 'folder').map((r) => [r.path, r.mtime]));
  let closed = false;

  async function* entries(): AsyncGenerator<Entry> {
    const yielded = new Set<string>();
    const folder = (path: string): Entry => ({
      path,
      kind: 'folder',
      size: null,
      mtime: folderTimes.get(path) ?? null,
      hashes: {},
      open: () => Promise.reject(new Error(`"${path}" is a folder and has no bytes.`)),
    });
    for (const record of records) {
      const segments = record.path.split('/');
      const hashes = record.kind === 'file' ? hashesOf(record.path) : {};
      // A digest from a bag's manifests is checked on these same bytes by the job (and
      // nothing is put in place unless every one matches): the CRC-32 would only repeat
      // that check, weaker, at ~1 ns a byte. A plain ZIP's entries have only their CRC.
      const checkCrc = !Object.keys(hashes).some((algorithm) => STRONGER_THAN_CRC.has(algorithm.toLowerCase()));
      // parents first, whether the ZIP lists them or only implies them
      for (let i = 1; i <= segments.length; i++) {
        const path = segments.slice(0, i).join('/');
        if (i === segments.length && record.kind === 'file') break;
        if (yielded.has(path)) continue;
        yielded.add(path);
        yield folder(path);
      }
      if (record.kind === 'file') {
        const file: Entry = {
          path: record.path,
          kind: 'file',
          size: record.size,
          mtime: record.mtime,
          hashes,
          open: () => {
            if (closed) return Promise.reject(new Error('The uploaded ZIP was already closed.'));
            return openZipEntry(zip, record.entry, zipPrefix + record.path, checkCrc);
          },
          // each entry is read at its own offset (yauzl and the window read positionally)
          [OPENS_INDEPENDENTLY]: true,
        } as Entry;
        yield canReadWhole(record.entry)
          ? withReadWhole(file, (algorithms) => {
              if (closed) return Promise.reject(new Error('The uploaded ZIP was already closed.'));
              return readZipEntryWhole(window, record.entry, zipPrefix + record.path, algorithms, checkCrc);
            })
          : file;
      }
    }
  }

  return {
    kind,
    topLevel,
    topLevelFiles: files.filter((r) => !r.path.includes('/')).map((r) => r.path),
    fileCount: files.length,
    totalBytes: files.reduce((sum, r) => sum + r.size, 0),
    entries,
    close: async () => {
      if (closed) return;
      closed = true;
      zip.close();
      await handle.close().catch(() => undefined);
    },
  };
}

function notAZip(error: unknown): FerryError {
  return new FerryError(400, 'not_a_zip', `The uploaded file is not a readable ZIP archive (${describeZipError(error)}).`);
}

