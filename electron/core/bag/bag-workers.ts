import os from 'node:os';
import { ComputeThreadLost, computeThreads, serveComputeKind, type ComputeThread } from '../compute/compute-threads.js';
import type { BagBatchResult, BagReply } from '../compute/messages.js';
import { LOCAL_HEADER_BYTES } from '../zip/zip-records.js';
import { SharedRing } from '../shared-ring.js';
import { CancelledError } from '../errors.js';
import { fastCrc32ModulePath } from '../crc32.js';
import { poolSizeFrom } from '../pool-size.js';

// The CPU work of a bag download — md5, sha256, CRC-32 and deflate of every byte — runs on
// compute threads (compute/compute-threads.ts; compute/bag-work.ts does the work there), so
// both cores work and the event loop only moves bytes.
//
// - Small files travel in batches (one message, one copy of their bytes, transferred): the
//   thread hashes each, decides STORE or DEFLATE, compresses, and returns the batch's ZIP
//   records ready to write (local header + data), with each file's digests and CRC.
// - A large file's bytes go through shared-memory slots to two threads at once (md5 on one,
//   sha256 + CRC-32 + deflate on the other), which read each slot once; the main thread
//   writes stored bytes straight from the source, or the deflated bytes the thread returns.

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

export type BatchResult = BagBatchResult;

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

interface PoolWorker {
  /** its batches and streams outstanding (`busy`) keep the process alive */
  thread: ComputeThread;
  /**
   * the large-file roles it holds that pace their file (md5, deflate): a batch queued here
   * delays the file's every slot, so batches go to the other worker first (see batch())
   */
  pacing: number;
  rings: Set<number>;
}

export class BagWorkerPool {
  private readonly workers: PoolWorker[] = [];
  private readonly byThread = new Map<ComputeThread, PoolWorker>();
  private readonly batches = new Map<number, { worker: PoolWorker; resolve(value: BatchOutput): void; reject(error: Error): void }>();
  private readonly streams = new Map<number, LargeFileJob>();
  private readonly rings = new Map<number, SharedRing>();
  private readonly freeRings: SharedRing[] = [];
  /** rings of aborted jobs, free again once their last slot is released */
  private readonly draining = new Set<number>();
  private nextId = 1;
  private nextRing = 1;
  broken: Error | null = null;

  /** `size`: how many of the compute threads this pool uses (at least one) */
  constructor(size: number) {
    serveComputeKind({
      kind: 'bag',
      onMessage: (thread, message) => {
        const worker = this.byThread.get(thread);
        if (worker) this.answered(worker, message);
      },
      onLost: (error) => this.lost(error),
    });
    const set = computeThreads();
    if (set === null) {
      this.broken = new Error("The ZIP could not be made: Ferry's worker threads could not be started.");
      return;
    }
    const crc32Module = fastCrc32ModulePath();
    for (const thread of set.threads.slice(0, Math.max(1, size))) {
      const worker: PoolWorker = { thread, pacing: 0, rings: new Set<number>() };
      this.workers.push(worker);
      this.byThread.set(thread, worker);
      thread.post({ kind: 'bag', op: 'crc32', modulePath: crc32Module });
    }
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
    worker.thread.hold();
    return new Promise<BatchOutput>((resolve, reject) => {
      this.batches.set(id, { worker, resolve, reject });
      worker.thread.post({ kind: 'bag', op: 'batch', id, data, estimate: Math.max(estimate, 64), files: described }, data ? [data] : []);
    });
  }

  /**
   * A large file's job: its roles spread over distinct workers (the least busy first).
   * `onData` receives deflated bytes in order, if a role deflates.
   */
  stream(roles: readonly StreamRole[], onData: (bytes: Buffer) => void): LargeFileJob {
    if (this.broken) throw this.broken;
    const order = [...this.workers].sort((a, b) => a.thread.busy - b.thread.busy);
    const assigned = roles.map((role, i) => ({ role, worker: order[i % order.length]! }));
    const ring = this.freeRings.pop() ?? this.newRing();
    const job = new LargeFileJob(this, this.nextId++, assigned, ring, onData);
    this.streams.set(job.id, job);
    for (const { role, worker } of assigned) {
      worker.thread.hold();
      if (paces(role)) worker.pacing++;
      if (!worker.rings.has(ring.id)) {
        worker.rings.add(ring.id);
        worker.thread.post({ kind: 'bag', op: 'ring', ring: ring.id, buffer: ring.view.buffer as SharedArrayBuffer });
      }
      worker.thread.post({ kind: 'bag', op: 'open', id: job.id, algorithms: role.algorithms, crc: role.crc, level: role.level });
    }
    return job;
  }

  /** @internal */
  finishStream(job: LargeFileJob, assigned: readonly { role: StreamRole; worker: PoolWorker }[]): void {
    this.streams.delete(job.id);
    for (const { role, worker } of assigned) {
      worker.thread.letGo();
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
    const load = (worker: PoolWorker) => worker.thread.busy + worker.pacing;
    return this.workers.reduce((best, worker) => (load(worker) < load(best) ? worker : best));
  }

  private answered(worker: PoolWorker, message: BagReply): void {
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
        worker.thread.letGo();
        waiting.resolve({ records: Buffer.from(message.data, 0, message.length), results: message.results });
        return;
      }
    }
  }

  /** The threads are lost: the downloads using them fail; `bagWorkers()` makes a new pool for the next. */
  private lost(error: ComputeThreadLost): void {
    this.broken = new Error(`The ZIP could not be made: ${error.message}`);
    for (const waiting of this.batches.values()) waiting.reject(this.broken);
    this.batches.clear();
    for (const job of this.streams.values()) job.fail(this.broken);
    this.streams.clear();
    for (const ring of this.rings.values()) ring.reset();
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
    for (const { worker } of this.assigned) worker.thread.post({ kind: 'bag', op: 'chunk', id: this.id, ring: this.ring.id, slot, offset: start, length: filled });
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
    for (const { worker } of this.assigned) worker.thread.post({ kind: 'bag', op: 'close', id: this.id });
    return result;
  }

  abort(): void {
    if (this.finished) return;
    for (const { worker } of this.assigned) worker.thread.post({ kind: 'bag', op: 'drop', id: this.id });
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
      worker.thread.post({ kind: 'bag', op: 'chunk', id: this.id, ring: this.ring.id, slot, offset: slot * SLOT_BYTES, length: this.filled });
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
