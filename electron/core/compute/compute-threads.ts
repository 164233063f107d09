import { Worker, type Transferable } from 'node:worker_threads';
import type { ComputeWorkerData, FromCompute, ToCompute } from './messages.js';
import { computeWorkerSource } from './worker-source.js';

// Ferry's one way of running work on other threads. Three pools use it — the file-write pool
// (jobs/file-write-workers.ts), the hash pool (hashing.ts) and the bag pool
// (bag/bag-workers.ts) — each with threads of its own: they are sized for different work
// (the file-write threads wait on the kernel, the others on the CPU), and a hash's or a bag's
// slot would otherwise queue behind a batch of file creations. What they share is here: the
// one script every thread runs (compute-worker.ts), the one message type (messages.ts), when a
// thread keeps the process alive, and what happens when a thread is lost.

/** What a pool's threads were doing or were asked when their set was lost fails with this. */
export class ComputeThreadLost extends Error {}

/** One compute thread of a set. */
export interface ComputeThread {
  post(message: ToCompute, transfer?: readonly Transferable[]): void;
  /** Work is outstanding on it: it keeps the process alive until as many letGo calls. */
  hold(): void;
  letGo(): void;
  /** holds not yet let go */
  readonly busy: number;
}

export interface ComputeThreadsOptions<Reply extends FromCompute> {
  /** the threads' name (seen in a debugger, and in /proc as the process's) */
  name: string;
  size: number;
  /** what each thread is started with, asked when the set starts */
  workerData?: () => ComputeWorkerData;
  onMessage(thread: ComputeThread, message: Reply): void;
  /** called once, when the set is lost: fail what waits on it */
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
 * One pool's set of compute threads, started together at their first use.
 *
 * The failure policy, the same for every pool: a thread that fails (an error thrown there, an
 * exit) or cannot start loses the whole set. `lost` then says why, every thread is terminated,
 * `onLost` is called once, and the set is never used again: the pool fails what was waiting
 * with a ComputeThreadLost, and works on its calling thread from then on or makes a new set
 * (each pool says which it does).
 */
export class ComputeThreads<Reply extends FromCompute> {
  private threads: Thread[] | null = null;
  lost: ComputeThreadLost | null = null;

  constructor(private readonly options: ComputeThreadsOptions<Reply>) {}

  get size(): number {
    return this.options.size;
  }

  /** Threads there are, or will be at the first `start`. */
  get available(): boolean {
    return this.lost === null && this.options.size > 0;
  }

  /** The set's threads, started at the first call; null when there are none (lost, or size 0). */
  start(): readonly ComputeThread[] | null {
    if (!this.available) return null;
    if (this.threads) return this.threads;
    const started: Thread[] = [];
    try {
      const source = computeWorkerSource();
      const workerData = this.options.workerData?.();
      for (let i = 0; i < this.options.size; i++) started.push(this.spawn(source, workerData));
    } catch (error) {
      this.threads = started;
      this.lose(new ComputeThreadLost(`the ${this.options.name} threads could not start: ${(error as Error).message}`));
      return null;
    }
    this.threads = started;
    return started;
  }

  private spawn(source: string, workerData: ComputeWorkerData | undefined): Thread {
    const worker = new Worker(source, { eval: true, name: this.options.name, workerData });
    const thread = new Thread(worker);
    worker.on('message', (message: Reply) => {
      if (this.lost === null) this.options.onMessage(thread, message);
    });
    worker.on('error', (error) => this.lose(new ComputeThreadLost(`a ${this.options.name} thread failed: ${error.message}`)));
    worker.on('exit', (code) => this.lose(new ComputeThreadLost(`a ${this.options.name} thread stopped (exit code ${code})`)));
    // unref'd once its listeners are on: adding a 'message' listener refs the worker's port
    // again (a set never asked anything then kept a process that had finished from exiting)
    worker.unref();
    return thread;
  }

  private lose(error: ComputeThreadLost): void {
    if (this.lost) return;
    this.lost = error;
    for (const thread of this.threads ?? []) void thread.worker.terminate();
    this.options.onLost(error);
  }
}
