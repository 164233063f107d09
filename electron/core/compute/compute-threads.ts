import os from 'node:os';
import { Worker, type Transferable } from 'node:worker_threads';
import { poolSizeFrom } from '../pool-size.js';
import type { FromCompute, ToCompute } from './messages.js';
import { computeWorkerSource } from './worker-source.js';

// Ferry's one set of threads for work off the event loop. Three pools share it — the
// file-write pool (jobs/file-write-workers.ts), the hash pool (hashing.ts) and the bag pool
// (bag/bag-workers.ts) — each choosing among the same threads by how much work each already
// holds, whatever its kind. Every thread runs the one script (compute-worker.ts), takes the one
// message type (messages.ts), keeps the process alive only while it holds work, and is lost
// the same way.

/** What a pool had asked of a set of threads that was lost fails with this. */
export class ComputeThreadLost extends Error {}

/** One compute thread. */
export interface ComputeThread {
  post(message: ToCompute, transfer?: readonly Transferable[]): void;
  /** Work is outstanding on it: it keeps the process alive until as many letGo calls. */
  hold(): void;
  letGo(): void;
  /** holds not yet let go, by every pool */
  readonly busy: number;
}

export type ComputeKind = FromCompute['kind'];

/** The pool that takes the replies of one kind. */
export interface ComputeClient<K extends ComputeKind> {
  kind: K;
  onMessage(thread: ComputeThread, message: Extract<FromCompute, { kind: K }>): void;
  /** the set was lost: fail what waits on it */
  onLost(error: ComputeThreadLost): void;
}

class Thread implements ComputeThread {
  busy = 0;
  constructor(readonly worker: Worker) {}

  post(message: ToCompute, transfer: readonly Transferable[] = []): void {
    this.worker.postMessage(message, transfer);
  }

  hold(): void {
    if (this.busy++ === 0) this.worker.ref();
  }

  letGo(): void {
    if (--this.busy === 0) this.worker.unref();
  }
}

/**
 * Sets started in a process at most: after a loss the next work starts a fresh set, so one
 * thread's crash does not leave the process without threads; a set that fails again and again
 * (threads that cannot start at all) stops being replaced, and the pools work without one.
 */
export const MAX_THREAD_SETS = 3;

/**
 * One set of compute threads. The failure policy, one for every pool: a thread that fails (an
 * error thrown there, an exit) or cannot start loses the whole set — `lost` then says why,
 * every thread is terminated, and every pool's `onLost` is called once to fail what it was
 * waiting for. A lost set is never used again (computeThreads() starts the next one).
 */
export class ComputeThreadSet {
  readonly threads: readonly ComputeThread[];
  lost: ComputeThreadLost | null = null;
  private readonly started: Thread[] = [];

  constructor(size: number) {
    try {
      const source = computeWorkerSource();
      for (let i = 0; i < size; i++) this.started.push(this.spawn(source));
    } catch (error) {
      this.lose(new ComputeThreadLost(`Ferry's worker threads could not start: ${(error as Error).message}`));
    }
    this.threads = this.started;
  }

  private spawn(source: string): Thread {
    const worker = new Worker(source, { eval: true, name: 'ferry-compute' });
    threadsStarted++;
    const thread = new Thread(worker);
    worker.on('message', (message: FromCompute) => {
      if (this.lost === null) (clients.get(message.kind) as ComputeClient<ComputeKind> | undefined)?.onMessage(thread, message);
    });
    worker.on('error', (error) => this.lose(new ComputeThreadLost(`a worker thread failed: ${error.message}`)));
    worker.on('exit', (code) => this.lose(new ComputeThreadLost(`a worker thread stopped (exit code ${code})`)));
    // unref'd once its listeners are on: adding a 'message' listener refs the worker's port
    // again (a set never asked anything then kept a process that had finished from exiting)
    worker.unref();
    return thread;
  }

  private lose(error: ComputeThreadLost): void {
    if (this.lost) return;
    this.lost = error;
    for (const thread of this.started) void thread.worker.terminate();
    for (const client of clients.values()) client.onLost(error);
  }
}

const clients = new Map<ComputeKind, ComputeClient<ComputeKind>>();
let current: ComputeThreadSet | null = null;
let setsStarted = 0;
let threadsStarted = 0;

/** Threads this process has started, in every set (what a test counts). */
export function computeThreadsStarted(): number {
  return threadsStarted;
}

/** The pool that takes `client.kind`'s replies from now on (a pool made again replaces the last). */
export function serveComputeKind<K extends ComputeKind>(client: ComputeClient<K>): void {
  clients.set(client.kind, client as unknown as ComputeClient<ComputeKind>);
}

/**
 * How many threads the set has: FERRY_COMPUTE_THREADS, by default one a core, at least two (a
 * file's slow call, an fsync, then does not stall the rest) and at most four.
 */
export function computeThreadCount(): number {
  return poolSizeFrom(process.env.FERRY_COMPUTE_THREADS, 1, Math.min(4, Math.max(2, os.availableParallelism())));
}

/** The process's compute threads, started at the first call; null when none can be had (see MAX_THREAD_SETS). */
export function computeThreads(): ComputeThreadSet | null {
  if (current && current.lost === null) return current;
  if (setsStarted >= MAX_THREAD_SETS) return null;
  setsStarted++;
  current = new ComputeThreadSet(computeThreadCount());
  return current.lost === null ? current : null;
}

/** Whether computeThreads() can still give threads (a set running, or one more may start). */
export function computeThreadsAvailable(): boolean {
  return (current !== null && current.lost === null) || setsStarted < MAX_THREAD_SETS;
}

/**
 * A pool's share of the compute threads: the first `size` threads of the running set, each
 * with what the pool keeps for it (`make`), made again when a new set has replaced a lost one.
 * `size` 0: the pool uses none and works on its calling thread.
 */
export class ComputeShare<W extends { thread: ComputeThread }> {
  private set: ComputeThreadSet | null = null;
  private workers: W[] = [];
  private readonly byThread = new Map<ComputeThread, W>();

  constructor(
    private readonly size: number,
    private readonly make: (thread: ComputeThread) => W,
  ) {}

  /** Whether this pool may have threads (it uses some, and computeThreads() can still give them). */
  get available(): boolean {
    return this.size > 0 && computeThreadsAvailable();
  }

  /** The share, started (or started again after a loss) at this call; null when there are none. */
  started(): readonly W[] | null {
    const set = this.size > 0 ? computeThreads() : null;
    if (set === null) return null;
    if (set !== this.set) {
      this.set = set;
      this.workers = set.threads.slice(0, this.size).map(this.make);
      this.byThread.clear();
      for (const worker of this.workers) this.byThread.set(worker.thread, worker);
    }
    return this.workers;
  }

  /** The share last started (what a lost set's pool fails), without starting one. */
  get last(): readonly W[] {
    return this.workers;
  }

  /** The pool's entry for `thread`, if it is one of the share's. */
  of(thread: ComputeThread): W | undefined {
    return this.byThread.get(thread);
  }
}
