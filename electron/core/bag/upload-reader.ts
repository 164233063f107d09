import { open, stat, type FileHandle } from 'node:fs/promises';
import yauzl from 'yauzl';
import { formatBytes } from '../../../shared/format.js';
import type { Entry } from '../target.js';
import { FerryError, isFerryError, tooLarge } from '../errors.js';
import type { Limits } from '../limits.js';
import { validateBag, type BagFile, type ValidateBagOptions, type ValidatedBag } from './bag-validator.js';
import { withReadWhole } from '../jobs/whole-entry.js';
import { fastPathOn } from '../fast-paths.js';
import { lendingReadStream, READ_BUFFER_BYTES } from '../read-buffers.js';
import { ArchiveWindow, canReadWhole, describeZipError, openZipEntry, readZipEntryWhole, windowEntryReader, type RawEntryReader } from '../zip/zip-entry-stream.js';
import { readOnWorkerOrHere } from '../jobs/file-write-workers.js';
import { openArchive, type OpenedArchive } from '../zip/open-archive.js';
import { scanCentralDirectory, type DirectoryTable } from '../zip/central-directory.js';
import { admitEntries, checkEntryCount } from '../zip/entry-policy.js';
import { carriedRecord } from './bag-record.js';

// An uploaded ZIP (already spooled to disk) read through its central directory, never
// extracted. Everything the policy refuses (entry-policy.ts: hostile, over a limit) is
// refused before the archive is handed out, and a bag is fully validated first, so a writer
// never starts on a bad upload.

export interface UploadArchive {
  kind: 'bag' | 'plain';
  /** top-level names of the payload (for a bag, under data/) */
  topLevel: string[];
  /** those of them that are files, not folders */
  topLevelFiles: string[];
  fileCount: number;
  totalBytes: number;
  /** what a bag's validation accepted with a reservation (see ValidatedBag); none for a plain ZIP */
  warnings: string[];
  /** the provenance record a bag carries as a tag file (bag-record.ts); null for a plain ZIP or a bag without one */
  carriedRecord(): Promise<string | null>;
  /**
   * The text of one small file: `payload` by its path as entries() names it, or `tag` a bag's
   * tag file at its top (beside bagit.txt). Null when there is no such file, or it is larger
   * than `maxBytes`. Its bytes are checked against the entry's CRC-32.
   */
  readSmallFile(where: 'payload' | 'tag', path: string, maxBytes: number): Promise<string | null>;
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
  /** desktop litter by name: left out of a plain ZIP; in a bag, payload if its manifests list it */
  litter: boolean;
}

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
  let opened: OpenedArchive;
  try {
    opened = await openArchive(zipPath);
  } catch (error) {
    throw notAZip(error);
  }
  const { zip, base } = opened;
  let handle: FileHandle | null = null;
  try {
    // the policy's limit on the count, before the directory is read
    checkEntryCount(zip.entryCount, limits);
    let table: DirectoryTable;
    try {
      table = await scanCentralDirectory(zipPath, zip, base);
    } catch (error) {
      throw notAZip(error);
    }
    const admitted = admitEntries(table, opened.size, limits);
    const records: ZipRecord[] = [];
    for (let k = 0; k < admitted.count; k++) {
      const entry = table.entry(admitted.record[k]!);
      const kind = admitted.folder[k] ? 'folder' : 'file';
      records.push({ path: admitted.path[k]!, kind, size: kind === 'file' ? entry.uncompressedSize : 0, mtime: entry.getLastModDate(), entry, litter: admitted.litter[k] === 1 });
    }
    // small entries are read whole (readZipEntryWhole) on a file worker thread, or else through one window on the file
    handle = await open(zipPath, 'r');
    readInLargeChunks(zip, handle, base);
    const source: ArchiveSource = { zip, handle, readWhole: wholeEntryReader(zipPath, base, new ArchiveWindow(handle, fileSize, base)) };
    const bagRoot = findBagRoot(records);
    if (bagRoot === null) {
      if (options.payload !== 'defer') await checkEveryCrc(source, records);
      return plainArchive(source, records);
    }
    const bagRecords = records.filter((r) => r.path.startsWith(bagRoot)).map((r) => ({ ...r, path: r.path.slice(bagRoot.length) }));
    const bag = await validateBag(
      bagRecords
        .filter((r) => r.kind === 'file')
        .map((r): BagFile => ({ path: r.path, size: r.size, litter: r.litter, open: () => openZipEntry(zip, r.entry, bagRoot + r.path) })),
      options,
    );
    return bagArchive(source, bagRecords, bagRoot, bag);
  } catch (error) {
    zip.close();
    await handle?.close().catch(() => undefined);
    throw isFerryError(error) ? error : notAZip(error);
  }
}

