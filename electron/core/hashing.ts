import { createHash, type Hash } from 'node:crypto';
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import os from 'node:os';
import { Transform, type TransformCallback, type Readable } from 'node:stream';
import { ComputeShare, ComputeThreadLost, serveComputeKind, type ComputeThread } from './compute/compute-threads.js';
import type { HashReply } from './compute/messages.js';
import { SharedRing } from './shared-ring.js';
import { poolSizeFrom } from './pool-size.js';
import { isLent } from './read-buffers.js';

/**
 * The algorithms Ferry computes from bytes, strongest first (the order a check picks one in);
 * names as in the contract's `hashes` keys. The one list: everything that asks "can Ferry
 * compute this digest?" asks here.
 */
export const COMPUTABLE_HASHES = ['sha512', 'sha256', 'sha1', 'md5'] as const;
export type HashAlgorithm = (typeof COMPUTABLE_HASHES)[number];

/** Whether Ferry can compute `algorithm` (a name as a target reports it) from bytes. */
export function isComputableHash(algorithm: string): algorithm is HashAlgorithm {
  return (COMPUTABLE_HASHES as readonly string[]).includes(algorithm);
}

// Hashing is the CPU cost of every transfer (md5 ≈ 1.5 ns/byte, even sha256 with SHA-NI
// ≈ 0.5). For a few hundred KiB it runs right here; beyond that each algorithm runs on
// its own worker thread, so md5 and sha256 use both cores and the event loop stays free
// to move bytes. Bytes reach the workers through shared memory (a small ring of slots
// per stream, recycled), so nothing is allocated per chunk and only tiny messages cross
// threads; a stream waits only when all of its slots are still being hashed.

/** Below this many bytes a stream is hashed on the calling thread: a worker round trip would cost more. */
export const INLINE_HASH_BYTES = 256 * 1024;
const SLOT_BYTES = 512 * 1024;
const RING_SLOTS = 4;

/** Several digests of the same bytes, fed once, on this thread. */
export class MultiHash {
  private readonly hashes: [string, Hash][];

  constructor(algorithms: readonly string[]) {
    this.hashes = algorithms.map((algorithm) => [algorithm, createHash(algorithm)]);
  }

  update(chunk: Buffer): void {
    for (const [, hash] of this.hashes) hash.update(chunk);
  }

  digest(): Record<string, string> {
    return Object.fromEntries(this.hashes.map(([algorithm, hash]) => [algorithm, hash.digest('hex')]));
  }
}

// ---------------------------------------------------------------------------------------
// The hash pool: the compute threads (compute/compute-threads.ts) hash what streams put in
// rings (compute/hash-work.ts does the hashing there).

interface PoolWorker {
  thread: ComputeThread;
  /** rings this worker has been given */
  rings: Set<number>;
}

class HashWorkerPool {
  private readonly threads: ComputeShare<PoolWorker>;
  private readonly rings = new Map<number, SharedRing>();
  private readonly freeRings: SharedRing[] = [];
  private readonly digests = new Map<number, { expect: number; got: Record<string, string>; resolve(value: Record<string, string>): void; reject(error: Error): void }>();
  private nextId = 1;
  private nextRing = 1;

  /** `size`: how many of the compute threads this pool uses, 0 for none (streams are then hashed on the calling thread) */
  constructor(size: number) {
    this.threads = new ComputeShare(size, (thread) => ({ thread, rings: new Set<number>() }));
    serveComputeKind({ kind: 'hash', onMessage: (_thread, message) => this.answered(message), onLost: (error) => this.lost(error) });
  }

  get available(): boolean {
    return this.threads.available;
  }

