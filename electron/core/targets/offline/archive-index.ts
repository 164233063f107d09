import type { Readable } from 'node:stream';
import { stat } from 'node:fs/promises';
import yauzl from 'yauzl';
import { checkEndRecords } from '../../zip/upload-reader.js';
import { parseManifest } from '../../zip/bagit-format.js';
import { PROVENANCE_FILE, type Provenance } from '../../zip/bag-writer.js';
import { readCentralDirectory } from './central-directory.js';

// What Ferry knows of one archive in the library, read from its central directory only:
// listing never touches an entry's data. For a bag, the payload under data/ and the hashes
// of its manifests and provenance file (small tag files, the only data read here).

export interface IndexedEntry {
  /**
   * path relative to what the archive shows ('/'-separated, no trailing slash): the payload
   * root, or for a bag whose payload is one folder, that folder (see ArchiveIndex.payloadTop)
   */
  path: string;
  kind: 'file' | 'folder';
  size: number;
  compressedSize: number;
  mtime: Date;
  /** the central-directory record, to open the bytes later; null for implied folders */
  record: yauzl.Entry | null;
}

export interface BagInfo {
  /** the bag's folder in the ZIP ('' when bagit.txt sits at the root) */
  root: string;
  /** manifest hashes by algorithm, then payload path (relative to data/) */
  manifests: Map<string, Map<string, string>>;
  provenance: Provenance | null;
}

export interface ArchiveIndex {
  entries: Map<string, IndexedEntry>;
  /** children paths of each folder path ('' = payload root), sorted */
  children: Map<string, string[]>;
  bag: BagInfo | null;
  /**
   * A bag's payload is `data/<resource title>/…` and the archive is already titled by that
   * resource: its one top folder is not shown again, entries are relative to it. This is
   * that folder's name (null when the payload is not one folder alone). Manifest,
   * provenance and fixity paths are relative to data/, so they include it: see payloadPathOf.
   */
  payloadTop: string | null;
  /** why the archive can't be browsed (truncated, hostile names, zip bomb), or null */
  damage: string | null;
  encryptedEntries: number;
}

export interface IndexLimits {
  maxCompressionRatio: number;
  maxTotalUncompressedBytes: number;
  maxEntries: number;
}

const RATIO_FLOOR_BYTES = 1024 * 1024;
/** the fixed part of a local file header (APPNOTE 4.3.7) */
const LOCAL_HEADER_BYTES = 30;
const TAG_FILE_LIMIT = 64 * 1024 * 1024;

export async function openZip(file: string): Promise<yauzl.ZipFile> {
  // end records yauzl would follow past 2^53 threw inside its read callback (uncaught)
  await checkEndRecords(file, (await stat(file)).size);
  return new Promise((resolve, reject) => {
    yauzl.open(file, { lazyEntries: true, autoClose: false, decodeStrings: true, validateEntrySizes: true, strictFileNames: false }, (error, zip) =>
      error || !zip ? reject(error ?? new Error('no zip')) : resolve(zip),
    );
  });
}

export function openEntryStream(zip: yauzl.ZipFile, record: yauzl.Entry): Promise<Readable> {
  return new Promise((resolve, reject) => {
    zip.openReadStream(record, (error, stream) => (error || !stream ? reject(error ?? new Error('no stream')) : resolve(stream)));
  });
}

/** A sentence for the UI out of yauzl's terse errors. */
export function describeZipError(error: unknown): string {
  // an OS error's message names the file by its absolute path: only its code is shown
  const code = (error as NodeJS.ErrnoException | null)?.code;
  const message = typeof code === 'string' && /^E[A-Z]+$/.test(code) ? `read error ${code}` : error instanceof Error ? error.message.replace(/\.+$/, '') : String(error);
  if (/end of central directory record signature not found/i.test(message)) return 'The archive is truncated or not a ZIP file (no end-of-central-directory record).';
  if (/invalid relative path|absolute path/i.test(message)) return `The archive holds an entry whose path leaves the archive (${message}).`;
  if (/encrypted/i.test(message)) return 'The archive holds encrypted entries, which Ferry cannot read.';
  return `The archive is damaged: ${message}.`;
}

const DOT_DOT_SEGMENT = /(?:^|\/)\.\.(?:\/|$)/;

