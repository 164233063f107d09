import type { Readable } from 'node:stream';
import type yauzl from 'yauzl';
import { isFerryError } from '../../errors.js';
import { parseManifest } from '../../bag/bagit-format.js';
import { bagDownloadView, PROVENANCE_FILE, type BagProvenanceV1 as Provenance } from '../../provenance/format.js';
import { scanCentralDirectory, type DirectoryTable } from '../../zip/central-directory.js';
import { admitEntries, checkEntryCount, type AdmittedEntries, type ArchiveLimits } from '../../zip/entry-policy.js';
import { openArchive } from '../../zip/open-archive.js';
import type { ResourceNode } from '../../target.js';
import { NodeColumns, ROOT_CONTAINER } from '../../node-columns.js';
import { writeByteStringAsBase64url } from '../../base64url.js';
import { isAscii } from '../../name-fold.js';

// What Ferry knows of one archive in the library, read from its central directory only:
// listing never touches an entry's data. For a bag, the payload under data/ and the hashes
// of its manifests and provenance file (small tag files, the only data read here).

export interface IndexedEntry {
  /**
   * path relative to what the archive shows ('/'-separated, no trailing slash): the payload
   * root, or for a bag whose payload is one folder, that folder (see ArchiveIndex.payloadTop)
   */
  readonly path: string;
  readonly kind: 'file' | 'folder';
  readonly size: number;
  readonly compressedSize: number;
  /** read from the central directory on first use (a listing never needs it) */
  readonly mtime: Date;
  /** the central-directory record, to open the bytes later; null for folders */
  readonly record: yauzl.Entry | null;
}

export interface BagInfo {
  /** the bag's folder in the ZIP ('' when bagit.txt sits at the root) */
  root: string;
  /** manifest hashes by algorithm, then payload path (relative to data/) */
  manifests: Map<string, Map<string, string>>;
  provenance: Provenance | null;
}

export interface ArchiveIndex {
  /** every entry by path, in the order the archive first names them (made on first use) */
  readonly entries: Map<string, IndexedEntry>;
  /** children paths of each folder path ('' = payload root), sorted (made on first use) */
  readonly children: Map<string, string[]>;
  bag: BagInfo | null;
  /**
   * A bag's payload is `data/<resource title>/…` and the archive is already titled by that
   * resource: its one top folder is not shown again, entries are relative to it. This is
   * that folder's name (null when the payload is not one folder alone). Manifest,
   * provenance and fixity paths are relative to data/, so they include it: see payloadPathOf.
   */
  payloadTop: string | null;
  /**
   * why the archive can't be browsed, transferred or downloaded, or null: the sentence the
   * upload reader gives for the same archive (entry-policy.ts), or what is wrong with its structure
   */
  damage: string | null;
  /** how many entries (files and folders) the index holds */
  readonly entryCount: number;
  /** how many of them are files */
  readonly fileCount: number;
  /** The entry at `path`, without making the map of every entry. */
  find(path: string): IndexedEntry | undefined;
  /**
   * The listing below `folder` ('' = payload root) in code-point order, depth first when
   * `recursive`, a batch of at most `batchSize` nodes at a time. Ids are the archive's id,
   * '-', and the entry path's UTF-8 in base64url; `folderId` is the id of `folder` itself.
   */
  nodeBatches(archiveId: string, folder: string, folderId: string, recursive: boolean, batchSize: number): Generator<ResourceNode[]>;
  /** The same rows as nodeBatches of the whole payload ('' recursively, under the archive's id), as columns. */
  columnBatches(archiveId: string, batchSize: number): Generator<NodeColumns>;
}

/** the limits an upload is held to (entry-policy.ts) */
export type IndexLimits = ArchiveLimits;

const TAG_FILE_LIMIT = 64 * 1024 * 1024;