  /**
   * A session hashing one stream's bytes with `algorithms`, each on its own worker where
   * possible; null when the threads cannot be had (the caller hashes on its own thread).
   */
  session(algorithms: readonly string[]): WorkerHashSession | null {
    const workers = this.threads.started();
    if (workers === null) return null;
    // Each algorithm goes to the least busy worker not already given one of this stream's;
    // with more algorithms than workers, some share one (it hashes each slot for all of them).
    const groups = new Map<PoolWorker, string[]>();
    for (const algorithm of algorithms) {
      const unused = workers.filter((w) => !groups.has(w));
      const candidates = unused.length > 0 ? unused : workers;
      const chosen = candidates.reduce((best, w) => (w.thread.busy < best.thread.busy ? w : best));
      groups.set(chosen, [...(groups.get(chosen) ?? []), algorithm]);
    }
    const ring = this.freeRings.pop() ?? this.newRing();
    return new WorkerHashSession(this, this.nextId++, [...groups].map(([worker, names]) => ({ worker, algorithms: names })), ring);
  }

  private newRing(): SharedRing {
    const ring = new SharedRing(this.nextRing++, SLOT_BYTES, RING_SLOTS);
    this.rings.set(ring.id, ring);
    return ring;
  }

  /** Gives `ring` to `worker` once (the worker keeps a view of the shared memory). */
  share(worker: PoolWorker, ring: SharedRing): void {
    if (worker.rings.has(ring.id)) return;
    worker.rings.add(ring.id);
    worker.thread.post({ kind: 'hash', op: 'ring', ring: ring.id, buffer: ring.view.buffer as SharedArrayBuffer });
  }

  /** Back to the free list once the workers have read all of it (an aborted stream's acks may still be coming). */
  recycle(ring: SharedRing): void {
    if (ring.idle) this.freeRings.push(ring);
    else ring.onIdle = () => this.freeRings.push(ring);
  }

  expectDigests(id: number, count: number): Promise<Record<string, string>> {
    return new Promise((resolve, reject) => this.digests.set(id, { expect: count, got: {}, resolve, reject }));
  }

  private answered(message: HashReply): void {
    if (message.op === 'ack') {
      this.rings.get(message.ring)?.release(message.slot);
      return;
    }
    const waiting = this.digests.get(message.id);
    if (!waiting) return;
    if (message.hex === null) {
      this.digests.delete(message.id);
      waiting.reject(new Error('a hash was lost by its worker thread'));
      return;
    }
    Object.assign(waiting.got, message.hex);
    if (--waiting.expect === 0) {
      this.digests.delete(message.id);
      waiting.resolve(waiting.got);
    }
  }

  /** The threads are lost: streams still hashing fail (the next starts new threads). */
  private lost(error: ComputeThreadLost): void {
    for (const waiting of this.digests.values()) waiting.reject(error);
    this.digests.clear();
    for (const ring of this.rings.values()) ring.reset();
  }
}

/** One stream's hashes being computed on worker threads. */
export class WorkerHashSession {
  private slot = -1;
  private filled = 0;
  private finished = false;

  constructor(
    private readonly pool: HashWorkerPool,
    private readonly id: number,
    private readonly groups: { worker: PoolWorker; algorithms: string[] }[],
    private readonly ring: SharedRing,
  ) {
    for (const { worker, algorithms } of groups) {
      worker.thread.hold();
      pool.share(worker, ring);
      worker.thread.post({ kind: 'hash', op: 'start', id, algorithms });
    }
  }

  /** Copies `chunk` into shared slots (waiting for a free one when all are being hashed). */
  async update(chunk: Uint8Array): Promise<void> {
    let offset = 0;
    while (offset < chunk.length) {
      if (this.slot < 0) {
        this.slot = await this.ring.acquire();
        this.filled = 0;
      }
      const n = Math.min(chunk.length - offset, SLOT_BYTES - this.filled);
      this.ring.view.set(chunk.subarray(offset, offset + n), this.slot * SLOT_BYTES + this.filled);
      this.filled += n;
      offset += n;
      if (this.filled === SLOT_BYTES) this.post();
    }
  }

  /** A whole slot to read into directly (no copy); hand it over with `submit`. */
  async directSlot(): Promise<Buffer> {
    if (this.slot >= 0) this.post();
    this.slot = await this.ring.acquire();
    this.filled = 0;
    return this.ring.view.subarray(this.slot * SLOT_BYTES, (this.slot + 1) * SLOT_BYTES);
  }

  /** Hashes the first `length` bytes of the slot given by `directSlot`. */
  submit(length: number): void {
    this.filled = length;
    this.post();
  }