function unsafeName(name: string): string | null {
  if (name.includes('\0')) return 'a NUL character';
  if (name.includes('\\')) return 'a backslash';
  if (name.startsWith('/') || /^[A-Za-z]:/.test(name)) return 'an absolute path';
  if (DOT_DOT_SEGMENT.test(name)) return "a '..' segment";
  // As the upload reader: what a file system may make of a segment, Unicode-normalised
  // (NFKC maps fullwidth dots to '.') with trailing dots and spaces dropped (Windows reads
  // '.. ' as '..'). A segment of only dots and spaces could leave its folder once extracted.
  for (const segment of name.normalize('NFKC').split('/')) {
    if (segment !== '.' && segment !== '' && /^[. ]+$/.test(segment)) return "a folder name made only of dots and spaces (some systems read it as '..')";
  }
  return null;
}

async function readSmallEntry(zip: yauzl.ZipFile, record: yauzl.Entry): Promise<string> {
  if (record.uncompressedSize > TAG_FILE_LIMIT) throw new Error(`tag file ${record.fileName} is too large`);
  const chunks: Buffer[] = [];
  for await (const chunk of await openEntryStream(zip, record)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function indexArchive(file: string, limits: IndexLimits): Promise<ArchiveIndex> {
  const result: ArchiveIndex = { entries: new Map(), children: new Map([['', []]]), bag: null, payloadTop: null, damage: null, encryptedEntries: 0 };
  let zip: yauzl.ZipFile;
  try {
    zip = await openZip(file);
  } catch (error) {
    result.damage = describeZipError(error);
    return result;
  }
  try {
    let total = 0;
    if (zip.entryCount > limits.maxEntries) throw new Error(`it holds more than ${limits.maxEntries} entries`);
    const records = await readCentralDirectory(file, zip, {
      onEntry: (record, index) => {
        if (index >= limits.maxEntries) throw new Error(`it holds more than ${limits.maxEntries} entries`);
        total += record.uncompressedSize;
      },
    });
    const fileSize = (zip as unknown as { fileSize: number }).fileSize;
    for (const record of records) {
      const problem = unsafeName(record.fileName);
      if (problem) {
        result.damage = `The archive holds an entry whose name has ${problem} ('${record.fileName.slice(0, 120)}'); Ferry does not open it.`;
        return result;
      }
      if (record.uncompressedSize >= RATIO_FLOOR_BYTES && record.uncompressedSize > limits.maxCompressionRatio * Math.max(1, record.compressedSize)) {
        const ratio = Math.round(record.uncompressedSize / Math.max(1, record.compressedSize));
        result.damage = `The archive looks like a zip bomb: '${record.fileName.slice(0, 120)}' claims a compression ratio of 1:${ratio}.`;
        return result;
      }
      // yauzl hands an entry's 64-bit local header offset to fs.read unchecked: past 2^53 that
      // throws inside an fs callback (uncaught, the process ends). Data past the end is damage.
      if (!Number.isSafeInteger(record.relativeOffsetOfLocalHeader) || record.relativeOffsetOfLocalHeader + LOCAL_HEADER_BYTES + record.compressedSize > fileSize) {
        result.damage = `The archive's entry '${record.fileName.slice(0, 120)}' points past the end of the file; the archive is damaged.`;
        return result;
      }
      if (record.isEncrypted()) result.encryptedEntries++;
    }
    if (total > limits.maxTotalUncompressedBytes) {
      result.damage = `The archive claims ${total} bytes uncompressed, more than Ferry's limit of ${limits.maxTotalUncompressedBytes}.`;
      return result;
    }
    // Against the archive's own size, not the sum of the entries' compressed sizes: entries
    // whose stored bytes overlap (every entry covering all those after it, "better zip bomb")
    // each look like 1:1, yet together claim far more than the file holds.
    if (total >= RATIO_FLOOR_BYTES && total > limits.maxCompressionRatio * Math.max(1, fileSize)) {
      result.damage = `The archive looks like a zip bomb: it would unpack to ${Math.round(total / Math.max(1, fileSize))} times its size.`;
      return result;
    }

    const bagRoot = findBagRoot(records);
    let payloadPrefix = bagRoot === null ? '' : `${bagRoot ? `${bagRoot}/` : ''}data/`;
    if (bagRoot !== null) {
      result.bag = await readBag(zip, records, bagRoot);
      result.payloadTop = soleTopFolder(records, payloadPrefix);
      if (result.payloadTop !== null) payloadPrefix += `${result.payloadTop}/`;
    }

    for (const record of records) {
      if (!record.fileName.startsWith(payloadPrefix)) continue;
      const isFolder = record.fileName.endsWith('/');
      // 'a//b' and 'a/./b' are 'a/b' (as the upload reader reads them): an empty segment
      // would be an entry without a title, its own parent
      const relative = record.fileName
        .slice(payloadPrefix.length)
        .split('/')
        .filter((segment) => segment !== '' && segment !== '.')
        .join('/');
      if (!relative || /(^|\/)(__MACOSX)(\/|$)/.test(relative)) continue;
      addEntry(result, {
        path: relative,
        kind: isFolder ? 'folder' : 'file',
        size: isFolder ? 0 : record.uncompressedSize,
        compressedSize: record.compressedSize,
        mtime: record.getLastModDate(),
        record: isFolder ? null : record,
      });
    }
    for (const list of result.children.values()) list.sort(byCodePoint);
    return result;
  } catch (error) {
    result.damage = describeZipError(error);
    return result;
  } finally {
    zip.close();
  }
}

/** The path of an entry relative to the payload (data/), as manifests and provenance name it. */
export function payloadPathOf(index: Pick<ArchiveIndex, 'payloadTop'>, entryPath: string): string {
  return index.payloadTop === null ? entryPath : `${index.payloadTop}/${entryPath}`;
}

/** The one folder under `prefix` when everything below `prefix` sits inside it, else null. */
function soleTopFolder(records: yauzl.Entry[], prefix: string): string | null {
  let top: string | null = null;
  for (const { fileName } of records) {
    if (!fileName.startsWith(prefix)) continue;
    const relative = fileName.slice(prefix.length);
    if (!relative || /^__MACOSX(\/|$)/.test(relative)) continue;
    const slash = relative.indexOf('/');
    // a file directly in data/ (no slash): the payload is not one folder alone
    if (slash <= 0) return null;
    const first = relative.slice(0, slash);
    if (top === null) top = first;
    else if (first !== top) return null;
  }
  return top;
}

/** Adds an entry and any folders it implies, so every path has its parents. */
function addEntry(index: ArchiveIndex, entry: IndexedEntry): void {
  const existing = index.entries.get(entry.path);
  if (existing) {
    if (existing.kind === 'folder' && entry.kind === 'folder' && existing.record === null) existing.mtime = entry.mtime;
    return;
  }
  index.entries.set(entry.path, entry);
  if (entry.kind === 'folder') index.children.set(entry.path, index.children.get(entry.path) ?? []);
  const slash = entry.path.lastIndexOf('/');
  const parent = slash < 0 ? '' : entry.path.slice(0, slash);
  if (parent && !index.entries.has(parent)) {
    addEntry(index, { path: parent, kind: 'folder', size: 0, compressedSize: 0, mtime: entry.mtime, record: null });
  }
  const siblings = index.children.get(parent) ?? [];
  siblings.push(entry.path);
  index.children.set(parent, siblings);
}

/** '' for bagit.txt at the root, the folder's name for one top folder holding it, else null. */
function findBagRoot(records: yauzl.Entry[]): string | null {
  // one pass, no Set of 100,000 names: the one top folder (if there is just one), and bagit.txt
  let top: string | null = null;
  let tops = 0;
  for (const { fileName } of records) {
    if (fileName === 'bagit.txt') return '';
    if (tops > 1) continue;
    const slash = fileName.indexOf('/');
    const first = slash < 0 ? fileName : fileName.slice(0, slash);
    if (!first || first === '__MACOSX' || first === top) continue;
    top = first;
    tops++;
  }
  if (top === null || tops > 1) return null;
  const bagit = `${top}/bagit.txt`;
  return records.some((record) => record.fileName === bagit) ? top : null;
}

async function readBag(zip: yauzl.ZipFile, records: yauzl.Entry[], root: string): Promise<BagInfo> {
  const prefix = root ? `${root}/` : '';
  const manifests = new Map<string, Map<string, string>>();
  let provenance: Provenance | null = null;
  for (const record of records) {
    if (!record.fileName.startsWith(prefix)) continue;
    const name = record.fileName.slice(prefix.length);
    const manifest = /^manifest-([a-z0-9]+)\.txt$/.exec(name);
    if (manifest) {
      const hashes = new Map<string, string>();
      for (const line of parseManifest(await readSmallEntry(zip, record)).lines) {
        if (line.path.startsWith('data/')) hashes.set(line.path.slice('data/'.length), line.hex);
      }
      manifests.set(manifest[1] as string, hashes);
    } else if (name === PROVENANCE_FILE) {
      try {
        provenance = JSON.parse(await readSmallEntry(zip, record)) as Provenance;
      } catch {
        provenance = null;
      }
    }
  }
  return { root, manifests, provenance };
}

/** Plain code-point order: stable across locales, and fast on 100,000 names. */
export function byCodePoint(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
