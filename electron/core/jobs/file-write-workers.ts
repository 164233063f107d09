import { dirname } from 'node:path';
import { ComputeShare, ComputeThreadLost, serveComputeKind, type ComputeThread } from '../compute/compute-threads.js';
import type { FileReply, FileRequest, WorkerError } from '../compute/messages.js';
import { fastPathOn } from '../fast-paths.js';
import { poolSizeFrom } from '../pool-size.js';
import { FolderLanes } from './folder-lanes.js';

// The file-write pool: a small file's temporary written, or a small local file or ZIP entry
// read and hashed, in ONE hop on a compute thread (compute/file-work.ts does the work there).
// On the main thread every promise fs call costs ~35 µs of synchronous work on top of its trip
// through libuv's pool, and a small file took six of them in a row: for an upload of thousands
// of small files that, not the disk, set the pace (a CPU profile of the bench upload: ~1 s of
// the event loop in openFileHandle, writeBuffer, close, fstat and futimes for 3,000 files).
//
// A small local file is read (and hashed) in one hop the same way (fast path 'worker-reads'):
// its open, read and close on the main thread cost a local → local transfer ~0.26 s of the
// event loop a round of 1,200 files, its hashing ~0.04 s more.

/** What a worker needs of a ZIP entry's central-directory record to read it. */
export interface ZipEntryShape {
  compressedSize: number;
  uncompressedSize: number;
  /** 0 stored, 8 deflated */
  method: number;
}

/** What the writer keeps of a written file's stat (a rename keeps all three). */
export interface WrittenFileStat {
  size: bigint;
  mtimeNs: bigint;
  ino: bigint;
}

interface Waiting {
  resolve(message: FileReply): void;
  reject(error: Error): void;
}

interface PoolWorker {
  thread: ComputeThread;
  waiting: Map<number, Waiting>;
}

interface Request {
  message: FileRequest;
  transfer: ArrayBuffer[];
  waiting: Waiting;
  /** the folder a new file is made in (see flush), or null */
  folder: string | null;
}

/** a request before the pool numbers it */
type Unnumbered<T> = T extends unknown ? Omit<T, 'id'> : never;

/**
 * What was asked of the threads fails with this when they are lost (compute-threads.ts): the
 * caller may do the work on this thread instead (the next call starts new threads).
 */
export class FileWorkerLost extends ComputeThreadLost {}

class FileWriteWorkers {
  private readonly threads: ComputeShare<PoolWorker>;
  private nextId = 1;
  /** asked this turn, not yet sent (see flush) */
  private readonly queue: Request[] = [];
  /** the worker of each folder with new files under way (see flush) */
  private readonly lanes = new FolderLanes<PoolWorker>();

  /** `size`: how many of the compute threads this pool uses, 0 for none (it then works on the calling thread) */
  constructor(size: number) {
    this.threads = new ComputeShare(size, (thread) => ({ thread, waiting: new Map() }));
    serveComputeKind({ kind: 'files', onMessage: (thread, message) => this.answered(thread, message.replies), onLost: (error) => this.lost(error) });
  }

  get available(): boolean {
    return this.threads.available;
  }