/**
 * Small entries read on a file worker thread (fast path 'worker-reads': read, inflated, hashed
 * and their CRC-32 computed there, the bytes moved back, so they may move on to a local
 * writer's thread too), else through the window on this thread.
 */
function wholeEntryReader(zipPath: string, base: number, window: ArchiveWindow): RawEntryReader {
  const here = windowEntryReader(window);
  return (entry, algorithms, crc) =>
    readOnWorkerOrHere(
      async (workers) => ({
        ...(await workers.readZipEntry(zipPath, base + entry.relativeOffsetOfLocalHeader, { compressedSize: entry.compressedSize, uncompressedSize: entry.uncompressedSize, method: entry.compressionMethod }, algorithms, crc)),
        movable: true,
      }),
      () => here(entry, algorithms, crc),
    );
}

/** what an entry's stored bytes are read in: yauzl's stream reads in Node's default 16 KiB (a syscall and a chunk through every stream per 16 KiB) */
const ENTRY_READ_BYTES = 1024 * 1024;

/**
 * Entry streams read ENTRY_READ_BYTES at a time (yauzl's reader passes its options to its
 * Readable), or with fast path 'reused-read-buffers' from `handle` (the archive's, which
 * starts `base` bytes into it) into lent buffers, which a stored entry's writer gives back.
 */
function readInLargeChunks(zip: yauzl.ZipFile, handle: FileHandle, base: number): void {
  const reader = (zip as unknown as { reader: { createReadStream(options: { start: number; end: number; highWaterMark?: number }): unknown } }).reader;
  const create = reader.createReadStream.bind(reader);
  // (a short range, a local header read through a reader without reads of its own, is not worth a loan)
  reader.createReadStream = (options) =>
    fastPathOn('reused-read-buffers') && options.end - options.start > READ_BUFFER_BYTES
      ? lendingReadStream(handle, { start: base + options.start, end: base + options.end, close: false })
      : create({ highWaterMark: ENTRY_READ_BYTES, ...options });
}

/** "" for a bag at the archive root, "<root>/" for a bag inside one top folder, null: no bag. */
function findBagRoot(records: ZipRecord[]): string | null {
  const isFile = (path: string) => records.some((r) => r.path === path && r.kind === 'file');
  if (isFile('bagit.txt')) return '';
  const roots = new Set(records.filter((r) => !r.litter).map((r) => r.path.split('/')[0]));
  if (roots.size !== 1) return null;
  const [root] = roots;
  return isFile(`${root}/bagit.txt`) ? `${root}/` : null;
}

/**
 * Every file entry read and its CRC-32 checked, before a byte is written anywhere: a plain
 * ZIP has no other fixity, and a destination that publishes as it goes cannot take back the
 * files written before a damaged one. Throws the damaged entry's FerryError.
 */
async function checkEveryCrc({ zip, readWhole }: ArchiveSource, records: ZipRecord[]): Promise<void> {
  for (const record of records) {
    if (record.kind !== 'file') continue;
    if (canReadWhole(record.entry)) {
      await readZipEntryWhole(readWhole, record.entry, record.path, []);
      continue;
    }
    const stream = await openZipEntry(zip, record.entry, record.path);
    for await (const chunk of stream) void chunk;
  }
}

/** The open archive: yauzl for streams, and how entries are read whole. */
interface ArchiveSource {
  zip: yauzl.ZipFile;
  handle: FileHandle;
  readWhole: RawEntryReader;
}

function plainArchive(source: ArchiveSource, records: ZipRecord[]): UploadArchive {
  return makeArchive(source, 'plain', records.filter((r) => !r.litter), '', null, () => ({}), [], async () => null);
}