  async digest(): Promise<Record<string, string>> {
    if (this.slot >= 0) this.post();
    const result = this.pool.expectDigests(this.id, this.groups.length);
    for (const { worker } of this.groups) worker.thread.post({ kind: 'hash', op: 'digest', id: this.id });
    try {
      return await result;
    } finally {
      this.end();
    }
  }

  /** Forget this stream (it failed or was cancelled). */
  abort(): void {
    if (this.finished) return;
    for (const { worker } of this.groups) worker.thread.post({ kind: 'hash', op: 'drop', id: this.id });
    this.end();
  }

  private post(): void {
    const slot = this.slot;
    this.slot = -1;
    if (this.filled === 0) return;
    this.ring.hand(slot, this.groups.length);
    for (const { worker } of this.groups) worker.thread.post({ kind: 'hash', op: 'update', id: this.id, ring: this.ring.id, slot, offset: slot * SLOT_BYTES, length: this.filled });
  }

  private end(): void {
    if (this.finished) return;
    this.finished = true;
    for (const { worker } of this.groups) worker.thread.letGo();
    this.pool.recycle(this.ring);
  }
}

function poolSize(): number {
  // One per algorithm Ferry usually computes (md5 + sha256), more only with cores to spare
  // (as many as there are compute threads at most: see start)
  return poolSizeFrom(process.env.FERRY_HASH_WORKERS, 0, Math.min(4, Math.max(2, os.availableParallelism() - 1)));
}

let sharedPool: HashWorkerPool | null = null;

function pool(): HashWorkerPool {
  sharedPool ??= new HashWorkerPool(poolSize());
  return sharedPool;
}

/** True when large inputs are hashed on worker threads (tests compare both paths). */
export function hashWorkersAvailable(): boolean {
  return pool().available;
}

// ---------------------------------------------------------------------------------------

/**
 * Digests of a stream of chunks: the first INLINE_HASH_BYTES are held (not copied), and
 * either hashed here when the stream ends, or — once it grows past that — handed with
 * everything after them to the worker threads.
 */
export class StreamHasher {
  private held: Buffer[] = [];
  private heldBytes = 0;
  private session: WorkerHashSession | null = null;
  private readonly algorithms: string[];

  constructor(
    algorithms: readonly string[],
    private readonly inlineLimit = INLINE_HASH_BYTES,
  ) {
    this.algorithms = [...algorithms];
  }

  /** Adds algorithms while no byte has been seen yet; false once too late. */
  addAlgorithms(algorithms: readonly string[]): boolean {
    if (this.session || this.heldBytes > 0 || this.held.length > 0) return false;
    for (const algorithm of algorithms) if (!this.algorithms.includes(algorithm)) this.algorithms.push(algorithm);
    return true;
  }

  /** Resolves once the chunk may be reused by the caller (at once, or when a slot is free). */
  update(chunk: Buffer): Promise<void> | void {
    if (this.session) return this.session.update(chunk);
    // a chunk on loan goes back to its reader once written (read-buffers.ts): keep a copy
    this.held.push(isLent(chunk) ? Buffer.from(chunk) : chunk);
    this.heldBytes += chunk.length;
    if (this.heldBytes <= this.inlineLimit || this.algorithms.length === 0 || !pool().available) return;
    this.session = pool().session(this.algorithms);
    // no threads after all (they could not start): the held bytes are hashed here at the end
    if (this.session === null) return;
    return this.handOver(this.session);
  }

  async digest(): Promise<Record<string, string>> {
    if (this.session) return this.session.digest();
    const multi = new MultiHash(this.algorithms);
    for (const chunk of this.held) multi.update(chunk);
    this.held = [];
    return multi.digest();
  }

  abort(): void {
    this.session?.abort();
    this.held = [];
  }

  private async handOver(session: WorkerHashSession): Promise<void> {
    const held = this.held;
    this.held = [];
    for (const chunk of held) await session.update(chunk);
  }
}

/**
 * A pass-through that hashes and counts the bytes going by. `digests` and `bytes` are
 * final once the stream has ended.
 */
