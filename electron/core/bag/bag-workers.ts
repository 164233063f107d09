import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { LOCAL_HEADER_BYTES, FLAG_UTF8, writeLocalHeader } from '../zip/zip-records.js';
import { sampleDecision } from '../zip/compression-choice.js';
import { SharedRing } from '../shared-ring.js';
import { CancelledError } from '../errors.js';
import { fastCrc32ModulePath } from '../crc32.js';
import { poolSizeFrom } from '../pool-size.js';

// The CPU work of a bag download — md5, sha256, CRC-32 and deflate of every byte — runs on
// worker threads, so both cores work and the event loop only moves bytes.
//
// - Small files travel in batches (one message, one copy of their bytes, transferred): the
//   worker hashes each, decides STORE or DEFLATE, compresses, and returns the batch's ZIP
//   records ready to write (local header + data), with each file's digests and CRC.
// - A large file's bytes go through shared-memory slots to two workers at once (md5 on one,
//   sha256 + CRC-32 + deflate on the other), which read each slot once; the main thread
//   writes stored bytes straight from the source, or the deflated bytes the worker returns.
//
// The worker is a plain script evaluated from this string: electron-vite bundles all of
// main into one file, so a worker file of its own would not exist at run time.

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const crypto = require('node:crypto');
const { createHash } = crypto;
const fs = require('node:fs');
const zlib = require('node:zlib');
// The fast CRC-32 (electron/core/crc32.ts), required by the path the main thread loaded it
// from, else zlib's. A chunk here is never empty, where Node 20's zlib.crc32 of some empty
// buffers would drop the running value.
const crc32 = (() => {
  try {
    if (workerData && workerData.crc32Module) return require(workerData.crc32Module).crc32;
  } catch {}
  return zlib.crc32;
})();
const sampleDecision = (${sampleDecision.toString()});
// the one local-header writer (zip/zip-records.ts)
const writeLocalHeader = (${writeLocalHeader.toString()});
// A small file is judged on its first 4 KiB (the entropy test costs ~2 ns a byte, a
// quarter of deflating text, so a large sample would add a quarter to every text file);
// under 4 KiB it is simply deflated, and kept only if smaller: a trial would cost as much.
const SMALL_SAMPLE_BYTES = 4096;
const WHOLE_TRIAL_BYTES = 4096;
const LOCAL_HEADER_BYTES = ${LOCAL_HEADER_BYTES};
const FLAG_UTF8 = ${FLAG_UTF8};
const trialDeflate = (bytes, options) => zlib.deflateRawSync(bytes, { level: options.level });
// never follow a symlink; never wait on a FIFO that took a file's place
const OPEN_FLAGS = fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW || 0) | (fs.constants.O_NONBLOCK || 0);
// one call per digest of a small file (no Hash object) where Node has it
const digest = typeof crypto.hash === 'function' ? (algorithm, bytes) => crypto.hash(algorithm, bytes, 'hex') : (algorithm, bytes) => createHash(algorithm).update(bytes).digest('hex');

// One deflate engine per level, reset per file: making one costs ~10-90 us (its ~300 KiB of
// state allocated and touched), as much as deflating a small file. Node's zlib has no public
// synchronous call on a kept engine, so its handle is driven as zlib.deflateRawSync drives
// it; where that handle is missing (another Node), deflateRawSync is used.
const engines = new Map();
function engineFor(level) {
  if (engines.has(level)) return engines.get(level);
  let engine = null;
  try {
    const stream = zlib.createDeflateRaw({ level });
    const handle = stream._handle;
    const state = stream._writeState;
    if (handle && typeof handle.writeSync === 'function' && typeof handle.reset === 'function' && state instanceof Uint32Array) {
      engine = { stream, handle, state, error: null };
      stream.on('error', (error) => (engine.error = error));
    }
  } catch {
    engine = null;
  }
  engines.set(level, engine);
  return engine;
}

/** Deflates bytes into out at 'at' when that makes them smaller: the deflated length, else -1. */
function deflateInto(bytes, level, out, at) {
  if (bytes.length === 0) return -1;
  const engine = engineFor(level);
  if (engine && !engine.error) {
    engine.handle.reset();
    // room for exactly as many bytes as stored: running out means deflate does not pay
    engine.handle.writeSync(zlib.constants.Z_FINISH, bytes, 0, bytes.length, out, at, bytes.length);
    if (!engine.error) {
      const left = engine.state[0];
      return left === 0 ? -1 : bytes.length - left;
    }
  }
  const deflated = zlib.deflateRawSync(bytes, { level });
  if (deflated.length >= bytes.length) return -1;
  deflated.copy(out, at);
  return deflated.length;
}

