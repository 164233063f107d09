import { dirname } from 'node:path';
import { Worker } from 'node:worker_threads';
import { fastPathOn } from '../fast-paths.js';
import { poolSizeFrom } from '../pool-size.js';
import { FolderLanes } from './folder-lanes.js';

// A small file's temporary written in ONE hop to a worker thread: open (O_EXCL|O_NOFOLLOW),
// write, set its times, fsync when asked, fstat, close — and on any failure close and remove
// it — all synchronously there, one message each way. On the main thread every promise fs
// call costs ~35 µs of synchronous work on top of its trip through libuv's pool, and a small
// file took six of them in a row: for an upload of thousands of small files that, not the
// disk, set the pace (a CPU profile of the bench upload: ~1 s of the event loop in
// openFileHandle, writeBuffer, close, fstat and futimes for 3,000 files).
//
// A small local file is read (and hashed) in one hop the same way (fast path 'worker-reads'):
// its open, read and close on the main thread cost a local → local transfer ~0.26 s of the
// event loop a round of 1,200 files, its hashing ~0.04 s more.
//
// The worker is a plain script evaluated from this string, so it needs no file of its own
// next to the bundle (electron-vite puts all of main into one file).

const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const fs = require('node:fs');
const { createHash } = require('node:crypto');
const zlib = require('node:zlib');
const FLAGS = fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | (fs.constants.O_NOFOLLOW || 0);
const described = (e) => ({ code: e && e.code, errno: e && e.errno, syscall: e && e.syscall, message: String(e && e.message) });
function write(m) {
  let fd = -1;
  try {
    fd = fs.openSync(m.path, FLAGS, 0o644);
    const bytes = new Uint8Array(m.bytes, 0, m.length);
    for (let done = 0; done < bytes.length; ) done += fs.writeSync(fd, bytes, done, bytes.length - done, done);
    if (m.mtime !== null) fs.futimesSync(fd, m.atime, m.mtime);
    if (m.sync) fs.fsyncSync(fd);
    const s = fs.fstatSync(fd, { bigint: true });
    fs.closeSync(fd);
    fd = -1;
    // put in place in the same hop when asked; a failed rename leaves the written temporary to the caller
    let placeError = null;
    if (m.placeAt !== null) {
      try { fs.renameSync(m.path, m.placeAt); } catch (e) { placeError = described(e); }
    }
    return { id: m.id, size: s.size, mtimeNs: s.mtimeNs, ino: s.ino, placeError };
  } catch (e) {
    // only a file this call made is removed (an EEXIST from open is someone else's)
    if (fd >= 0) {
      try { fs.closeSync(fd); } catch {}
      try { fs.unlinkSync(m.path); } catch {}
    }
    return { id: m.id, error: described(e) };
  }
}
function read(m) {
  // as targets/local/local-target.ts readSmallFileHere reads on the main thread: the whole
  // file, at the start of an ArrayBuffer of its own (it moves to the asking thread); one read
  // of the expected size plus a byte to notice growth, more only if it grew
  let fd = -1;
  try {
    fd = fs.openSync(m.path, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW || 0));
    let buffer = Buffer.allocUnsafeSlow(m.expectedSize + 1);
    let filled = 0;
    for (;;) {
      if (filled === buffer.length) {
        const grown = Buffer.allocUnsafeSlow(buffer.length * 2);
        buffer.copy(grown);
        buffer = grown;
      }
      const got = fs.readSync(fd, buffer, filled, buffer.length - filled, filled);
      filled += got;
      // a regular file reads short only at its end
      if (got === 0 || filled < buffer.length) break;
    }
    fs.closeSync(fd);
    fd = -1;
    const hashes = {};
    const bytes = buffer.subarray(0, filled);
    for (const algorithm of m.algorithms) hashes[algorithm] = createHash(algorithm).update(bytes).digest('hex');
    return { id: m.id, bytes: buffer.buffer, length: filled, hashes };
  } catch (e) {
    if (fd >= 0) try { fs.closeSync(fd); } catch {}
    return { id: m.id, error: described(e) };
  }
}
function readFully(fd, buffer, at) {
  let filled = 0;
  while (filled < buffer.length) {
    const got = fs.readSync(fd, buffer, filled, buffer.length - filled, at + filled);
    if (got === 0) throw new Error('unexpected EOF');
    filled += got;
  }
}
function readZipEntry(m) {
  // as zip-entry-stream.ts windowEntryReader reads it (local header, then the stored bytes,
  // inflated when deflated), with the same messages; the caller checks size and CRC-32
  let fd = -1;
  try {
    fd = fs.openSync(m.path, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW || 0));
    const size = fs.fstatSync(fd).size;
    const header = Buffer.alloc(30);
    if (m.headerAt + 30 > size) throw new Error('unexpected EOF');
    readFully(fd, header, m.headerAt);
    if (header.readUInt32LE(0) !== 0x04034b50) throw new Error('invalid local file header signature');
    const dataAt = m.headerAt + 30 + header.readUInt16LE(26) + header.readUInt16LE(28);
    if (dataAt + m.compressedSize > size) throw new Error('unexpected EOF');
    let bytes = Buffer.allocUnsafeSlow(m.compressedSize);
    readFully(fd, bytes, dataAt);
    fs.closeSync(fd);
    fd = -1;
    if (m.method === 0) {
      if (m.compressedSize !== m.uncompressedSize) throw new Error('its stored size and its size differ');
    } else {
      const inflated = zlib.inflateRawSync(bytes, { maxOutputLength: m.uncompressedSize + 1 });
      // the bytes go back at the start of an ArrayBuffer of their own (movable)
      if (inflated.byteOffset === 0 && inflated.buffer.byteLength === inflated.length) bytes = inflated;
      else {
        bytes = Buffer.allocUnsafeSlow(inflated.length);
        inflated.copy(bytes);
      }
    }
    const hashes = {};
    for (const algorithm of m.algorithms) hashes[algorithm] = createHash(algorithm).update(bytes).digest('hex');
    return { id: m.id, bytes: bytes.buffer, length: bytes.length, crc32: m.crc ? zlib.crc32(bytes) : null, hashes };
  } catch (e) {
    if (fd >= 0) try { fs.closeSync(fd); } catch {}
    return { id: m.id, error: described(e) };
  }
}
function sync(m) {
  // fsync of each path (files or folders); the first failure is reported, the rest still synced
  let error = null;
  for (const path of m.paths) {
    let fd = -1;
    try {
      fd = fs.openSync(path, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW || 0));
      fs.fsyncSync(fd);
    } catch (e) {
      error = error || described(e);
    } finally {
      if (fd >= 0) try { fs.closeSync(fd); } catch {}
    }
  }
  return { id: m.id, error };
}
function renames(m) {
  // each pair on its own: one that fails does not stop the others
  const errors = m.pairs.map(([from, to]) => {
    try {
      fs.renameSync(from, to);
      return null;
    } catch (e) {
      return described(e);
    }
  });
  return { id: m.id, errors };
}
// The written bytes go back with the replies (transferred, not copied): this thread allocates
// almost nothing of its own, so it would collect its garbage rarely, and the file buffers it
// was handed would pile up dead in its memory (tens of MiB) until external-memory pressure
// forced a collection. The main thread's frequent young collections free them at once. The
// bytes read go to the asking thread the same way.
const OPS = { write, read, readZipEntry, renames, sync };
parentPort.on('message', (batch) => {
  const replies = batch.map((m) => OPS[m.op](m));
  const written = batch.filter((m) => m.op === 'write').map((m) => m.bytes);
  const read = replies.filter((r) => r.bytes !== undefined).map((r) => r.bytes);
  parentPort.postMessage(replies, written.concat(read));
});
`;

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

interface WorkerError {
  code?: string;
  errno?: number;
  syscall?: string;
  message: string;
}

/** a reply: an error, or (for a write) the file's stat, or (for a read) its bytes and digests */
type FromWorker = { id: number; error?: WorkerError | null; errors?: (WorkerError | null)[]; placeError?: WorkerError | null; bytes?: ArrayBuffer; length?: number; hashes?: Record<string, string>; crc32?: number | null } & Partial<WrittenFileStat>;

interface Waiting {
  resolve(message: FromWorker): void;
  reject(error: Error): void;
}

interface PoolWorker {
  worker: Worker;
  waiting: Map<number, Waiting>;
}

interface Request {
  message: Record<string, unknown> & { id: number };
  transfer: ArrayBuffer[];
  waiting: Waiting;
  /** the folder a new file is made in (see flush), or null */
  folder: string | null;
}

/** Thrown when a worker thread stopped: the caller may fall back to writing on this thread. */
export class FileWorkerLost extends Error {}

class FileWriteWorkers {
  private workers: PoolWorker[] | null = null;
  private nextId = 1;
  private broken = false;
  /** asked this turn, not yet sent (see flush) */
  private readonly queue: Request[] = [];
  /** the worker of each folder with new files under way (see flush) */
  private readonly lanes = new FolderLanes<PoolWorker>();

  constructor(private readonly size: number) {}

  get available(): boolean {
    return !this.broken && this.size > 0;
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

  private ask(message: Record<string, unknown>, transfer: ArrayBuffer[], folder: string | null = null): Promise<FromWorker> {
    if (!this.available) return Promise.reject(new FileWorkerLost('the file-writing worker threads are not available'));
    return new Promise<FromWorker>((resolve, reject) => {
      this.queue.push({ message: { ...message, id: this.nextId++ }, transfer, waiting: { resolve, reject }, folder });
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
    if (!this.available) {
      for (const request of batch) request.waiting.reject(new FileWorkerLost('the file-writing worker threads are not available'));
      return;
    }
    const workers = (this.workers ??= Array.from({ length: this.size }, () => this.spawn()));
    const load = new Map(workers.map((w) => [w, w.waiting.size]));
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
      if (chosen.waiting.size === 0) chosen.worker.ref();
      for (const request of requests) chosen.waiting.set(request.message.id, request.waiting);
      chosen.worker.postMessage(
        requests.map((request) => request.message),
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

  private spawn(): PoolWorker {
    const worker = new Worker(WORKER_SOURCE, { eval: true, name: 'ferry-file-write' });
    const entry: PoolWorker = { worker, waiting: new Map() };
    worker.on('message', (replies: FromWorker[]) => {
      for (const reply of replies) {
        const waiting = entry.waiting.get(reply.id);
        if (!waiting) continue;
        entry.waiting.delete(reply.id);
        waiting.resolve(reply);
      }
      if (entry.waiting.size === 0) worker.unref();
    });
    worker.on('error', () => this.fail());
    worker.on('exit', () => this.fail());
    // an idle worker never keeps the process alive: unref'd after its listeners are on, since
    // adding a 'message' listener refs the worker's port again (a worker never asked anything
    // then kept a process that had finished from exiting)
    worker.unref();
    return entry;
  }

  /** A worker died: what is waiting fails (FileWorkerLost); later writes go another way. */
  private fail(): void {
    if (this.broken) return;
    this.broken = true;
    for (const entry of this.workers ?? []) {
      for (const waiting of entry.waiting.values()) waiting.reject(new FileWorkerLost('a file-writing worker thread stopped unexpectedly'));
      entry.waiting.clear();
      void entry.worker.terminate();
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
 * The process's file-writing workers: FERRY_WRITE_WORKERS (0 writes on the calling thread),
 * by default two, so one file's slow call (an fsync) does not stall the rest.
 */
export function fileWriteWorkers(): FileWriteWorkers {
  shared ??= new FileWriteWorkers(poolSizeFrom(process.env.FERRY_WRITE_WORKERS, 0, 2));
  return shared;
}

export type { FileWriteWorkers };