  /**
   * Writes `bytes` to a new file at `path` (which must not exist), its mtime set when given,
   * fsynced when `sync`. The file is left in place only on success. Errors are Node's own
   * (with code, errno, syscall), so a caller maps them as it maps any fs error.
   *
   * `placeAt`: then renamed there in the same hop, once written whole (`placeError` says why
   * not, the file then still at `path`): a file that needs nothing more between its write and
   * its rename costs the calling thread one message, not a promise fs call more.
   *
   * `movable` (WholeFile.movable): `bytes` start an ArrayBuffer nothing else holds, which then
   * moves to the worker itself, and `bytes` are empty (detached) from this call on: one buffer
   * a file instead of two (fast path 'moved-file-bytes'; what it saves: docs/performance.md).
   */
  async writeNewFile(path: string, bytes: Uint8Array, mtime: Date | null, sync: boolean, placeAt: string | null = null, movable = false): Promise<WrittenFileStat & { placeError: NodeJS.ErrnoException | null }> {
    // otherwise a copy of exactly these bytes is moved: the source may be a slice of a larger
    // buffer (a window on the ZIP) or of Node's shared pool, neither of which may move
    const moved = movable && bytes.byteOffset === 0 && fastPathOn('moved-file-bytes') ? (bytes.buffer as ArrayBuffer) : new Uint8Array(bytes).buffer;
    const now = Date.now() / 1000;
    const reply = await this.ask({ op: 'write', path, bytes: moved, length: bytes.length, atime: now, mtime: mtime === null ? null : mtime.getTime() / 1000, sync, placeAt }, [moved], dirname(path));
    if (reply.error) throw asNodeError(reply.error, path);
    return { size: reply.size!, mtimeNs: reply.mtimeNs!, ino: reply.ino!, placeError: reply.placeError ? asNodeError(reply.placeError, path) : null };
  }

  /**
   * Reads the whole file at `path` (not followed if a link; `expectedSize` is what lstat said,
   * the bytes are what is there now) and hashes them with `algorithms` there. The bytes start
   * an ArrayBuffer of their own that nothing else holds (WholeFile.movable). Errors are Node's
   * own, as for writeNewFile.
   */
  async readFile(path: string, expectedSize: number, algorithms: readonly string[]): Promise<{ bytes: Buffer; hashes: Record<string, string> }> {
    const reply = await this.ask({ op: 'read', path, expectedSize, algorithms }, []);
    if (reply.error) throw asNodeError(reply.error, path);
    return { bytes: Buffer.from(reply.bytes!, 0, reply.length!), hashes: reply.hashes! };
  }

  /**
   * Reads one small ZIP entry's bytes, unpacked, from the ZIP at `path` (its local header at
   * file offset `headerAt`), hashes them with `algorithms` there and, when `crc`, computes
   * their CRC-32. The caller checks them (zip-entry-stream.ts readZipEntryWhole); a damaged
   * archive is an Error with the message the window's reader would give, or zlib's own.
   */
  async readZipEntry(path: string, headerAt: number, entry: ZipEntryShape, algorithms: readonly string[], crc: boolean): Promise<{ bytes: Buffer; crc32: number | null; hashes: Record<string, string> }> {
    const reply = await this.ask({ op: 'readZipEntry', path, headerAt, ...entry, algorithms, crc }, []);
    if (reply.error) throw asNodeError(reply.error, path);
    return { bytes: Buffer.from(reply.bytes!, 0, reply.length!), crc32: reply.crc32 ?? null, hashes: reply.hashes! };
  }

  /**
   * Renames each [from, to] pair, in order, in one hop; resolves with each pair's error as
   * Node's fs would throw it (null: renamed).
   */
  async renameAll(pairs: readonly (readonly [string, string])[]): Promise<(NodeJS.ErrnoException | null)[]> {
    const reply = await this.ask({ op: 'renames', pairs }, []);
    return (reply.errors ?? []).map((error, i) => (error === null ? null : asNodeError(error, pairs[i]![0])));
  }

  /** fsync of every path given (files or folders, none followed if a link), in one hop. */
  async syncPaths(paths: readonly string[]): Promise<void> {
    const reply = await this.ask({ op: 'sync', paths }, []);
    if (reply.error) throw asNodeError(reply.error, '');
  }

  private ask(message: Unnumbered<FileRequest>, transfer: ArrayBuffer[], folder: string | null = null): Promise<FileReply> {
    if (!this.available) return Promise.reject(new FileWorkerLost('the file-writing threads are not available'));
    return new Promise<FileReply>((resolve, reject) => {
      this.queue.push({ message: { ...message, id: this.nextId++ } as FileRequest, transfer, waiting: { resolve, reject }, folder });
      if (this.queue.length === 1) setImmediate(() => this.flush());
    });
  }