const NO_BYTES = Buffer.alloc(0);
// The read buffer for files read here, reused from file to file.
let scratch = Buffer.allocUnsafeSlow(256 * 1024);
/** A whole regular file (it may have grown or shrunk since it was listed). */
function readWhole(path, expected) {
  const fd = fs.openSync(path, OPEN_FLAGS);
  try {
    if (!fs.fstatSync(fd).isFile()) throw Object.assign(new Error('no longer a regular file'), { code: 'ENOENT' });
    if (scratch.length < expected + 1) scratch = Buffer.allocUnsafeSlow(expected + 1);
    let filled = 0;
    for (;;) {
      if (filled === scratch.length) {
        const bigger = Buffer.allocUnsafeSlow(scratch.length * 2);
        scratch.copy(bigger, 0, 0, filled);
        scratch = bigger;
      }
      const want = scratch.length - filled;
      const n = fs.readSync(fd, scratch, filled, want, filled);
      filled += n;
      // a regular file reads short only at its end
      if (n < want) break;
    }
    return scratch.subarray(0, filled);
  } finally {
    fs.closeSync(fd);
  }
}

function batch(m) {
  const data = m.data ? Buffer.from(m.data) : null;
  const results = [];
  let out = Buffer.allocUnsafeSlow(m.estimate);
  let at = 0;
  for (const f of m.files) {
    const name = Buffer.from(f.name, 'utf8');
    let bytes;
    if (f.path === null) {
      bytes = data ? data.subarray(f.start, f.start + f.length) : NO_BYTES;
    } else {
      try {
        bytes = readWhole(f.path, f.length);
      } catch (error) {
        results.push({ error: { code: error.code ?? null, message: String(error.message) } });
        break; // the download stops here: what follows is not needed
      }
    }
    const need = at + LOCAL_HEADER_BYTES + name.length + bytes.length;
    if (need > out.length) {
      const bigger = Buffer.allocUnsafeSlow(Math.max(need, out.length * 2));
      out.copy(bigger, 0, 0, at);
      out = bigger;
    }
    const body = at + LOCAL_HEADER_BYTES + name.length;
    let method = 0;
    let crc = 0;
    let hashes = null;
    let compressedSize = bytes.length;
    if (!f.folder) {
      hashes = {};
      for (const algorithm of f.algorithms) hashes[algorithm] = digest(algorithm, bytes);
      crc = crc32(bytes) >>> 0;
      // remembered digests stand only while the bytes' CRC-32 is the one remembered with them
      if (f.recheck && f.recheck.crc32 !== crc) for (const algorithm of f.recheck.algorithms) hashes[algorithm] = digest(algorithm, bytes);
      if (f.level > 0 && (!f.decide || bytes.length < WHOLE_TRIAL_BYTES || sampleDecision(bytes.subarray(0, SMALL_SAMPLE_BYTES), trialDeflate))) {
        const deflated = deflateInto(bytes, f.level, out, body);
        if (deflated >= 0) {
          method = 8;
          compressedSize = deflated;
        }
      }
    }
    if (method === 0) bytes.copy(out, body);
    writeLocalHeader(out, at, FLAG_UTF8, method, f.dosTime, f.dosDate, crc, compressedSize, bytes.length, name);
    const recordBytes = LOCAL_HEADER_BYTES + name.length + compressedSize;
    at += recordBytes;
    results.push({ hashes, crc, method, compressedSize, size: bytes.length, recordBytes, error: null });
  }
  // only what was written goes back (a smaller copy when deflate saved much)
  let written = out;
  if (at < out.length / 2) {
    written = Buffer.allocUnsafeSlow(at);
    out.copy(written, 0, 0, at);
  }
  parentPort.postMessage({ op: 'batch', id: m.id, data: written.buffer, length: at, results }, [written.buffer]);
}

