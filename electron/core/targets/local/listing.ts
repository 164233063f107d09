// Listing the workspace: the flat collection (everything, depth first in name order) and one
// folder's children. A listing runs to 100,000 rows and is measured against `find`
// (bench/run.ts), so it makes nothing per row but the row (no WalkNode, no path per file,
// the folder's part of each id encoded once), reads the next folders while this one's rows
// go out, and keeps each folder's rows while the folder is unchanged (FolderRowsCache).

import type { BigIntStats } from 'node:fs';
import { lstat } from 'node:fs/promises';
import { throwIfAborted } from '../../errors.js';
import { KeptBatches } from '../../kept-batches.js';
import type { ResourceNode } from '../../target.js';
import { childIdEncoder, encodeLocalId } from './ids.js';
import { insideFolder, joinRelative, readFolder } from './walk.js';
import { fastPathOn } from '../../fast-paths.js';

/** Folders read ahead of the walk, at most: enough to keep a read in flight, few enough to hold little. */
const READ_AHEAD_FOLDERS = 8;
/** Rows kept across listings, at most (about 0.4 KiB each with their JSON, see FolderRowsCache). */
const CACHED_ROWS = 150_000;
/**
 * A folder changed this recently is not kept: its ctime might not move again for a change
 * made within the same clock tick ("racy git"). Later changes then always show.
 */
const SETTLED_NS = 2_000_000_000n;

/** A folder's children as runs: each run ends at a subfolder (whose own rows follow it) or at the end. */
type Runs = readonly (readonly ResourceNode[])[];

interface Folder {
  relativePath: string;
  absolutePath: string;
  /** the folder's id, the container of its rows; null at the root */
  id: string | null;
}

export interface ListerOptions {
  /** rows kept across listings (default CACHED_ROWS; 0 keeps none) */
  cachedRows?: number;
  /** a folder changed more recently than this is not kept (default SETTLED_NS; tests shorten it) */
  settledNs?: bigint;
}

export class WorkspaceLister {
  /** the runs handed out again while their folder is unchanged (TargetCapabilities.cacheableListings) */
  readonly kept = new KeptBatches();
  private readonly cache: FolderRowsCache;

  constructor(options: ListerOptions = {}) {
    const cachedRows = fastPathOn('kept-listings') ? (options.cachedRows ?? CACHED_ROWS) : 0;
    this.cache = new FolderRowsCache(cachedRows, options.settledNs ?? SETTLED_NS, this.kept);
  }

  /** Everything below the workspace root, a run of siblings at a time (see Runs). */
  async *all(root: string, signal?: AbortSignal): AsyncGenerator<readonly ResourceNode[]> {
    const ahead = new FolderReadAhead((folder) => this.runsOf(folder));
    const pending: { folder: Folder; runs: Runs; next: number }[] = [];
    const top: Folder = { relativePath: '', absolutePath: root, id: null };
    let current = { folder: top, runs: await this.runsOf(top), next: 0 };
    ahead.startAfter(current.folder, current.runs);
    for (;;) {
      const run = current.runs[current.next++];
      if (run === undefined) {
        const parent = pending.pop();
        if (!parent) return;
        current = parent;
        continue;
      }
      yield run;
      const last = run[run.length - 1]!;
      if (last.kind !== 'container') continue;
      throwIfAborted(signal);
      pending.push(current);
      const folder = { relativePath: joinRelative(current.folder.relativePath, last.title), absolutePath: insideFolder(current.folder.absolutePath, last.title), id: last.id };
      current = { folder, runs: await ahead.take(folder), next: 0 };
      ahead.startAfter(folder, current.runs);
    }
  }

  /** The direct children of one folder (`relativePath` '' is the root), as runs (see Runs). */
  children(absolutePath: string, relativePath: string): Promise<Runs> {
    return this.runsOf({ relativePath, absolutePath, id: relativePath === '' ? null : encodeLocalId(relativePath) });
  }

