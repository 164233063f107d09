import { createWriteStream, rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { FOLDER_MODES } from '../../../shared/api.js';
import { openUploadZip, type UploadArchive } from '../bag/upload-reader.js';
import { CancelledError, FerryError, isFerryError } from '../errors.js';
import { DEFAULT_LIMITS } from '../limits.js';
import { parseProvenance, PROVENANCE_FILE, type FolderLayout, type StoredPath } from '../provenance/format.js';
import { emptySegmentReason, unsafePathReason } from '../plan/safe-path.js';
import type { Entry } from '../target.js';
import { FOLDER_SEPARATOR } from './flat-record.js';

// Reading back a record that keeps no folders (Zenodo, figshare, InvenioRDM) as the tree a
// Ferry write put into it: its `ferry-provenance.json` says, for each write this service
// took, which stored files stand for something else (provenance/format.ts FolderLayout).
// A flattened name becomes its path again, a packed folder or bag becomes the entries inside
// it (each checked: a plain ZIP's by its CRC-32s, a bag's by its manifests, before any is
// handed on). Nothing is split or unpacked on a guess: a record without such a layout, or a
// file it does not name, is read as it is stored.

/** a record bigger than this is not a provenance file Ferry wrote (as provenance/recorder.ts) */
const MAX_RECORD_BYTES = 64 * 1024 * 1024;

export interface FlatRecordSource {
  /** the target's name, as provenance entries name their destination */
  target: string;
  /** the service, in sentences ("Zenodo") */
  service: string;
  signal: AbortSignal;
}

/**
 * `entries`: a record's read as its target yields it (the record's folder `title`, then its
 * files as `title/<stored name>`); answers the same read with the layout undone.
 */
export async function* unpackedRecord(title: string, entries: AsyncIterable<Entry>, source: FlatRecordSource): AsyncGenerator<Entry> {
  const all: Entry[] = [];
  for await (const entry of entries) all.push(entry);
  const layout = await recordLayout(title, all, source.target);
  if (layout.size === 0) return yield* all;
  const folders = new Folders(title);
  for (const entry of all) {
    const stored = entry.kind === 'file' && entry.path.startsWith(`${title}/`) ? layout.get(entry.path.slice(title.length + 1)) : undefined;
    if (!stored) {
      yield* folders.around(entry);
      continue;
    }
    if (stored.mode === 'flatten') {
      yield* folders.around({ ...entry, path: `${title}/${stored.path}` });
      continue;
    }
    const packed = new PackedArchive(entry, stored, source, title);
    for (const inner of await packed.entries()) yield* folders.around({ ...inner, path: `${title}/${inner.path}` });
  }
}

interface Stored extends StoredPath {
  mode: FolderLayout['mode'];
}

/**
 * The layouts of every provenance record in the record: the one at its top (a new record's),
 * and `<folder>__ferry-provenance.json`, where a write of one folder into the record put its
 * own (provenance/recorder.ts, flattened by the target). Such a one, when it is Ferry's (it
 * holds a layout of this target), goes back into its folder too, where the next hop finds it.
 */
async function recordLayout(title: string, all: readonly Entry[], target: string): Promise<Map<string, Stored>> {
  const layout = new Map<string, Stored>();
  const inFolder = `${FOLDER_SEPARATOR}${PROVENANCE_FILE}`;
  for (const entry of all) {
    const name = entry.kind === 'file' && entry.path.startsWith(`${title}/`) ? entry.path.slice(title.length + 1) : '';
    if (name !== PROVENANCE_FILE && !(name.endsWith(inFolder) && name.length > inFolder.length)) continue;
    const found = await layoutOf(entry, target);
    for (const [file, stored] of found) layout.set(file, stored);
    const folder = name.slice(0, -inFolder.length);
    if (found.size > 0 && name !== PROVENANCE_FILE && unsafePathReason(folder) === null && emptySegmentReason(folder) === null) layout.set(name, { file: name, path: `${folder}/${PROVENANCE_FILE}`, mode: 'flatten' });
  }
  return layout;
}

/** What the record's writes to this target stored in place of what, the later write's word winning. */
async function layoutOf(record: Entry, target: string): Promise<Map<string, Stored>> {
  if (record.size !== null && record.size > MAX_RECORD_BYTES) return new Map();
  const log = parseProvenance((await collect(await record.open())).toString('utf8'));
  const layout = new Map<string, Stored>();
  for (const entry of log.entries) {
    const folders = entry.folders;
    // the log is data anyone may have edited: only a well-formed layout of a write to this target counts
    if (entry.destination?.target !== target || !folders || !FOLDER_MODES.includes(folders.mode) || !Array.isArray(folders.stored)) continue;
    for (const stored of folders.stored) {
      if (typeof stored?.file !== 'string' || typeof stored.path !== 'string') continue;
      // a path it names stays inside the record ('' is a bag's: the whole record)
      const safe = unsafePathReason(stored.path) === null && (stored.path === '' ? folders.mode === 'bag' : emptySegmentReason(stored.path) === null);
      if (safe) layout.set(stored.file, { file: stored.file, path: stored.path, mode: folders.mode });
    }
  }
  return layout;
}

/**
 * Each folder's entry before its contents, once, whether the record lists it or only implies
 * it; none above the record (`title` may sit in a folder its reader has yielded: a figshare
 * project's item).
 */
class Folders {
  private readonly seen = new Set<string>();

  constructor(title: string) {
    const segments = title.split('/');
    for (let i = 1; i < segments.length; i++) this.seen.add(segments.slice(0, i).join('/'));
  }

  *around(entry: Entry): Generator<Entry> {
    const segments = entry.path.split('/');
    const parents = entry.kind === 'folder' ? segments.length : segments.length - 1;
    for (let i = 1; i <= parents; i++) {
      const folder = segments.slice(0, i).join('/');
      if (this.seen.has(folder)) continue;
      this.seen.add(folder);
      yield folder === entry.path ? entry : folderEntry(folder);
    }
    if (entry.kind === 'file') yield entry;
  }
}

function folderEntry(folderPath: string): Entry {
  return { path: folderPath, kind: 'folder', size: null, mtime: null, hashes: {}, open: () => Promise.reject(new Error(`"${folderPath}" is a folder and has no bytes.`)) };
}

/**
 * A packed folder or bag of the record, downloaded to a private temp file and checked whole
 * before its entries are handed out. It stays on disk while any of its files is still to be
 * read once or is being read, and is removed then (or when the read is cancelled, or Ferry
 * exits); a file opened again later (a retried upload) fetches and checks it again.
 */
class PackedArchive {
  private opened: Promise<Opened> | null = null;
  private reading = 0;
  private unread = new Set<string>();

  constructor(
    private readonly stored: Entry,
    private readonly layout: Stored,
    private readonly source: FlatRecordSource,
    private readonly title: string,
  ) {
    source.signal.addEventListener('abort', () => void this.closeIfIdle(), { once: true });
  }

  /** The entries inside, paths relative to the record. */
  async entries(): Promise<Entry[]> {
    const { byPath } = await this.acquire();
    const inside = [...byPath.values()];
    this.unread = new Set(inside.filter((entry) => entry.kind === 'file').map((entry) => entry.path));
    void this.closeIfIdle();
    return inside.map((entry) => (entry.kind === 'folder' ? entry : { path: entry.path, kind: 'file', size: entry.size, mtime: entry.mtime, hashes: entry.hashes, open: () => this.open(entry.path) }));
  }

  private async open(inner: string): Promise<Readable> {
    const { byPath } = await this.acquire();
    this.reading++;
    let stream: Readable;
    try {
      stream = await byPath.get(inner)!.open();
    } catch (error) {
      this.reading--;
      void this.closeIfIdle();
      throw error;
    }
    stream.once('end', () => this.unread.delete(inner));
    stream.once('close', () => {
      this.reading--;
      void this.closeIfIdle();
    });
    return stream;
  }

  private acquire(): Promise<Opened> {
    this.opened ??= this.fetch();
    return this.opened;
  }

  /** Closed once nothing is being read and every file was read once (or the read was cancelled). */
  private async closeIfIdle(): Promise<void> {
    if (!this.opened || this.reading > 0 || (this.unread.size > 0 && !this.source.signal.aborted)) return;
    const opened = this.opened;
    this.opened = null;
    await (await opened.catch(() => null))?.close();
  }

  private async fetch(): Promise<Opened> {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-unpack-'));
    leftOnExit.add(dir);
    const remove = async () => {
      leftOnExit.delete(dir);
      await rm(dir, { recursive: true, force: true });
    };
    let archive: UploadArchive;
    try {
      const file = path.join(dir, 'packed.zip');
      await pipeline(await this.stored.open(), createWriteStream(file, { mode: 0o600 }), { signal: this.source.signal });
      archive = await openUploadZip(file, DEFAULT_LIMITS, { payload: 'check' });
    } catch (error) {
      await remove();
      if (this.source.signal.aborted) throw new CancelledError();
      // the temp copy's path is this machine's: never in a message
      const message = isFerryError(error) || error instanceof Error ? error.message : String(error);
      throw this.unreadable(message.split(dir).join('(a temporary copy)'));
    }
    const close = async () => {
      await archive.close();
      await remove();
    };
    const expected = this.layout.mode === 'bag' ? 'bag' : 'plain';
    const byPath = new Map<string, Entry>();
    for await (const entry of archive.entries()) byPath.set(entry.path, entry);
    const outside = [...byPath.keys()].find((inner) => this.layout.path !== '' && inner !== this.layout.path && !inner.startsWith(`${this.layout.path}/`));
    if (archive.kind !== expected || outside !== undefined) {
      await close();
      throw this.unreadable(archive.kind !== expected ? `it is ${archive.kind === 'bag' ? 'a bag' : 'not a bag'}` : `it holds '${outside}', outside '${this.layout.path}'`);
    }
    return { byPath, close };
  }

  private unreadable(why: string): FerryError {
    const what = this.layout.mode === 'bag' ? 'a BagIt bag of the whole record' : `a ZIP of the folder '${this.layout.path}'`;
    const name = this.stored.path.slice(this.title.length + 1);
    return new FerryError(502, 'upstream_error', `The ${this.source.service} record '${this.title}' holds '${name}', which Ferry stored as ${what}, but it cannot be read back as one (${why}); download '${name}' itself to see what it holds.`);
  }
}

interface Opened {
  byPath: Map<string, Entry>;
  close(): Promise<void>;
}

/** temp folders of archives still open: removed when Ferry exits, whatever else happens */
const leftOnExit = new Set<string>();
process.once('exit', () => {
  for (const dir of leftOnExit) rmSync(dir, { recursive: true, force: true });
});

async function collect(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