  /**
   * What was asked in one turn of the event loop goes as one message a worker: each message
   * wakes a thread, and on a machine with few cores a wake-up is a context switch, per file.
   * A new file goes to its folder's worker (FolderLanes, fast path 'folder-lanes'); anything
   * else, and everything with the fast path off, to the least busy worker, so that a slow
   * file (a large fsync) does not hold up the others.
   */
  private flush(): void {
    const batch = this.queue.splice(0);
    if (batch.length === 0) return;
    const workers = this.threads.started();
    if (workers === null) {
      for (const request of batch) request.waiting.reject(new FileWorkerLost('the file-writing threads are not available'));
      return;
    }
    // what each thread holds, of every pool's work
    const load = new Map(workers.map((w) => [w, w.thread.busy]));
    const leastBusy = () => workers.reduce((best, w) => (load.get(w)! < load.get(best)! ? w : best));
    const byLane = fastPathOn('folder-lanes');
    const sent = new Map<PoolWorker, Request[]>();
    for (const request of batch) {
      const folder = byLane ? request.folder : null;
      const chosen = folder === null ? leastBusy() : this.lanes.take(folder, leastBusy);
      if (folder !== null) request.waiting = this.leavingLane(folder, request.waiting);
      load.set(chosen, load.get(chosen)! + 1);
      const requests = sent.get(chosen);
      if (requests) requests.push(request);
      else sent.set(chosen, [request]);
    }
    for (const [chosen, requests] of sent) {
      for (const request of requests) {
        chosen.waiting.set(request.message.id, request.waiting);
        chosen.thread.hold();
      }
      chosen.thread.post(
        { kind: 'files', batch: requests.map((request) => request.message) },
        requests.flatMap((request) => request.transfer),
      );
    }
  }

  /** `waiting`, which also counts its file off its folder's lane once answered. */
  private leavingLane(folder: string, waiting: Waiting): Waiting {
    return {
      resolve: (message) => {
        this.lanes.done(folder);
        waiting.resolve(message);
      },
      reject: (error) => {
        this.lanes.done(folder);
        waiting.reject(error);
      },
    };
  }

  private answered(thread: ComputeThread, replies: readonly FileReply[]): void {
    const worker = this.threads.of(thread);
    if (!worker) return;
    for (const reply of replies) {
      const waiting = worker.waiting.get(reply.id);
      if (!waiting) continue;
      worker.waiting.delete(reply.id);
      worker.thread.letGo();
      waiting.resolve(reply);
    }
  }

  /** The threads are lost: what waits fails (FileWorkerLost), and is done on the calling thread. */
  private lost(error: ComputeThreadLost): void {
    for (const worker of this.threads.last) {
      for (const waiting of worker.waiting.values()) waiting.reject(new FileWorkerLost(error.message));
      worker.waiting.clear();
    }
  }
}

/** An error as Node's fs would have thrown it (code, errno, syscall, path), so callers map it as one. */
function asNodeError(error: WorkerError, path: string): NodeJS.ErrnoException {
  return Object.assign(new Error(error.message), { code: error.code, errno: error.errno, syscall: error.syscall, path });
}

/**
 * A small file's read (fast path 'worker-reads'): `onWorker` on a file worker thread while the
 * fast path is on and the threads are there; else, or when a thread is lost, `here`.
 */
export async function readOnWorkerOrHere<T>(onWorker: (workers: FileWriteWorkers) => Promise<T>, here: () => Promise<T>): Promise<T> {
  const workers = fileWriteWorkers();
  if (workers.available && fastPathOn('worker-reads')) {
    try {
      return await onWorker(workers);
    } catch (error) {
      if (!(error instanceof FileWorkerLost)) throw error;
    }
  }
  return here();
}

let shared: FileWriteWorkers | null = null;

/**
 * The process's file-writing pool: FERRY_WRITE_WORKERS of the compute threads (0 writes on
 * the calling thread), by default two, so one file's slow call (an fsync) does not stall the rest.
 */
export function fileWriteWorkers(): FileWriteWorkers {
  shared ??= new FileWriteWorkers(poolSizeFrom(process.env.FERRY_WRITE_WORKERS, 0, 2));
  return shared;
}

export type { FileWriteWorkers };
