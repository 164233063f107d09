import { stat } from 'node:fs/promises';
import yauzl from 'yauzl';
import { decodeEntryName } from './entry-name.js';
import { formatBytes } from '../../../shared/format.js';
import type { Entry } from '../target.js';
import { FerryError, badRequest, isFerryError, tooLarge } from '../errors.js';
import type { Limits } from '../limits.js';
import { validateBag, type BagFile, type BagHashes } from './bag-validator.js';
import { describeZipError, openZipEntry } from './zip-entry-stream.js';

// An uploaded ZIP (already spooled to disk) read through its central directory, never
// extracted. Everything hostile or over a limit is refused before the archive is handed
// out, and a bag is fully validated first, so a writer never starts on a bad upload.

export interface UploadArchive {
  kind: 'bag' | 'plain';
  /** top-level names of the payload (for a bag, under data/) */
  topLevel: string[];
  fileCount: number;
  totalBytes: number;
  /** payload entries (for a bag: relative to data/, hashes from its manifests); re-iterable */
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

export async function openUploadZip(zipPath: string, limits: Limits): Promise<UploadArchive> {
  const fileSize = (await stat(zipPath)).size;
  if (fileSize > limits.maxUploadBytes) {
    throw tooLarge(`The uploaded ZIP is ${formatBytes(fileSize)}; the limit is ${formatBytes(limits.maxUploadBytes)}.`);
  }
  let zip: yauzl.ZipFile;
  try {
    zip = await yauzl.openPromise(zipPath, { lazyEntries: true, autoClose: false, decodeStrings: false, validateEntrySizes: true, strictFileNames: true });
  } catch (error) {
    throw notAZip(error);
  }
  try {
    if (zip.entryCount > limits.maxEntries) {
      throw tooLarge(`The uploaded ZIP holds ${zip.entryCount} entries; the limit is ${limits.maxEntries}.`);
    }
    const records = await readCentralDirectory(zip, fileSize, limits);
    const bagRoot = findBagRoot(records);
    if (bagRoot === null) return plainArchive(zip, records);
    const bagRecords = records.filter((r) => r.path.startsWith(bagRoot)).map((r) => ({ ...r, path: r.path.slice(bagRoot.length) }));
    const hashes = await validateBag(
      bagRecords
        .filter((r) => r.kind === 'file')
        .map((r): BagFile => ({ path: r.path, size: r.size, open: () => openZipEntry(zip, r.entry, bagRoot + r.path) })),
    );
    return bagArchive(zip, bagRecords, bagRoot, hashes);
  } catch (error) {
    zip.close();
    throw isFerryError(error) ? error : notAZip(error);
  }
}

async function readCentralDirectory(zip: yauzl.ZipFile, fileSize: number, limits: Limits): Promise<ZipRecord[]> {
  const records: ZipRecord[] = [];
  const kinds = new Map<string, 'file' | 'folder'>();
  /** folded (NFC, lower case) path → the spelling first seen */
  const spellings = new Map<string, string>();
  /** local header offset → the entry that owns it */
  const owners = new Map<number, string>();
  let totalBytes = 0;
  for await (const entry of zip.eachEntry()) {
    const name = decodeEntryName(entry.generalPurposeBitFlag, entry.fileName as unknown as Buffer, entry.extraFields);
    refuseHostile(entry, name, limits);
    // two records over one local header: the same bytes under two names (an alias, and the
    // overlap trick of "better zip bombs")
    const owner = owners.get(entry.relativeOffsetOfLocalHeader);
    if (owner !== undefined) {
      throw badRequest(`The ZIP entries "${owner}" and "${name}" share the same stored data; each entry must have its own.`);
    }
    owners.set(entry.relativeOffsetOfLocalHeader, name);

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
  if (totalBytes >= RATIO_MIN_BYTES && totalBytes / Math.max(fileSize, 1) > limits.maxCompressionRatio) {
    throw tooLarge(
      `The uploaded ZIP unpacks to ${Math.round(totalBytes / fileSize)} times its size, over the limit of ${limits.maxCompressionRatio} (a "zip bomb" guard).`,
    );
  }
  return records;
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

function plainArchive(zip: yauzl.ZipFile, records: ZipRecord[]): UploadArchive {
  return makeArchive(zip, 'plain', records, '', () => ({}));
}

function bagArchive(zip: yauzl.ZipFile, bagRecords: ZipRecord[], bagRoot: string, hashes: BagHashes): UploadArchive {
  const payload = bagRecords.filter((r) => r.path.startsWith('data/')).map((r) => ({ ...r, path: r.path.slice('data/'.length) }));
  return makeArchive(zip, 'bag', payload, `${bagRoot}data/`, (path) => ({ ...hashes.get(path) }));
}

/** `records` are the payload with paths relative to what the writer should create. */
function makeArchive(
  zip: yauzl.ZipFile,
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
      // parents first, whether the ZIP lists them or only implies them
      for (let i = 1; i <= segments.length; i++) {
        const path = segments.slice(0, i).join('/');
        if (i === segments.length && record.kind === 'file') break;
        if (yielded.has(path)) continue;
        yielded.add(path);
        yield folder(path);
      }
      if (record.kind === 'file') {
        yield {
          path: record.path,
          kind: 'file',
          size: record.size,
          mtime: record.mtime,
          hashes: hashesOf(record.path),
          open: () => {
            if (closed) return Promise.reject(new Error('The uploaded ZIP was already closed.'));
            return openZipEntry(zip, record.entry, zipPrefix + record.path);
          },
        };
      }
    }
  }

  return {
    kind,
    topLevel,
    fileCount: files.length,
    totalBytes: files.reduce((sum, r) => sum + r.size, 0),
    entries,
    close: async () => {
      if (closed) return;
      closed = true;
      zip.close();
    },
  };
}

function notAZip(error: unknown): FerryError {
  return new FerryError(400, 'not_a_zip', `The uploaded file is not a readable ZIP archive (${describeZipError(error)}).`);
}

