import { formatBytes } from '../../../shared/format.js';
import { badRequest, tooLarge } from '../errors.js';
import { isAscii } from '../name-fold.js';
import type { DirectoryTable } from './central-directory.js';
import { unsafePathReason } from '../plan/safe-path.js';
import { hasInvalidUtf8Name, shownName } from './entry-name.js';

// The one hostile-entry policy: which ZIP archives Ferry reads, and the sentence it gives for
// every one it does not. An upload is refused with that sentence before anything is written;
// an archive in the offline library is listed damaged with the same sentence and is neither
// browsed, transferred nor downloaded. Judged from the central directory alone.

export interface ArchiveLimits {
  maxEntries: number;
  maxCompressionRatio: number;
  maxTotalUncompressedBytes: number;
  /** every folder's id holds its whole path, so depth costs its square */
  maxPathLength: number;
}

/**
 * The records Ferry keeps, in directory order, paths normalised ('a//./b/' → 'a/b'). macOS
 * resource forks (`__MACOSX/`) are left out; desktop litter by name (`.DS_Store`, `Thumbs.db`,
 * `desktop.ini`) is kept and marked: a plain ZIP's is left out by its reader, a bag's is
 * payload where its manifests list it (bag-validator.ts).
 */
export interface AdmittedEntries {
  count: number;
  /** the record's number in the DirectoryTable */
  record: Int32Array;
  /** '/'-separated, no empty or '.' segment, no trailing slash */
  path: string[];
  /** 1: a folder (its name ended in '/') */
  folder: Uint8Array;
  /** 1: desktop litter by name */
  litter: Uint8Array;
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
/** APPNOTE 6.3.10's newest "version needed to extract" (6.3) */
const NEWEST_VERSION = 63;
/** the fixed part of a local file header (APPNOTE 4.3.7) */
const LOCAL_HEADER_BYTES = 30;

/** Before the directory is read: its claimed number of entries. */
export function checkEntryCount(entryCount: number, limits: ArchiveLimits): void {
  if (entryCount > limits.maxEntries) throw tooLarge(`The ZIP holds ${entryCount} entries; the limit is ${limits.maxEntries}.`);
}

/**
 * Every record of `table` judged; throws the FerryError (400 or 413) of the first problem,
 * else returns the entries to keep. `archiveSize`: the archive's bytes (without data in front).
 */
export function admitEntries(table: DirectoryTable, archiveSize: number, limits: ArchiveLimits): AdmittedEntries {
  checkEntryCount(table.count, limits);
  const { names, plain, flags, method, versionNeeded, externalAttributes, compressedSize, uncompressedSize, localHeaderOffset } = table;
  const admitted: AdmittedEntries = { count: 0, record: new Int32Array(table.count), path: [], folder: new Uint8Array(table.count), litter: new Uint8Array(table.count) };
  // Every path and implied folder seen, by its folded spelling: one look-up per entry finds
  // a repeat, a look-alike and a file-versus-folder clash alike.
  const seen = new FoldedPaths(table.count);
  // the folder the previous entry was in, known good (its ancestors checked)
  let lastParent = '';
  let totalBytes = 0;
  for (let i = 0; i < table.count; i++) {
    const name = names[i]!;
    if (!plain[i]) {
      const entry = table.entry(i);
      if (hasInvalidUtf8Name(entry.generalPurposeBitFlag, entry.fileNameRaw as Buffer, entry.extraFields)) {
        throw badRequest(`The ZIP entry ${shownName(name)} says its name is UTF-8, but the name's bytes are not valid UTF-8 (overlong or broken); the ZIP is damaged or hostile.`);
      }
      const problem = hostileName(name);
      if (problem !== null) throw badRequest(problem);
    }
    refuseByHeader(name, flags[i]!, method[i]!, versionNeeded[i]!, externalAttributes[i]!, limits);
    const uncompressed = uncompressedSize[i]!;
    totalBytes += uncompressed;
    if (totalBytes > limits.maxTotalUncompressedBytes) {
      throw tooLarge(`The ZIP would unpack to more than ${formatBytes(limits.maxTotalUncompressedBytes)}, the limit.`);
    }
    const ratio = uncompressed / Math.max(compressedSize[i]!, 1);
    if (uncompressed >= RATIO_MIN_BYTES && ratio > limits.maxCompressionRatio) {
      throw tooLarge(`The ZIP entry ${shownName(name)} unpacks to ${Math.round(ratio)} times its packed size, over the limit of ${limits.maxCompressionRatio} (a "zip bomb" guard).`);
    }

    const isFolder = name.charCodeAt(name.length - 1) === 0x2f;
    const path = plain[i] ? (isFolder ? name.slice(0, -1) : name) : normalise(name);
    if (path === '' || isResourceFork(path)) continue;
    const earlier = seen.intern(path, !isFolder);
    if (earlier >= 0) {
      if (seen.paths[earlier] !== path) throw lookAlikes(seen.paths[earlier]!, path);
      if (!seen.isFile[earlier] && isFolder) {
        // a repeated folder entry changes nothing (kept: the last one dates the folder)
        keep(admitted, i, path, true);
        continue;
      }
      throw badRequest(`The ZIP holds ${shownName(path)} twice; each path may appear only once.`);
    }
    const slash = path.lastIndexOf('/');
    // in the previous entry's folder (most are): compared in place, no slice
    if (slash < 0 ? lastParent !== '' : slash !== lastParent.length || !path.startsWith(lastParent)) {
      // a new folder: its ancestors, from the top, are folders and spelled one way
      for (let at = path.indexOf('/'); at >= 0 && at <= slash; at = path.indexOf('/', at + 1)) {
        const ancestor = path.slice(0, at);
        const known = seen.intern(ancestor, false);
        if (known < 0) continue;
        if (seen.paths[known] !== ancestor) throw lookAlikes(seen.paths[known]!, ancestor);
        if (seen.isFile[known]) throw badRequest(`The ZIP holds ${shownName(ancestor)} both as a file and as a folder.`);
      }
      lastParent = slash < 0 ? '' : path.slice(0, slash);
    }
    keep(admitted, i, path, isFolder);
  }
  refuseOverlaps(table, localHeaderOffset, compressedSize, archiveSize);
  if (totalBytes >= RATIO_MIN_BYTES && totalBytes / Math.max(archiveSize, 1) > limits.maxCompressionRatio) {
    throw tooLarge(`The ZIP unpacks to ${Math.round(totalBytes / archiveSize)} times its size, over the limit of ${limits.maxCompressionRatio} (a "zip bomb" guard).`);
  }
  return admitted;
}

function keep(admitted: AdmittedEntries, record: number, path: string, folder: boolean): void {
  const k = admitted.count++;
  admitted.record[k] = record;
  admitted.path.push(path);
  admitted.folder[k] = folder ? 1 : 0;
  admitted.litter[k] = !folder && isLitter(path) ? 1 : 0;
}

/** 'a//b', 'a/./b' and './a/' are 'a/b', 'a/b' and 'a'. */
function normalise(name: string): string {
  return name
    .split('/')
    .filter((segment) => segment !== '' && segment !== '.')
    .join('/');
}

/** macOS's resource forks beside a ZIP's files: never anyone's data. */
function isResourceFork(path: string): boolean {
  return path.charCodeAt(0) === 0x5f && (path === '__MACOSX' || path.startsWith('__MACOSX/'));
}

/** macOS and Windows desktop litter by name. */
export function isLitter(path: string): boolean {
  // '.DS_Store', 'Thumbs.db' (9 characters), 'desktop.ini' (11): no slice of most names
  const length = path.length - path.lastIndexOf('/') - 1;
  return (length === 9 || length === 11) && IGNORED_NAMES.has(path.slice(path.length - length).toLowerCase());
}

/** Why a (not plain) name could land outside its folder or cannot be written faithfully, or null (the rule: plan/safe-path.ts). */
function hostileName(name: string): string | null {
  const reason = unsafePathReason(name);
  if (reason === null) return null;
  // a control character is fixed where the ZIP was made
  return `The ZIP entry ${shownName(name)} ${reason}${reason.endsWith('Rename it') ? ' and zip it again' : ''}.`;
}

/** What the record's header says that Ferry will not write: long names, links, devices, encryption, other compression. */
function refuseByHeader(name: string, flags: number, method: number, versionNeeded: number, attributes: number, limits: ArchiveLimits): void {
  // a UTF-16 unit is at most 3 bytes of UTF-8: a shorter name cannot hold a long segment
  if (name.length * 3 > MAX_SEGMENT_BYTES) {
    for (const segment of name.split('/')) {
      if (Buffer.byteLength(segment, 'utf8') > MAX_SEGMENT_BYTES) {
        throw badRequest(`The ZIP entry ${shownName(name)} has a name longer than ${MAX_SEGMENT_BYTES} bytes, more than file systems allow.`);
      }
    }
  }
  const type = (attributes >>> 16) & S_IFMT;
  if (type === S_IFLNK) {
    throw badRequest(`The ZIP entry ${shownName(name)} is a symbolic link; Ferry does not follow links in ZIPs. Zip the files themselves instead.`);
  }
  if (type !== 0 && type !== S_IFREG && type !== S_IFDIR) {
    throw badRequest(`The ZIP entry ${shownName(name)} is a device, pipe or socket, not a regular file or folder; Ferry reads only files and folders.`);
  }
  if (flags & 0x1) throw badRequest(`The ZIP entry ${shownName(name)} is encrypted (password-protected); Ferry cannot read it. Use an unencrypted ZIP.`);
  if (method !== 0 && method !== 8) {
    throw badRequest(`The ZIP entry ${shownName(name)} uses compression method ${method}; Ferry reads only stored and deflated entries.`);
  }
  // a version no published APPNOTE defines: a feature Ferry cannot know it reads right (unzip and Python refuse it too)
  if (versionNeeded > NEWEST_VERSION) {
    throw badRequest(
      `The ZIP entry ${shownName(name)} needs ZIP version ${Math.floor(versionNeeded / 10)}.${versionNeeded % 10} to be read, newer than any published ZIP specification (${NEWEST_VERSION / 10}); Ferry cannot be sure it reads it right.`,
    );
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
function lookAlikes(earlier: string, later: string): Error {
  return badRequest(`The ZIP holds ${shownName(earlier)} and ${shownName(later)}, names that differ only in case or Unicode form; rename one of them.`);
}

/**
 * Paths by their folded spelling (NFC, lower case: what macOS and Windows take as one name),
 * in an open-addressing table of their numbers. An ASCII path (most) is hashed and compared
 * through its lower-case character codes, without a folded copy: 100,000 entries are judged
 * without 100,000 strings and Map entries (a Map here doubled the time to index an archive).
 */
class FoldedPaths {
  readonly paths: string[] = [];
  /** 1: the path is a file */
  isFile: Uint8Array;
  private hashes: Int32Array;
  /** the folded spelling of each path that is not ASCII (few); an ASCII one is folded on the fly */
  private readonly folded = new Map<number, string>();
  private slots: Int32Array;

  constructor(expected: number) {
    let size = 1024;
    while (size < expected * 2) size *= 2;
    this.slots = new Int32Array(size).fill(-1);
    this.isFile = new Uint8Array(size / 2);
    this.hashes = new Int32Array(size / 2);
  }

  /** The number of the path seen under `path`'s folded spelling, or -1 when none was (then `path` is added). */
  intern(path: string, file: boolean): number {
    const folded = isAscii(path) ? null : path.normalize('NFC').toLowerCase();
    const hash = hashFolded(folded ?? path);
    const { slots, hashes } = this;
    const mask = slots.length - 1;
    let slot = hash & mask;
    for (let k = slots[slot]!; k >= 0; slot = (slot + 1) & mask, k = slots[slot]!) {
      if (hashes[k] === hash && this.sameFolded(k, path, folded)) return k;
    }
    const k = this.paths.length;
    slots[slot] = k;
    this.paths.push(path);
    this.isFile[k] = file ? 1 : 0;
    hashes[k] = hash;
    if (folded !== null) this.folded.set(k, folded);
    if ((k + 1) * 2 >= slots.length) this.grow();
    return -1;
  }

  private sameFolded(k: number, path: string, folded: string | null): boolean {
    const other = this.folded.get(k) ?? null;
    if (folded === null && other === null) return equalIgnoringAsciiCase(this.paths[k]!, path);
    return (other ?? this.paths[k]!.toLowerCase()) === (folded ?? path.toLowerCase());
  }

  /** Twice the slots (and room for as many paths), every path placed again. */
  private grow(): void {
    const slots = new Int32Array(this.slots.length * 2).fill(-1);
    const mask = slots.length - 1;
    const count = this.paths.length;
    for (let k = 0; k < count; k++) {
      let slot = this.hashes[k]! & mask;
      while (slots[slot]! >= 0) slot = (slot + 1) & mask;
      slots[slot] = k;
    }
    const isFile = new Uint8Array(slots.length / 2);
    isFile.set(this.isFile);
    const hashes = new Int32Array(slots.length / 2);
    hashes.set(this.hashes);
    this.slots = slots;
    this.isFile = isFile;
    this.hashes = hashes;
  }
}

/** FNV-1a over the character codes, A–Z as a–z (the rest of a folded string is already lower case); a signed 32-bit value. */
function hashFolded(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    hash = Math.imul(hash ^ (code >= 0x41 && code <= 0x5a ? code | 0x20 : code), 0x01000193);
  }
  return hash;
}

function equalIgnoringAsciiCase(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y && (x | 0x20) !== (y | 0x20)) return false;
    if (x !== y && !((x | 0x20) >= 0x61 && (x | 0x20) <= 0x7a)) return false;
  }
  return true;
}