export class HashingPassThrough extends Transform {
  private readonly hasher: StreamHasher;
  private readonly names: string[];
  bytes = 0;
  digests: Record<string, string> | null = null;
  /**
   * The hasher this one's bytes come from, when it took this one's algorithms (see
   * hashAlongWith): it then hashes for both, and this one's digests are its digests.
   */
  private upstream: HashingPassThrough | null = null;

  constructor(
    algorithms: readonly string[],
    private readonly onBytes?: (n: number) => void,
  ) {
    super();
    this.names = [...algorithms];
    this.hasher = new StreamHasher(algorithms);
  }

  get algorithms(): readonly string[] {
    return this.names;
  }

  /**
   * Also computes `algorithms`, if no byte has passed yet (true), so a consumer down the line
   * can take its digests instead of hashing the same bytes again.
   */
  addAlgorithms(algorithms: readonly string[]): boolean {
    if (this.bytes > 0) return false;
    if (!(this.upstream ? this.upstream.addAlgorithms(algorithms) : this.hasher.addAlgorithms(algorithms))) return false;
    for (const algorithm of algorithms) if (!this.names.includes(algorithm)) this.names.push(algorithm);
    return true;
  }

  /**
   * Lets `source`, the stream piped into this one, compute this one's digests too when it is
   * a HashingPassThrough that has not passed a byte yet: they see the same bytes, so a chain
   * of watchers (a job's fixity check over the provenance record's watch, each a hasher)
   * hashes each byte once. Call before any byte has passed; otherwise this one hashes alone.
   */
  hashAlongWith(source: Readable): void {
    if (this.bytes > 0 || this.upstream || !(source instanceof HashingPassThrough) || !source.addAlgorithms(this.names)) return;
    this.upstream = source;
    this.hasher.abort();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    this.onBytes?.(chunk.length);
    const copied = this.upstream ? undefined : this.hasher.update(chunk);
    if (copied) copied.then(() => callback(null, chunk), callback);
    else callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    if (this.upstream) {
      // the source has flushed (its digests are final) before its end reached this stream
      const found = this.upstream.digests ?? {};
      this.digests = Object.fromEntries(this.names.filter((name) => found[name] !== undefined).map((name) => [name, found[name]!]));
      callback();
      return;
    }
    this.hasher.digest().then((digests) => {
      this.digests = digests;
      callback();
    }, callback);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (this.digests === null) this.hasher.abort();
    callback(error);
  }
}

export async function hashStream(stream: Readable, algorithms: readonly string[]): Promise<{ hashes: Record<string, string>; bytes: number }> {
  const hasher = new StreamHasher(algorithms);
  let bytes = 0;
  try {
    for await (const chunk of stream) {
      bytes += (chunk as Buffer).length;
      await hasher.update(chunk as Buffer);
    }
    return { hashes: await hasher.digest(), bytes };
  } catch (error) {
    hasher.abort();
    throw error;
  }
}

/**
 * One read of the file for all algorithms. Large files are read straight into the shared
 * slots the worker threads hash from (the read of the next slot overlaps their hashing).
 */
export async function hashFile(filePath: string, algorithms: readonly string[], flags = constants.O_RDONLY): Promise<{ hashes: Record<string, string>; bytes: number }> {
  const handle = await open(filePath, flags);
  try {
    const { size } = await handle.stat();
    if (size <= INLINE_HASH_BYTES || algorithms.length === 0 || !pool().available) {
      return await hashStream(handle.createReadStream({ highWaterMark: 1024 * 1024, autoClose: false }), algorithms);
    }
    const session = pool().session(algorithms);
    if (session === null) return await hashStream(handle.createReadStream({ highWaterMark: 1024 * 1024, autoClose: false }), algorithms);
    let bytes = 0;
    try {
      for (;;) {
        const slot = await session.directSlot();
        const { bytesRead } = await handle.read(slot, 0, slot.length, null);
        if (bytesRead === 0) break;
        bytes += bytesRead;
        session.submit(bytesRead);
      }
      return { hashes: await session.digest(), bytes };
    } catch (error) {
      session.abort();
      throw error;
    }
  } finally {
    await handle.close();
  }
}
