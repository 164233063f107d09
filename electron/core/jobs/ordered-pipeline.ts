import { CancelledError } from '../errors.js';
import { fastPathOn } from '../fast-paths.js';
import type { Entry } from '../target.js';
import { withLookAhead } from './look-ahead.js';
import { opensIndependently, WHOLE_FILE_MAX_BYTES } from './whole-entry.js';

/**
 * The one write pipeline of every remote target (issue #18): work on up to `files` entries
 * at once, within `bytes` of their sizes, each entry's result reported in the order the
 * entries came. A write of thousands of small files to a server is otherwise one round trip
 * after another, and the server's latency, not the bytes, sets its pace. Invariants:
 * - results reach `report` in entry order, whatever order the work ends in, so an outcome
 *   reads exactly as a one-at-a-time write's would;
 * - two entries with the same key (one destination) never run at once: the second starts
 *   when the first has ended;
 * - a task that throws is a hard failure: nothing new starts, and `finish` throws it once
 *   everything already started has ended (never while a request is still under way).
 * - a cancelled `signal` is a hard failure too: `start` throws CancelledError at once (even
 *   while waiting for room), and `finish` throws it once what was started has ended;
 * - `report` is the one per-file completion hook: each result once, in entry order, and
 *   only after its task ended (a resume journal may record it as done).
 * Per-entry failures are the task's own result, not a throw.
 */
export interface PipelineLimits {
  /** entries worked on at once (1: one after another) */
  files: number;
  /** the sum of the sizes of the entries worked on at once; one larger entry still runs, alone */
  bytes: number;
}

/** One entry at a time: what every write runs with when the `parallel-writes` fast path is off. */
export const ONE_AT_A_TIME: PipelineLimits = { files: 1, bytes: 0 };

/** `declared` (a target's TargetInfo.concurrency), or one at a time with the fast path off. */
export function pipelineLimits(declared: PipelineLimits | undefined): PipelineLimits {
  return declared && fastPathOn('parallel-writes') ? declared : ONE_AT_A_TIME;
}

export class OrderedPipeline<R> {
  private readonly results: ({ result: R } | null)[] = [];
  private reported = 0;
  private readonly running = new Set<Promise<void>>();
  private readonly lastOfKey = new Map<string, Promise<void>>();
  private runningBytes = 0;
  private failure: { error: unknown } | null = null;
  /** settles when the signal fires, so a `start` waiting for room wakes at once */
  private wake: () => void = () => undefined;
  private readonly cancelled = new Promise<void>((resolve) => (this.wake = resolve));
  private readonly onAbort = () => {
    this.failure ??= { error: new CancelledError() };
    this.wake();
  };

  constructor(
    private limits: PipelineLimits,
    private readonly report: (result: R) => void,
    private readonly signal?: AbortSignal,
  ) {
    signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  /** True once a task has failed hard: take no more entries. */
  get stopped(): boolean {
    return this.failure !== null;
  }

  /** An entry whose result is known without any work (a folder, a refused path). */
  done(result: R): void {
    this.results.push({ result });
    this.flush();
  }

  /**
   * Limits from the next start on, for a write that learns what its destination allows only
   * once it is under way (Dataverse: whether the dataset's store takes direct uploads).
   */
  setLimits(limits: PipelineLimits): void {
    this.limits = limits;
  }

  /**
   * Starts `task` once there is room for it; returns when it has started (true: it will run,
   * after any earlier task of its key) or, after a hard failure, was not started (false).
   */
  async start(key: string, bytes: number, task: () => Promise<R>): Promise<boolean> {
    if (!(await this.room(bytes))) return false;
    const index = this.results.push(null) - 1;
    this.launch(key, bytes, async () => {
      this.results[index] = { result: await task() };
      this.flush();
    });
    return true;
  }

  /**
   * Starts `task`, work done early for an entry still to come (its folder made or listed
   * while the files before it are under way, so its own task finds it ready), as `start`
   * does: within the limits, after any earlier task of its key. It has no result and its
   * failure is not a hard failure: the entry it prepares meets the same failure at its own
   * turn, and is reported there, in entry order.
   */
  async startAhead(key: string, task: () => Promise<void>): Promise<boolean> {
    if (!(await this.room(0))) return false;
    this.launch(key, 0, () => task().catch(() => undefined));
    return true;
  }

  /**
   * `entries` as a writer feeds them to this pipeline, each first handed to `prepare` twice as
   * many entries ahead as the pipeline keeps in flight (about two round trips before its turn),
   * where `prepare` starts what the entry will need with startAhead. One at a time there is
   * nothing to overlap: `entries` as they are.
   */
  withPreparation<T>(entries: AsyncIterable<T>, prepare: (entry: T) => Promise<unknown>): AsyncIterable<T> {
    return this.limits.files > 1 ? withLookAhead(entries, 2 * this.limits.files, prepare) : entries;
  }

  /** Waits until a task of `bytes` may start; false after a hard failure (a cancel throws). */
  private async room(bytes: number): Promise<boolean> {
    if (this.signal?.aborted) this.onAbort();
    while (!this.failure && this.running.size > 0 && (this.running.size >= this.limits.files || this.runningBytes + bytes > this.limits.bytes)) {
      await Promise.race([...this.running, this.cancelled]);
    }
    if (this.failure) {
      if (this.failure.error instanceof CancelledError) throw this.failure.error;
      return false;
    }
    return true;
  }

  private launch(key: string, bytes: number, task: () => Promise<void>): void {
    const before = this.lastOfKey.get(key);
    this.runningBytes += bytes;
    const run: Promise<void> = (before ?? Promise.resolve())
      .then(task)
      .catch((error: unknown) => {
        this.failure ??= { error };
      })
      .finally(() => {
        this.runningBytes -= bytes;
        this.running.delete(run);
        if (this.lastOfKey.get(key) === run) this.lastOfKey.delete(key);
      });
    this.running.add(run);
    this.lastOfKey.set(key, run);
  }

  /**
   * Starts `task`, the write of the file `entry`, as `start` does; but alone (after what runs
   * has ended, and ending before the next starts) when its source may need this entry's stream
   * read to its end before the next entry opens: a size not known, or above the whole-file
   * size without Entry.opensIndependently (a ZIP read as a stream, a remote's download).
   */
  async startFile(entry: Entry, key: string, task: () => Promise<R>): Promise<boolean> {
    const alone = entry.size === null || (entry.size > WHOLE_FILE_MAX_BYTES && !opensIndependently(entry));
    if (alone) await this.drain();
    const started = await this.start(key, entry.size ?? 0, task);
    if (alone) await this.drain();
    return started;
  }

  /** Waits until nothing is running (a task that must not overlap the next entries). */
  async drain(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  /** Waits for everything started; throws the first hard failure. */
  async finish(): Promise<void> {
    await this.drain();
    this.signal?.removeEventListener('abort', this.onAbort);
    if (this.signal?.aborted) this.onAbort();
    if (this.failure) throw this.failure.error;
  }

  private flush(): void {
    while (this.reported < this.results.length && this.results[this.reported] !== null) {
      const { result } = this.results[this.reported]!;
      this.results[this.reported] = null;
      this.reported++;
      this.report(result);
    }
  }
}