/** The bag's payload as validation found it: its files are exactly those `bag.hashes` holds. */
function bagArchive(source: ArchiveSource, bagRecords: ZipRecord[], bagRoot: string, bag: ValidatedBag): UploadArchive {
  const payload = bagRecords
    .filter((r) => r.path.startsWith('data/'))
    .map((r) => ({ ...r, path: r.path.slice('data/'.length) }))
    .filter((r) => r.kind === 'folder' || bag.hashes.has(r.path));
  const tagRecords = bagRecords.filter((r) => r.kind === 'file' && !r.path.includes('/'));
  const tagFiles = tagRecords.map((r) => ({ path: r.path, size: r.size, open: () => openZipEntry(source.zip, r.entry, bagRoot + r.path) }));
  const tags = { records: tagRecords, zipPrefix: bagRoot };
  return makeArchive(source, 'bag', payload, `${bagRoot}data/`, tags, (path) => ({ ...bag.hashes.get(path) }), bag.warnings, () => carriedRecord(tagFiles));
}

/** digests the job checks every byte against (entry-stream.ts), each stronger than a CRC-32 */
const STRONGER_THAN_CRC: ReadonlySet<string> = new Set(['md5', 'sha1', 'sha256', 'sha512']);

/** `records` are the payload with paths relative to what the writer should create. */
function makeArchive(
  { zip, handle, readWhole }: ArchiveSource,
  kind: UploadArchive['kind'],
  records: ZipRecord[],
  zipPrefix: string,
  /** a bag's tag files at its top, with the ZIP path they sit under; none for a plain ZIP */
  tags: { records: ZipRecord[]; zipPrefix: string } | null,
  hashesOf: (path: string) => Record<string, string>,
  warnings: string[],
  carried: () => Promise<string | null>,
): UploadArchive {
  const files = records.filter((r) => r.kind === 'file');
  const topLevel = [...new Set(records.map((r) => r.path.split('/')[0]!))];
  // explicit folder entries give their folder's mtime even when they come after its contents
  const folderTimes = new Map(records.filter((r) => r.kind === 'folder').map((r) => [r.path, r.mtime]));
  let closed = false;

  return {
    kind,
    topLevel,
    topLevelFiles: files.filter((r) => !r.path.includes('/')).map((r) => r.path),
    fileCount: files.length,
    totalBytes: files.reduce((sum, r) => sum + r.size, 0),
    warnings,
    carriedRecord: () => (closed ? Promise.reject(new Error('The uploaded ZIP was already closed.')) : carried()),
    readSmallFile: async (where, path, maxBytes) => {
      if (closed) throw new Error('The uploaded ZIP was already closed.');
      const found = where === 'payload' ? { records, zipPrefix } : tags;
      const record = found?.records.find((r) => r.kind === 'file' && r.path === path);
      if (!found || !record || record.size > maxBytes) return null;
      const chunks: Buffer[] = [];
      for await (const chunk of await openZipEntry(zip, record.entry, found.zipPrefix + record.path)) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    },
    entries: () => archiveEntries({ zip, readWhole, records, zipPrefix, folderTimes, hashesOf, isClosed: () => closed }),
    close: async () => {
      if (closed) return;
      closed = true;
      zip.close();
      await handle.close().catch(() => undefined);
    },
  };
}

/** What archiveEntries reads an archive's entries from. */
interface ArchiveEntriesSource {
  zip: yauzl.ZipFile;
  readWhole: RawEntryReader;
  records: ZipRecord[];
  zipPrefix: string;
  folderTimes: Map<string, Date | null>;
  hashesOf: (path: string) => Record<string, string>;
  isClosed: () => boolean;
}

/** The archive's entries, each folder before what it holds (a module generator, not a closure per upload: see singleEntry, target.ts). */
async function* archiveEntries({ zip, readWhole, records, zipPrefix, folderTimes, hashesOf, isClosed }: ArchiveEntriesSource): AsyncGenerator<Entry> {
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
          if (isClosed()) return Promise.reject(new Error('The uploaded ZIP was already closed.'));
          return openZipEntry(zip, record.entry, zipPrefix + record.path, checkCrc);
        },
        // each entry is read at its own offset (yauzl and the window read positionally)
        opensIndependently: true,
      };
      yield canReadWhole(record.entry)
        ? withReadWhole(file, (algorithms) => {
            if (isClosed()) return Promise.reject(new Error('The uploaded ZIP was already closed.'));
            return readZipEntryWhole(readWhole, record.entry, zipPrefix + record.path, algorithms, checkCrc);
          })
        : file;
    }
  }
}

function notAZip(error: unknown): FerryError {
  return new FerryError(400, 'not_a_zip', `The uploaded file is not a readable ZIP archive (${describeZipError(error)}).`);
}