/** The archive opened for its entries' bytes, as every ZIP in Ferry is (open-archive.ts). */
export async function openZip(file: string): Promise<yauzl.ZipFile> {
  return (await openArchive(file)).zip;
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

async function readSmallEntry(zip: yauzl.ZipFile, record: yauzl.Entry): Promise<string> {
  if (record.uncompressedSize > TAG_FILE_LIMIT) throw new Error(`tag file ${record.fileName} is too large`);
  const chunks: Buffer[] = [];
  for await (const chunk of await openEntryStream(zip, record)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function indexArchive(file: string, limits: IndexLimits): Promise<ArchiveIndex> {
  const result = new Index();
  let zip: yauzl.ZipFile;
  let table: DirectoryTable;
  let admitted: AdmittedEntries;
  try {
    const opened = await openArchive(file);
    zip = opened.zip;
    try {
      // the count's limit before the directory is read (its table is as long as the count)
      checkEntryCount(zip.entryCount, limits);
      table = await scanCentralDirectory(file, zip, opened.base);
      admitted = admitEntries(table, opened.size, limits);
    } catch (error) {
      zip.close();
      throw error;
    }
  } catch (error) {
    // the policy's own sentence, as an upload of this archive is refused with
    result.damage = isFerryError(error) ? error.message : describeZipError(error);
    return result;
  }
  try {
    const { names } = table;
    const bagRoot = findBagRoot(names);
    let payloadPrefix = bagRoot === null ? '' : `${bagRoot ? `${bagRoot}/` : ''}data/`;
    if (bagRoot !== null) {
      result.bag = await readBag(zip, table, bagRoot);
      result.payloadTop = soleTopFolder(names, payloadPrefix);
      if (result.payloadTop !== null) payloadPrefix += `${result.payloadTop}/`;
    }
    result.tree = buildTree(table, admitted, payloadPrefix);
    return result;
  } catch (error) {
    result.tree = null;
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
function soleTopFolder(names: readonly string[], prefix: string): string | null {
  let top: string | null = null;
  for (const fileName of names) {
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

/** '' for bagit.txt at the root, the folder's name for one top folder holding it, else null. */
function findBagRoot(names: readonly string[]): string | null {
  // one pass, no Set of 100,000 names: the one top folder (if there is just one), and bagit.txt
  let top: string | null = null;
  let tops = 0;
  for (const fileName of names) {
    if (fileName === 'bagit.txt') return '';
    if (tops > 1) continue;
    const slash = fileName.indexOf('/');
    if (slash === 0) continue;
    if (top !== null && slash === top.length && fileName.startsWith(top)) continue;
    const first: string = slash < 0 ? fileName : fileName.slice(0, slash);
    if (!first || first === '__MACOSX' || first === top) continue;
    top = first;
    tops++;
  }
  if (top === null || tops > 1) return null;
  const bagit = `${top}/bagit.txt`;
  return names.includes(bagit) ? top : null;
}

async function readBag(zip: yauzl.ZipFile, table: DirectoryTable, root: string): Promise<BagInfo> {
  const prefix = root ? `${root}/` : '';
  const manifests = new Map<string, Map<string, string>>();
  let provenance: Provenance | null = null;
  for (let i = 0; i < table.count; i++) {
    const fileName = table.names[i]!;
    if (!fileName.startsWith(prefix)) continue;
    const name = fileName.slice(prefix.length);
    const manifest = /^manifest-([a-z0-9]+)\.txt$/.exec(name);
    if (manifest) {
      const hashes = new Map<string, string>();
      for (const line of parseManifest(await readSmallEntry(zip, table.entry(i))).lines) {
        if (line.path.startsWith('data/')) hashes.set(line.path.slice('data/'.length), line.hex);
      }
      manifests.set(manifest[1] as string, hashes);
    } else if (name === PROVENANCE_FILE) {
      provenance = bagDownloadView(await readSmallEntry(zip, table.entry(i)));
    }
  }
  return { root, manifests, provenance };
}

/** Plain code-point order: stable across locales, and fast on 100,000 names. */
export function byCodePoint(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

// ---- the payload tree

// Each record under the payload, and each folder its path implies, is a candidate in its
// folder's group, numbered in the order the archive first names it. Sorting a group by path
// (stable) puts the candidates of one path next to each other; the first one wins, as if
// entries were added in archive order and a path already present ignored: a file named
// before a folder of the same name hides that folder's contents from the listing. A folder's
// date is that of the last explicit folder record of its path, else of the first entry that
// implied it.

const FILE = 0;
const FOLDER = 1;
const IMPLIED = 2;

interface Group {
  path: string;
  /** candidates, then (once built) the winners only, sorted by path */
  members: number[];
  /** (once built) where in members the folders are that hold entries of their own, and their groups */
  subfolderAt: number[];
  subfolders: Group[];
}

class PayloadTree {
  readonly paths: string[] = [];
  /** FILE, FOLDER or IMPLIED */
  kinds: Uint8Array;
  /** the candidate's record (for an implied folder: the record that implied it) */
  records: Int32Array;
  /** 1 when the path is ASCII (its UTF-8 is its characters) */
  ascii: Uint8Array;
  /** winners: the record whose date is the entry's date */
  dateRecords!: Int32Array;
  winner!: Uint8Array;
  readonly groups = new Map<string, Group>();
  readonly root: Group = { path: '', members: [], subfolderAt: [], subfolders: [] };
  private made: (IndexedEntry | undefined)[] = [];
  /** every winner's id, one after another (see idOf) */
  private ids: string | null = null;
  private idPrefix = '';
  private idStart: Uint32Array | null = null;
  private idEnd: Uint32Array | null = null;
  private columns: ColumnBytes | null = null;
  private utf8: Map<number, Buffer> | null = null;
  private payloadOrder: ListingOrder | null = null;

  constructor(readonly table: DirectoryTable) {
    this.groups.set('', this.root);
    // one candidate per record, and a few implied folders: grown when there are more
    const capacity = table.count + 64;
    this.kinds = new Uint8Array(capacity);
    this.records = new Int32Array(capacity);
    this.ascii = new Uint8Array(capacity);
  }

  add(path: string, kind: number, record: number, ascii: number): number {
    const candidate = this.paths.length;
    if (candidate === this.kinds.length) this.grow();
    this.paths.push(path);
    this.kinds[candidate] = kind;
    this.records[candidate] = record;
    this.ascii[candidate] = ascii;
    return candidate;
  }

  private grow(): void {
    const capacity = this.kinds.length * 2;
    const kinds = new Uint8Array(capacity);
    kinds.set(this.kinds);
    const records = new Int32Array(capacity);
    records.set(this.records);
    const ascii = new Uint8Array(capacity);
    ascii.set(this.ascii);
    this.kinds = kinds;
    this.records = records;
    this.ascii = ascii;
  }

  /** The group of folder `path`, made (with the implied folder and its parents) when new. */
  groupFor(path: string, record: number, ascii: number): Group {
    const known = this.groups.get(path);
    if (known !== undefined) return known;
    // the folders missing from `path` up to the first that exists, made from the top down
    // (a loop, not recursion: a hostile name may nest 30,000 folders deep)
    const missing = [path];
    let parent: Group | undefined;
    for (let folder = path; ; ) {
      const slash = folder.lastIndexOf('/');
      if (slash < 0) {
        parent = this.root;
        break;
      }
      folder = folder.slice(0, slash);
      parent = this.groups.get(folder);
      if (parent !== undefined) break;
      missing.push(folder);
    }
    let group = parent;
    for (let k = missing.length - 1; k >= 0; k--) {
      group = { path: missing[k]!, members: [], subfolderAt: [], subfolders: [] };
      this.groups.set(group.path, group);
      parent.members.push(this.add(group.path, IMPLIED, record, ascii));
      parent = group;
    }
    return group;
  }

  /** Sorts each group, keeps the first candidate of each path, dates the folders, and finds the sub-folders to list. */
  finish(): void {
    const { paths, kinds, records, groups } = this;
    const count = paths.length;
    this.winner = new Uint8Array(count);
    this.dateRecords = new Int32Array(count);
    const byPath = (a: number, b: number) => {
      const x = paths[a]!;
      const y = paths[b]!;
      return x < y ? -1 : x > y ? 1 : 0;
    };
    for (const group of this.groups.values()) {
      const members = group.members.sort(byPath);
      let kept = 0;
      for (let i = 0; i < members.length; ) {
        const first = members[i]!;
        let date = records[first]!;
        let j = i + 1;
        while (j < members.length && paths[members[j]!] === paths[first]) {
          // a later explicit folder record of a folder's path dates it
          if (kinds[first] !== FILE && kinds[members[j]!] === FOLDER) date = records[members[j]!]!;
          j++;
        }
        this.winner[first] = 1;
        this.dateRecords[first] = date;
        if (kinds[first] !== FILE) {
          // a file of a folder's path hides the folder: only a winning folder's group is listed
          const subfolder = groups.get(paths[first]!);
          if (subfolder !== undefined) {
            group.subfolderAt.push(kept);
            group.subfolders.push(subfolder);
          }
        }
        members[kept++] = first;
        i = j;
      }
      members.length = kept;
    }
  }

  /** The whole payload in listing order (see ListingOrder), made on first use and kept. */
  depthFirst(): ListingOrder {
    if (this.payloadOrder === null) this.payloadOrder = walkDepthFirst(this.root);
    return this.payloadOrder;
  }

  entryOf(candidate: number): IndexedEntry {
    let entry = this.made[candidate];
    if (entry === undefined) {
      entry = new TreeEntry(this, candidate);
      this.made[candidate] = entry;
    }
    return entry;
  }

  find(path: string): number {
    if (path === '') return -1;
    const slash = path.lastIndexOf('/');
    const group = this.groups.get(slash < 0 ? '' : path.slice(0, slash));
    if (group === undefined) return -1;
    const { members } = group;
    let low = 0;
    let high = members.length - 1;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      const other = this.paths[members[middle]!]!;
      if (other === path) return members[middle]!;
      if (other < path) low = middle + 1;
      else high = middle - 1;
    }
    return -1;
  }

  /**
   * The id of candidate `c`: `idPrefix` then base64url of its path's UTF-8. All ids are
   * written as bytes into one buffer, decoded once, and each is a slice of that string
   * (no encoding call, concatenation or copy per id).
   */
  idOf(c: number, idPrefix: string): string {
    if (this.ids === null || this.idPrefix !== idPrefix) this.makeIds(idPrefix);
    return this.ids!.substring(this.idStart![c]!, this.idEnd![c]!);
  }

  /**
   * The UTF-8 of the winners' non-ASCII paths (an ASCII path's characters are its bytes),
   * made once for the ids and the column bytes. Only the few such paths: a Map, as reads
   * past a short array's end are slow in V8.
   */
  private nonAsciiUtf8(): Map<number, Buffer> {
    if (this.utf8 !== null) return this.utf8;
    const { paths, ascii, winner } = this;
    const utf8 = new Map<number, Buffer>();
    for (let c = 0; c < paths.length; c++) if (winner[c] && !ascii[c]) utf8.set(c, Buffer.from(paths[c]!, 'utf8'));
    this.utf8 = utf8;
    return utf8;
  }

  private makeIds(idPrefix: string): void {
    const { paths, ascii, winner } = this;
    const count = paths.length;
    const prefix = Buffer.from(idPrefix, 'latin1');
    const utf8 = this.nonAsciiUtf8();
    let total = 0;
    for (let c = 0; c < count; c++) {
      if (!winner[c]) continue;
      const length = ascii[c] ? paths[c]!.length : utf8.get(c)!.length;
      total += prefix.length + Math.ceil((length * 4) / 3);
    }
    const out = Buffer.allocUnsafe(total);
    const starts = new Uint32Array(count);
    const ends = new Uint32Array(count);
    let at = 0;
    for (let c = 0; c < count; c++) {
      if (!winner[c]) continue;
      starts[c] = at;
      for (let i = 0; i < prefix.length; i++) out[at++] = prefix[i]!;
      at = ascii[c] ? writeByteStringAsBase64url(paths[c]!, out, at) : encodeBytes(utf8.get(c)!, out, at);
      ends[c] = at;
    }
    this.ids = out.toString('latin1', 0, at);
    this.idPrefix = idPrefix;
    this.idStart = starts;
    this.idEnd = ends;
  }

  /**
   * Every winner's path as UTF-8 and its id's base64url text (without the ids' common
   * prefix), for listings written from bytes (see NodeColumns). Each path's bytes are padded
   * with zeros to a multiple of 3, so base64 of all of them at once (one native call) is the
   * ids one after another: a path's id is the first ceil(4n/3) characters of its part.
   */
  columnBytes(): ColumnBytes {
    if (this.columns !== null) return this.columns;
    const { paths, ascii, winner } = this;
    const count = paths.length;
    const utf8 = this.nonAsciiUtf8();
    let total = 0;
    for (let c = 0; c < count; c++) {
      if (!winner[c]) continue;
      const length = ascii[c] ? paths[c]!.length : utf8.get(c)!.length;
      total += Math.ceil(length / 3) * 3;
    }
    const pathBytes = Buffer.alloc(total);
    const pathStart = new Uint32Array(count);
    const pathEnd = new Uint32Array(count);
    const jsonPlain = new Uint8Array(count);
    let at = 0;
    for (let c = 0; c < count; c++) {
      if (!winner[c]) continue;
      pathStart[c] = at;
      if (ascii[c]) {
        // plain when nothing in the path needs a JSON escape (a plain name may hold '"')
        const path = paths[c]!;
        let plain = 1;
        for (let i = 0; i < path.length; i++) {
          const code = path.charCodeAt(i);
          if (code < 0x20 || code > 0x7e || code === 0x22 || code === 0x5c) plain = 0;
          pathBytes[at++] = code;
        }
        jsonPlain[c] = plain;
      } else {
        const bytes = utf8.get(c)!;
        pathBytes.set(bytes, at);
        at += bytes.length;
      }
      pathEnd[c] = at;
      at = pathStart[c]! + Math.ceil((at - pathStart[c]!) / 3) * 3;
    }
    const idText = Buffer.from(pathBytes.toString('base64url'), 'latin1');
    this.columns = { pathBytes, pathStart, pathEnd, jsonPlain, idText };
    return this.columns;
  }
}

/** See PayloadTree.columnBytes. A path's id text starts at pathStart / 3 * 4 in idText, ceil((pathEnd - pathStart) * 4 / 3) long. */
export interface ColumnBytes {
  pathBytes: Buffer;
  pathStart: Uint32Array;
  pathEnd: Uint32Array;
  /** 1 when the path is ASCII and needs no JSON escape */
  jsonPlain: Uint8Array;
  idText: Buffer;
}

/** Where the id text of a path at `pathStart` (a multiple of 3) of ColumnBytes.pathBytes starts in idText. */
function idStartOf(pathStart: number): number {
  return (pathStart / 3) * 4;
}

/** How long the id text (base64url, no padding) of a path of `pathLength` bytes is: ceil(4n / 3), in integers. */
function idLengthOf(pathLength: number): number {
  return ((pathLength * 4 + 2) / 3) | 0;
}

/** base64url (no padding) of `bytes`, written at `at`; returns the end. */
function encodeBytes(bytes: Buffer, out: Buffer, at: number): number {
  const encoded = bytes.toString('base64url');
  return at + out.write(encoded, at, 'latin1');
}

/**
 * A folder's subtree in listing order: depth first, pre-order (a folder, then everything
 * below it), each folder's members in code-point order. That is runs of a group's members,
 * one after another (a group's run stops after a sub-folder, whose subtree comes next, and
 * goes on after it): a listing is a flat loop over them, with no stack of its own.
 */
interface ListingOrder {
  runs: number;
  /** run k is runMembers[k][runFrom[k] .. runTo[k]) */
  runMembers: number[][];
  runFrom: Int32Array;
  runTo: Int32Array;
  /** the candidate of the folder holding run k's entries; -1 for the top folder */
  runFolder: Int32Array;
}

/** The listing order of one folder's members alone. */
function membersInOrder(top: Group): ListingOrder {
  return { runs: 1, runMembers: [top.members], runFrom: Int32Array.of(0), runTo: Int32Array.of(top.members.length), runFolder: Int32Array.of(-1) };
}

/**
 * The listing order of everything below `top`: the one depth-first walk of the tree. It
 * goes from sub-folder to sub-folder (see Group.subfolderAt), not row by row.
 */
function walkDepthFirst(top: Group): ListingOrder {
  const runMembers: number[][] = [];
  const runFrom: number[] = [];
  const runTo: number[] = [];
  const runFolder: number[] = [];
  // a stack of (group, next sub-folder, next member, its folder's candidate): a loop, not
  // recursion, as a hostile name may nest 30,000 folders deep
  const stackGroups: Group[] = [top];
  const stackNextSubfolder: number[] = [0];
  const stackNextMember: number[] = [0];
  const stackFolder: number[] = [-1];
  while (stackGroups.length > 0) {
    const depth = stackGroups.length - 1;
    const { members, subfolderAt, subfolders } = stackGroups[depth]!;
    const k = stackNextSubfolder[depth]!;
    const from = stackNextMember[depth]!;
    // up to and with the next sub-folder's row, or to the group's end
    const to = k < subfolderAt.length ? subfolderAt[k]! + 1 : members.length;
    if (to > from) {
      runMembers.push(members);
      runFrom.push(from);
      runTo.push(to);
      runFolder.push(stackFolder[depth]!);
    }
    if (k < subfolderAt.length) {
      stackNextSubfolder[depth] = k + 1;
      stackNextMember[depth] = to;
      stackGroups.push(subfolders[k]!);
      stackNextSubfolder.push(0);
      stackNextMember.push(0);
      stackFolder.push(members[to - 1]!);
    } else {
      stackGroups.pop();
      stackNextSubfolder.pop();
      stackNextMember.pop();
      stackFolder.pop();
    }
  }
  return { runs: runMembers.length, runMembers, runFrom: Int32Array.from(runFrom), runTo: Int32Array.from(runTo), runFolder: Int32Array.from(runFolder) };
}

class TreeEntry implements IndexedEntry {
  readonly path: string;
  readonly kind: 'file' | 'folder';
  readonly size: number;
  readonly compressedSize: number;

  constructor(
    private readonly tree: PayloadTree,
    private readonly candidate: number,
  ) {
    const kind = tree.kinds[candidate]!;
    const record = tree.records[candidate]!;
    this.path = tree.paths[candidate]!;
    this.kind = kind === FILE ? 'file' : 'folder';
    this.size = kind === FILE ? tree.table.uncompressedSize[record]! : 0;
    this.compressedSize = kind === IMPLIED ? 0 : tree.table.compressedSize[record]!;
  }

  get mtime(): Date {
    return this.tree.table.entry(this.tree.dateRecords[this.candidate]!).getLastModDate();
  }

  get record(): yauzl.Entry | null {
    return this.kind === 'file' ? this.tree.table.entry(this.tree.records[this.candidate]!) : null;
  }
}


/** Every admitted entry under `prefix`, with the folders its path implies, sorted and deduplicated. */
function buildTree(table: DirectoryTable, admitted: AdmittedEntries, prefix: string): PayloadTree {
  const tree = new PayloadTree(table);
  const { plain } = table;
  const { path: paths, folder, record, litter } = admitted;
  // admitted paths have no trailing slash: the prefix's folder itself is not under it
  const prefixLength = prefix.length;
  let lastParent = '';
  let lastGroup = tree.root;
  for (let k = 0; k < admitted.count; k++) {
    // desktop litter is not browsed (as a plain ZIP's is not uploaded)
    if (litter[k]) continue;
    const path = paths[k]!;
    if (prefixLength > 0 && !path.startsWith(prefix)) continue;
    const relative = prefixLength === 0 ? path : path.slice(prefixLength);
    const i = record[k]!;
    // a plain name is ASCII; another one may still be
    const ascii = plain[i] || isAscii(relative) ? 1 : 0;
    const candidate = tree.add(relative, folder[k] ? FOLDER : FILE, i, ascii);
    const slash = relative.lastIndexOf('/');
    let group: Group;
    if (slash < 0) group = tree.root;
    else if (slash === lastParent.length && lastGroup !== tree.root && relative.startsWith(lastParent)) group = lastGroup;
    else {
      lastParent = relative.slice(0, slash);
      group = tree.groupFor(lastParent, i, ascii);
      lastGroup = group;
    }
    group.members.push(candidate);
  }
  tree.finish();
  return tree;
}

class Index implements ArchiveIndex {
  bag: BagInfo | null = null;
  payloadTop: string | null = null;
  damage: string | null = null;
  tree: PayloadTree | null = null;
  private entryMap: Map<string, IndexedEntry> | null = null;
  private childMap: Map<string, string[]> | null = null;

  get entries(): Map<string, IndexedEntry> {
    if (this.entryMap === null) {
      const map = new Map<string, IndexedEntry>();
      const tree = this.tree;
      if (tree !== null) for (let c = 0; c < tree.paths.length; c++) if (tree.winner[c]) map.set(tree.paths[c]!, tree.entryOf(c));
      this.entryMap = map;
    }
    return this.entryMap;
  }

  get children(): Map<string, string[]> {
    if (this.childMap === null) {
      const map = new Map<string, string[]>([['', []]]);
      const tree = this.tree;
      if (tree !== null) {
        for (let c = 0; c < tree.paths.length; c++) if (tree.winner[c] && tree.kinds[c] !== FILE) map.set(tree.paths[c]!, []);
        for (const group of tree.groups.values()) map.set(group.path, group.members.map((c) => tree.paths[c]!));
      }
      this.childMap = map;
    }
    return this.childMap;
  }

  get fileCount(): number {
    const tree = this.tree;
    if (tree === null) return 0;
    let count = 0;
    for (const group of tree.groups.values()) for (const c of group.members) if (tree.kinds[c] === FILE) count++;
    return count;
  }

  get entryCount(): number {
    const tree = this.tree;
    if (tree === null) return 0;
    let count = 0;
    for (const group of tree.groups.values()) count += group.members.length;
    return count;
  }

  find(path: string): IndexedEntry | undefined {
    const tree = this.tree;
    if (tree === null) return undefined;
    const candidate = tree.find(path);
    return candidate < 0 ? undefined : tree.entryOf(candidate);
  }

  *nodeBatches(archiveId: string, folder: string, folderId: string, recursive: boolean, batchSize: number): Generator<ResourceNode[]> {
    const tree = this.tree;
    if (tree === null) return;
    const top = tree.groups.get(folder);
    if (top === undefined) return;
    const { paths, kinds } = tree;
    const idPrefix = `${archiveId}-`;
    // the payload's order is kept with the tree; a sub-folder's (no caller lists one
    // recursively today) is walked for the listing, as the payload's is the first time
    const { runs, runMembers, runFrom, runTo, runFolder } = !recursive ? membersInOrder(top) : folder === '' ? tree.depthFirst() : walkDepthFirst(top);
    const topTitleStart = folder === '' ? 0 : folder.length + 1;
    let batch: ResourceNode[] = [];
    for (let run = 0; run < runs; run++) {
      const parent = runFolder[run]!;
      const container = parent < 0 ? folderId : tree.idOf(parent, idPrefix);
      const titleStart = parent < 0 ? topTitleStart : paths[parent]!.length + 1;
      const members = runMembers[run]!;
      for (let i = runFrom[run]!, end = runTo[run]!; i < end; i++) {
        const c = members[i]!;
        const path = paths[c]!;
        const isFolder = kinds[c] !== FILE;
        batch.push({ kind: isFolder ? 'container' : 'item', kind_name: isFolder ? 'folder' : 'file', id: tree.idOf(c, idPrefix), container, title: titleStart === 0 ? path : path.slice(titleStart) });
        if (batch.length >= batchSize) {
          yield batch;
          batch = [];
        }
      }
    }
    if (batch.length > 0) yield batch;
  }

  *columnBatches(archiveId: string, batchSize: number): Generator<NodeColumns> {
    const tree = this.tree;
    if (tree === null) return;
    const { paths, kinds } = tree;
    const { pathBytes, pathStart, pathEnd, jsonPlain, idText } = tree.columnBytes();
    const { runs, runMembers, runFrom, runTo, runFolder } = tree.depthFirst();
    const rootId = Buffer.from(archiveId, 'latin1');
    const idPrefix = Buffer.from(`${archiveId}-`, 'latin1');
    let columns = new NodeColumns(idPrefix, rootId, idText, pathBytes, batchSize);
    for (let run = 0; run < runs; run++) {
      const parent = runFolder[run]!;
      const containerStart = parent < 0 ? ROOT_CONTAINER : idStartOf(pathStart[parent]!);
      const containerEnd = parent < 0 ? ROOT_CONTAINER : containerStart + idLengthOf(pathEnd[parent]! - pathStart[parent]!);
      const titleStart = parent < 0 ? 0 : paths[parent]!.length + 1;
      const members = runMembers[run]!;
      for (let i = runFrom[run]!, end = runTo[run]!; i < end; i++) {
        const c = members[i]!;
        const r = columns.count++;
        columns.folder[r] = kinds[c] !== FILE ? 1 : 0;
        const start = pathStart[c]!;
        // idStartOf and idLengthOf written out: a call per row costs until the loop is optimized
        const idStart = (start / 3) * 4;
        columns.idStart[r] = idStart;
        columns.idEnd[r] = idStart + ((((pathEnd[c]! - start) * 4 + 2) / 3) | 0);
        columns.containerStart[r] = containerStart;
        columns.containerEnd[r] = containerEnd;
        if (jsonPlain[c]) {
          columns.titlePlain[r] = 1;
          columns.titleStart[r] = start + titleStart;
          columns.titleEnd[r] = pathEnd[c]!;
        } else {
          columns.setTitleText(r, paths[c]!, titleStart);
        }
        if (columns.count >= batchSize) {
          yield columns;
          columns = new NodeColumns(idPrefix, rootId, idText, pathBytes, batchSize);
        }
      }
    }
    if (columns.count > 0) yield columns;
  }
}