  private async runsOf(folder: Folder): Promise<Runs> {
    const stat = await lstat(folder.absolutePath, { bigint: true }).catch(() => null);
    const kept = stat && this.cache.get(folder.absolutePath, stat);
    if (kept) return kept;
    const idOf = childIdEncoder(folder.relativePath);
    const runs: ResourceNode[][] = [];
    let run: ResourceNode[] = [];
    for (const dirent of await readFolder(folder.absolutePath)) {
      const id = idOf(dirent.name);
      if (dirent.isDirectory()) {
        run.push({ kind: 'container', kind_name: 'folder', id, container: folder.id, title: dirent.name });
        runs.push(run);
        run = [];
      } else {
        run.push({ kind: 'item', kind_name: 'file', id, container: folder.id, title: dirent.name });
      }
    }
    if (run.length > 0) runs.push(run);
    if (stat) this.cache.set(folder.absolutePath, stat, runs);
    return runs;
  }
}

/**
 * Each folder's runs while its inode and ctime stay the same: adding, removing or renaming
 * a child, or changing the folder's permissions, moves its ctime, so an unchanged ctime
 * means the same children (a child's own contents are its own folder's entry). Kept runs
 * (and their rows) are frozen: the same arrays come back on every listing, and the target
 * says so (capabilities.cacheableListings), so the HTTP layer may keep their JSON too. A folder is kept when it is seen unchanged a
 * second time: keeping (and the JSON the HTTP layer then keeps) costs a third more than a
 * listing, which a tree listed once should not pay. Full means "keep no more", not "evict":
 * a walk larger than the cache would otherwise evict each folder just before it is needed.
 */
class FolderRowsCache {
  private readonly folders = new Map<string, { ino: bigint; ctimeNs: bigint; runs: Runs; rows: number }>();
  /** folders seen once, settled: kept if seen again unchanged */
  private readonly seen = new Map<string, { ino: bigint; ctimeNs: bigint }>();
  private rows = 0;

  constructor(
    private readonly maxRows: number,
    private readonly settledNs: bigint,
    private readonly kept: KeptBatches,
  ) {}

  get(absolutePath: string, stat: BigIntStats): Runs | null {
    const kept = this.folders.get(absolutePath);
    if (!kept) return null;
    if (kept.ino === stat.ino && kept.ctimeNs === stat.ctimeNs) return kept.runs;
    this.folders.delete(absolutePath);
    this.rows -= kept.rows;
    return null;
  }

  set(absolutePath: string, stat: BigIntStats, runs: ResourceNode[][]): void {
    if (BigInt(Date.now()) * 1_000_000n - stat.ctimeNs < this.settledNs) return;
    const rows = runs.reduce((sum, run) => sum + run.length, 0);
    if (this.rows + rows > this.maxRows) return;
    const before = this.seen.get(absolutePath);
    if (before?.ino !== stat.ino || before.ctimeNs !== stat.ctimeNs) {
      if (this.seen.size >= this.maxRows) this.seen.clear();
      this.seen.set(absolutePath, { ino: stat.ino, ctimeNs: stat.ctimeNs });
      return;
    }
    this.seen.delete(absolutePath);
    for (const run of runs) for (const row of run) Object.freeze(row);
    this.folders.set(absolutePath, { ino: stat.ino, ctimeNs: stat.ctimeNs, runs: Object.freeze(runs.map((run) => this.kept.keep(run))), rows });
    this.rows += rows;
  }
}

/**
 * Starts reading a folder's subfolders as soon as the folder is read, in walk order, so the
 * walk rarely waits on the disk (readdir runs on libuv's threads while the rows go out). A
 * read started is always awaited or has its rejection observed, even when the walk stops early.
 */
class FolderReadAhead {
  private readonly started = new Map<string, Promise<Runs>>();

  constructor(private readonly read: (folder: Folder) => Promise<Runs>) {}

  startAfter(parent: Folder, runs: Runs): void {
    for (const run of runs) {
      if (this.started.size >= READ_AHEAD_FOLDERS) return;
      const last = run[run.length - 1]!;
      if (last.kind !== 'container') continue;
      const folder = { relativePath: joinRelative(parent.relativePath, last.title), absolutePath: insideFolder(parent.absolutePath, last.title), id: last.id };
      const reading = this.read(folder);
      reading.catch(() => undefined);
      this.started.set(folder.absolutePath, reading);
    }
  }

  take(folder: Folder): Promise<Runs> {
    const reading = this.started.get(folder.absolutePath);
    if (reading === undefined) return this.read(folder);
    this.started.delete(folder.absolutePath);
    return reading;
  }
}