/**
 * Entries whose stored bytes overlap: one entry's local header inside another's data, or
 * two records over one local header (the same bytes under two names). No tool writes that;
 * it is how the "better zip bomb" makes thousands of entries out of one kernel (each entry
 * covering all those after it) while every entry alone looks harmless, and under the ratio
 * limit it would still be written out many times over. Also: an entry whose bytes would lie
 * past the end, refused now, not after the files before it were written, or in the central
 * directory or the archive comment after it (no writer puts them there; CPython refuses it
 * as "overlapped entries").
 */
function refuseOverlaps(table: DirectoryTable, starts: Float64Array, packed: Float64Array, archiveSize: number): void {
  const directoryStart = Math.min(table.directoryOffset, archiveSize);
  const count = table.count;
  let order: Uint32Array | null = null;
  for (let i = 1; i < count; i++) {
    if (starts[i]! < starts[i - 1]!) {
      // not in archive order (rare): sorted by where their bytes start
      order = new Uint32Array(count).map((_, k) => k);
      order.sort((a, b) => starts[a]! - starts[b]!);
      break;
    }
  }
  const at = (k: number) => (order === null ? k : order[k]!);
  const end = (i: number) => starts[i]! + LOCAL_HEADER_BYTES + packed[i]!;
  for (let k = 0; k < count; k++) {
    const i = at(k);
    if (!Number.isSafeInteger(starts[i]!) || end(i) > directoryStart) {
      const where = !Number.isSafeInteger(starts[i]!) || end(i) > archiveSize ? 'lies past the end of the file' : "runs into the archive's central directory or comment";
      throw badRequest(`The ZIP entry ${shownName(table.names[i]!)} ${where}; the ZIP is truncated or corrupt.`);
    }
    if (k === 0) continue;
    const before = at(k - 1);
    if (starts[i] === starts[before]) {
      throw badRequest(`The ZIP entries ${shownName(table.names[before]!)} and ${shownName(table.names[i]!)} share the same stored data; each entry must have its own.`);
    }
    if (starts[i]! < end(before)) {
      throw badRequest(
        `The ZIP entries ${shownName(table.names[before]!)} and ${shownName(table.names[i]!)} overlap in the archive (one is stored inside the other); each entry must have its own bytes.`,
      );
    }
  }
}

