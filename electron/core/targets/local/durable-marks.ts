import { execFile } from 'node:child_process';
import { open } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { fastPathOn } from '../../fast-paths.js';
import { syncDirectory } from '../../jobs/atomic-file.js';
import { FileWorkerLost, fileWriteWorkers } from '../../jobs/file-write-workers.js';

// The local writer does not fsync a new file (as cp, unzip and rclone do not: an fsync per
// file costs more than a third of a transfer of small files). A job's resume journal, though,
// fdatasyncs each "done" mark, so a mark handed over as soon as a file is renamed into place
// could reach the disk before the file's bytes: after a power loss (the page cache survives a
// process crash, not a power cut) a resumed job would skip a file that is empty or missing.
//
// Invariant: a file is told to the job (WriteOptions.onFileWritten) only after a barrier that
// began after the file was put in place has made it durable. A mark may be lost (a crash
// before its barrier: the file is then sent once more), never written ahead of its data.

/** How long a mark waits at most for its barrier while a write goes on. */
export const MARK_INTERVAL_MS = 1000;

interface Mark {
  /** the entry's path, as the job is told it */
  entryPath: string;
  /** the file in place, absolute */
  file: string;
}

/**
 * Marks of files put in place but maybe not yet on disk, handed on in batches after a
 * durability barrier: one every MARK_INTERVAL_MS while marks wait, and one when the write
 * stops short (`settle`, so a paused or cancelled job's resume skips all it wrote). A write
 * that succeeds `drop`s what waits: its job ends and removes its journal, so no barrier is paid.
 */
export class DurableMarks {
  private waiting: Mark[] = [];
  private timer: NodeJS.Timeout | null = null;
  /** the barriers run one after another, so marks are told in the order files arrived */
  private barriers: Promise<void> = Promise.resolve();
  private dropped = false;

  constructor(
    private readonly makeDurable: (files: readonly string[]) => Promise<void>,
    private readonly tell: (entryPath: string) => void,
    private readonly intervalMs = MARK_INTERVAL_MS,
  ) {}

  /** `file` is in place (written, renamed, or found there already); its mark waits for a barrier. */
  add(entryPath: string, file: string): void {
    if (this.dropped) return;
    this.waiting.push({ entryPath, file });
    if (this.timer === null) {
      this.timer = setTimeout(() => {
        this.timer = null;
        void this.settle();
      }, this.intervalMs);
      // a pending barrier never keeps the process alive
      this.timer.unref();
    }
  }

  /**
   * Makes every file added so far durable, then tells their marks; resolves when done. A
   * barrier that fails tells nothing: those files are sent again if the job is resumed.
   */
  settle(): Promise<void> {
    this.clearTimer();
    const batch = this.waiting.splice(0);
    if (batch.length === 0) return this.barriers;
    this.barriers = this.barriers.then(async () => {
      if (this.dropped) return;
      try {
        await this.makeDurable(batch.map((mark) => mark.file));
      } catch {
        return;
      }
      if (!this.dropped) for (const mark of batch) this.tell(mark.entryPath);
    });
    return this.barriers;
  }

  /** No more marks are told (a barrier in flight tells nothing when it ends). */
  drop(): void {
    this.clearTimer();
    this.dropped = true;
    this.waiting = [];
  }

  private clearTimer(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }
}

const run = promisify(execFile);
/** true once `sync` could not be started at all (none on the path): fsyncs from then on */
let noSyncCommand = false;

/**
 * The barrier for files put in place inside `root`: on Linux one syncfs(2) of root's file
 * system (`sync -f`, fast path `syncfs-marks`: ~0.13 s for 3,011 files where an fsync each
 * costs ~0.75 s; it flushes every file of that file system, so it covers the renames and the
 * folders made too); elsewhere, or switched off, an fsync of each file and of each folder
 * from the files' own up to `root` (their names are entries in those folders).
 */
export function durabilityBarrier(root: string): (files: readonly string[]) => Promise<void> {
  return async (files) => {
    if (process.platform === 'linux' && !noSyncCommand && fastPathOn('syncfs-marks')) {
      try {
        await run('sync', ['-f', root]);
        return;
      } catch (error) {
        // Any other failure (the destination gone, a coreutils without -f) is this barrier's
        // only: its files are fsynced, and the next barrier tries syncfs again.
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') noSyncCommand = true;
      }
    }
    await syncFiles(files);
    for (const folder of foldersUpTo(root, files)) await syncDirectory(folder);
  };
}

async function syncFiles(files: readonly string[]): Promise<void> {
  const workers = fileWriteWorkers();
  if (workers.available) {
    try {
      return await workers.syncPaths(files);
    } catch (error) {
      if (!(error instanceof FileWorkerLost)) throw error;
    }
  }
  for (const file of files) {
    const handle = await open(file, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  }
}

/** Each folder holding one of `files`, and each folder above it up to `root`, deepest first. */
export function foldersUpTo(root: string, files: readonly string[]): string[] {
  const folders = new Set<string>();
  for (const file of files) {
    for (let folder = path.dirname(file); folder.startsWith(root) && !folders.has(folder); folder = path.dirname(folder)) {
      folders.add(folder);
      if (folder === root) break;
    }
  }
  return [...folders].sort((a, b) => b.length - a.length);
}