const streams = new Map();
const rings = new Map();
parentPort.on('message', (m) => {
  if (m.op === 'batch') {
    batch(m);
  } else if (m.op === 'ring') {
    // a view of shared memory the main thread writes large files' bytes into
    rings.set(m.ring, m.buffer);
  } else if (m.op === 'chunk') {
    const s = streams.get(m.id);
    const ack = () => parentPort.postMessage({ op: 'ack', id: m.id, ring: m.ring, slot: m.slot });
    if (!s) return ack();
    const bytes = Buffer.from(rings.get(m.ring), m.offset, m.length);
    for (const hash of s.hashes) hash.update(bytes);
    if (s.crc !== null) s.crc = crc32(bytes, s.crc) >>> 0;
    // the slot is free once deflate has consumed it (its callback), else at once
    if (s.engine) s.engine.write(bytes, ack);
    else ack();
  } else if (m.op === 'open') {
    const s = {
      names: m.algorithms,
      hashes: m.algorithms.map((algorithm) => createHash(algorithm)),
      crc: m.crc ? 0 : null,
      engine: m.level > 0 ? zlib.createDeflateRaw({ level: m.level, highWaterMark: 1024 * 1024 }) : null,
    };
    s.engine?.on('data', (out) => {
      const copy = new Uint8Array(out);
      parentPort.postMessage({ op: 'data', id: m.id, data: copy.buffer }, [copy.buffer]);
    });
    streams.set(m.id, s);
  } else if (m.op === 'close') {
    const s = streams.get(m.id);
    streams.delete(m.id);
    if (!s) return parentPort.postMessage({ op: 'closed', id: m.id, hashes: null });
    const closed = () => {
      const hashes = {};
      s.names.forEach((name, i) => (hashes[name] = s.hashes[i].digest('hex')));
      parentPort.postMessage({ op: 'closed', id: m.id, hashes, crc: s.crc });
    };
    // 'end' comes after the last 'data'
    if (s.engine) s.engine.on('end', closed).end();
    else closed();
  } else if (m.op === 'drop') {
    const s = streams.get(m.id);
    streams.delete(m.id);
    s?.engine?.destroy();
  }
});
`;

/** One file (or folder) of a batch, as the worker needs it. */
export interface BatchFile {
  /** the ZIP entry name (folders end in '/') */
  name: string;
  folder: boolean;
  /** the bytes, or (with `path`) nothing: the worker reads the file */
  bytes: Buffer;
  /**
   * A local file the worker opens and reads itself (O_NOFOLLOW, a regular file only):
   * `expected` is its listed size, for sizing the batch.
   */
  path?: { absolutePath: string; expected: number };
  dosTime: number;
  dosDate: number;
  /** digests to compute ([] for none) */
  algorithms: readonly string[];
  /** digests to compute only when the bytes' CRC-32 is not `crc32` (the caller remembers them for that one) */
  recheck?: { crc32: number; algorithms: readonly string[] };
  /** deflate level; 0 stores */
  level: number;
  /** sample the bytes to decide STORE or DEFLATE (else deflate whenever it shrinks them) */
  decide: boolean;
}

export interface BatchResult {
  hashes: Record<string, string> | null;
  crc: number;
  method: number;
  compressedSize: number;
  size: number;
  /** bytes of this file's local header + data in the batch's records */
  recordBytes: number;
  /**
   * Set when the worker could not read a `path` file (no other field is then): the batch
   * ends at this file.
   */
  error?: { code: string | null; message: string } | null;
}

export interface BatchOutput {
  /** the local header and data of every file, in order, ready to write */
  records: Buffer;
  results: BatchResult[];
}

/** One role of a large file: a worker computing some of its digests, maybe its CRC and deflate. */
export interface StreamRole {
  algorithms: readonly string[];
  crc: boolean;
  /** deflate level, 0 for none; the deflated bytes come back through `onData` */
  level: number;
}

export interface StreamResult {
  hashes: Record<string, string>;
  crc: number;
}

const SLOT_BYTES = 1024 * 1024;
const RING_SLOTS = 6;

type FromWorker =
  | { op: 'batch'; id: number; data: ArrayBuffer; length: number; results: BatchResult[] }
  | { op: 'ack'; id: number; ring: number; slot: number }
  | { op: 'data'; id: number; data: ArrayBuffer }
  | { op: 'closed'; id: number; hashes: Record<string, string> | null; crc: number | null };

interface PoolWorker {
  worker: Worker;
  /** batches and streams outstanding: while any, the worker keeps the process alive */
  busy: number;
  /**
   * the large-file roles it holds that pace their file (md5, deflate): a batch queued here
   * delays the file's every slot, so batches go to the other worker first (see batch())
   */
  pacing: number;
  rings: Set<number>;
}

export class BagWorkerPool {
  private readonly workers: PoolWorker[];
  private readonly batches = new Map<number, { worker: PoolWorker; resolve(value: BatchOutput): void; reject(error: Error): void }>();
  private readonly streams = new Map<number, LargeFileJob>();
  private readonly rings = new Map<number, SharedRing>();
  private readonly freeRings: SharedRing[] = [];
  /** rings of aborted jobs, free again once their last slot is released */
  private readonly draining = new Set<number>();
  private nextId = 1;
  private nextRing = 1;
  broken: Error | null = null;

  constructor(size: number) {
    this.workers = Array.from({ length: Math.max(1, size) }, () => this.spawn());
  }

  get size(): number {
    return this.workers.length;
  }

  /** Hashes, compresses and frames a batch of small files on the least busy worker. */
  batch(files: readonly BatchFile[]): Promise<BatchOutput> {
    if (this.broken) return Promise.reject(this.broken);
    let total = 0;
    let estimate = 0;
    for (const file of files) {
      total += file.bytes.length;
      estimate += LOCAL_HEADER_BYTES + file.name.length * 3 + (file.path ? file.path.expected : file.bytes.length);
    }
    // bytes in memory travel in one transferred buffer; files the worker reads, as paths
    const data = total > 0 ? new ArrayBuffer(total) : null;
    const view = data ? new Uint8Array(data) : null;
    let at = 0;
    const described = files.map((file) => {
      const start = at;
      if (!file.path && file.bytes.length > 0) {
        view!.set(file.bytes, at);
        at += file.bytes.length;
      }
      return {
        name: file.name,
        folder: file.folder,
        path: file.path ? file.path.absolutePath : null,
        start,
        length: file.path ? file.path.expected : file.bytes.length,
        dosTime: file.dosTime,
        dosDate: file.dosDate,
        algorithms: file.algorithms,
        recheck: file.recheck ?? null,
        level: file.level,
        decide: file.decide,
      };
    });
    const worker = this.forBatch();
    const id = this.nextId++;
    this.hold(worker);
    return new Promise<BatchOutput>((resolve, reject) => {
      this.batches.set(id, { worker, resolve, reject });
      worker.worker.postMessage({ op: 'batch', id, data, estimate: Math.max(estimate, 64), files: described }, data ? [data] : []);
    });
  }

  /**
   * A large file's job: its roles spread over distinct workers (the least busy first).
   * `onData` receives deflated bytes in order, if a role deflates.
   */
  stream(roles: readonly StreamRole[], onData: (bytes: Buffer) => void): LargeFileJob {
    if (this.broken) throw this.broken;
    const order = [...this.workers].sort((a, b) => a.busy - b.busy);
    const assigned = roles.map((role, i) => ({ role, worker: order[i % order.length]! }));
    const ring = this.freeRings.pop() ?? this.newRing();
    const job = new LargeFileJob(this, this.nextId++, assigned, ring, onData);
    this.streams.set(job.id, job);
    for (const { role, worker } of assigned) {
      this.hold(worker);
      if (paces(role)) worker.pacing++;
      if (!worker.rings.has(ring.id)) {
        worker.rings.add(ring.id);
        worker.worker.postMessage({ op: 'ring', ring: ring.id, buffer: ring.view.buffer });
      }
      worker.worker.postMessage({ op: 'open', id: job.id, algorithms: role.algorithms, crc: role.crc, level: role.level });
    }
    return job;
  }

  /** @internal */
  finishStream(job: LargeFileJob, assigned: readonly { role: StreamRole; worker: PoolWorker }[]): void {
    this.streams.delete(job.id);
    for (const { role, worker } of assigned) {
      this.letGo(worker);
      if (paces(role)) worker.pacing--;
    }
    if (job.ring.idle) this.freeRings.push(job.ring);
    // an aborted job's slots may still be being read: its ring is reused once they are released
    // (never freed: a worker thread, allocating little, would hold the shared memory long after)
    else this.draining.add(job.ring.id);
  }

  /** @internal one reader (a worker, or the output a slot was lent to) is done with a slot */
  releaseSlot(ringId: number, slot: number): void {
    const ring = this.rings.get(ringId);
    ring?.release(slot);
    if (ring?.idle && this.draining.delete(ring.id)) this.freeRings.push(ring);
  }

  /** Rings (6 MiB of shared memory each) this pool holds: as many as large files were ever in flight at once. */
  get ringsHeld(): number {
    return this.rings.size;
  }

  private newRing(): SharedRing {
    const ring = new SharedRing(this.nextRing++, SLOT_BYTES, RING_SLOTS);
    this.rings.set(ring.id, ring);
    return ring;
  }

  /** The worker with the least work queued, a large file's pacing role counting as one more. */
  private forBatch(): PoolWorker {
    const load = (worker: PoolWorker) => worker.busy + worker.pacing;
    return this.workers.reduce((best, worker) => (load(worker) < load(best) ? worker : best));
  }

  private hold(worker: PoolWorker): void {
    if (worker.busy++ === 0) worker.worker.ref();
  }

  private letGo(worker: PoolWorker): void {
    if (--worker.busy === 0) worker.worker.unref();
  }

  private spawn(): PoolWorker {
    const worker = new Worker(WORKER_SOURCE, { eval: true, name: 'ferry-bag', workerData: { crc32Module: fastCrc32ModulePath() } });
    const entry: PoolWorker = { worker, busy: 0, pacing: 0, rings: new Set() };
    worker.on('message', (message: FromWorker) => {
      switch (message.op) {
        case 'ack':
          this.releaseSlot(message.ring, message.slot);
          return;
        case 'data':
          this.streams.get(message.id)?.deliver(Buffer.from(message.data));
          return;
        case 'closed':
          this.streams.get(message.id)?.closed(message.hashes, message.crc);
          return;
        case 'batch': {
          const waiting = this.batches.get(message.id);
          if (!waiting) return;
          this.batches.delete(message.id);
          this.letGo(waiting.worker);
          waiting.resolve({ records: Buffer.from(message.data, 0, message.length), results: message.results });
          return;
        }
      }
    });
    worker.on('error', (error) => this.fail(error));
    worker.on('exit', (code) => this.fail(new Error(`a bag worker thread stopped (exit code ${code})`)));
    // unref'd once its listeners are on: adding a 'message' listener refs it again (file-write-workers.ts spawn)
    worker.unref();
    return entry;
  }

  private fail(error: Error): void {
    if (this.broken) return;
    this.broken = new Error(`The ZIP could not be made: ${error.message}`);
    for (const waiting of this.batches.values()) waiting.reject(this.broken);
    this.batches.clear();
    for (const job of this.streams.values()) job.fail(this.broken);
    this.streams.clear();
    for (const ring of this.rings.values()) ring.reset();
    for (const worker of this.workers) void worker.worker.terminate();
  }
}

/** One large file's bytes on their way through the workers. */
export class LargeFileJob {
  private slot = -1;
  private filled = 0;
  private results: StreamResult[] = [];
  private waiting = 0;
  private done: { resolve(value: StreamResult): void; reject(error: Error): void } | null = null;
  private error: Error | null = null;
  private finished = false;

  constructor(
    private readonly pool: BagWorkerPool,
    readonly id: number,
    private readonly assigned: { role: StreamRole; worker: PoolWorker }[],
    readonly ring: SharedRing,
    private readonly onData: (bytes: Buffer) => void,
  ) {}

  /** Copies `chunk` into the shared slots, handing each full slot to the workers. */
  async write(chunk: Buffer): Promise<void> {
    let offset = 0;
    while (offset < chunk.length) {
      this.throwIfStopped();
      if (this.slot < 0) {
        const slot = await this.ring.acquire();
        // a stopped job's ring may already serve another file
        this.throwIfStopped();
        this.slot = slot;
        this.filled = 0;
      }
      const n = Math.min(chunk.length - offset, SLOT_BYTES - this.filled);
      chunk.copy(this.ring.view, this.slot * SLOT_BYTES + this.filled, offset, offset + n);
      this.filled += n;
      offset += n;
      if (this.filled === SLOT_BYTES) this.post();
    }
  }

  /**
   * Reads the file's next bytes straight into a shared slot (`read` fills the buffer it is
   * given as far as it can, 0 at the end) and hands them to the workers: no copy, and no
   * buffer of its own per chunk. With `lend`, the slot also waits for `giveBack` (the
   * output sending those bytes) before it is reused. Null at the end of the file.
   */
  async fill(read: (into: Buffer) => Promise<number>, lend: boolean): Promise<{ bytes: Buffer; giveBack?: () => void } | null> {
    this.throwIfStopped();
    const slot = await this.ring.acquire();
    // a stopped job's ring may already serve another file: not one byte more goes into it
    this.throwIfStopped();
    // held while the file is read into it, so a job stopped meanwhile leaves its ring to
    // drain (see finishStream) rather than to the next file while this read still writes
    this.ring.hand(slot, 1);
    const start = slot * SLOT_BYTES;
    let filled = 0;
    try {
      filled = await read(this.ring.view.subarray(start, start + SLOT_BYTES));
      this.throwIfStopped();
    } catch (error) {
      this.pool.releaseSlot(this.ring.id, slot);
      throw error;
    }
    if (filled === 0) {
      this.pool.releaseSlot(this.ring.id, slot);
      return null;
    }
    this.ring.hand(slot, this.assigned.length + (lend ? 1 : 0));
    for (const { worker } of this.assigned) worker.worker.postMessage({ op: 'chunk', id: this.id, ring: this.ring.id, slot, offset: start, length: filled });
    const bytes = this.ring.view.subarray(start, start + filled);
    if (!lend) return { bytes };
    let given = false;
    const giveBack = () => {
      if (given) return;
      given = true;
      this.pool.releaseSlot(this.ring.id, slot);
    };
    return { bytes, giveBack };
  }

  /** Digests (merged over the roles) and CRC once every byte is processed. */
  end(): Promise<StreamResult> {
    if (this.error) return Promise.reject(this.error);
    if (this.slot >= 0) this.post();
    this.waiting = this.assigned.length;
    const result = new Promise<StreamResult>((resolve, reject) => (this.done = { resolve, reject }));
    for (const { worker } of this.assigned) worker.worker.postMessage({ op: 'close', id: this.id });
    return result;
  }

  abort(): void {
    if (this.finished) return;
    for (const { worker } of this.assigned) worker.worker.postMessage({ op: 'drop', id: this.id });
    this.finish();
  }

  /** @internal deflated bytes from the worker, in order */
  deliver(bytes: Buffer): void {
    if (!this.finished) this.onData(bytes);
  }

  /** @internal */
  closed(hashes: Record<string, string> | null, crc: number | null): void {
    if (hashes === null) return this.fail(new Error('a bag worker thread lost a file'));
    this.results.push({ hashes, crc: crc ?? -1 });
    if (--this.waiting > 0) return;
    const merged: StreamResult = { hashes: {}, crc: 0 };
    for (const result of this.results) {
      Object.assign(merged.hashes, result.hashes);
      if (result.crc !== -1) merged.crc = result.crc;
    }
    const done = this.done;
    this.finish();
    done?.resolve(merged);
  }

  /** @internal */
  fail(error: Error): void {
    this.error = error;
    const done = this.done;
    this.finish();
    done?.reject(error);
  }

  private throwIfStopped(): void {
    if (this.error) throw this.error;
    if (this.finished) throw new CancelledError();
  }

  private post(): void {
    const slot = this.slot;
    this.slot = -1;
    if (this.filled === 0) return;
    this.ring.hand(slot, this.assigned.length);
    for (const { worker } of this.assigned) {
      worker.worker.postMessage({ op: 'chunk', id: this.id, ring: this.ring.id, slot, offset: slot * SLOT_BYTES, length: this.filled });
    }
  }

  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.done = null;
    this.pool.finishStream(this, this.assigned);
  }
}

/** md5 (the slowest digest) and deflate set a large file's pace */
function paces(role: StreamRole): boolean {
  return role.level > 0 || role.algorithms.includes('md5');
}

function poolSize(): number {
  return poolSizeFrom(process.env.FERRY_BAG_WORKERS, 1, Math.min(4, Math.max(1, os.availableParallelism())));
}

let shared: BagWorkerPool | null = null;

/** The process's pool (a new one after a worker failure). */
export function bagWorkers(): BagWorkerPool {
  if (!shared || shared.broken) shared = new BagWorkerPool(poolSize());
  return shared;
}
