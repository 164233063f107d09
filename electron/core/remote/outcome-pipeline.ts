import { OrderedPipeline, pipelineLimits, type PipelineLimits } from '../jobs/ordered-pipeline.js';
import type { Entry, StoredRecord, WriteOptions, WriteOutcome } from '../target.js';

/** One file's result: the list it goes to (with the service's record of it), or its own failure. */
export type FileResult = { path: string; list: 'created' | 'updated' | 'ignored'; stored?: StoredRecord } | { path: string; error: string };

/**
 * A result that comes after its task has ended: the file is sent, and the service registers it
 * later together with others (Dataverse's addFiles). The task's place on the pipeline is free
 * at once; its result is reported in its place, once in. One that rejects is never reported
 * (whoever registers throws the error); whoever starts such a task settles `later` before
 * `finish`.
 */
export type Pending = { later: Promise<FileResult> };

/**
 * A remote write's files on the write pipeline (jobs/ordered-pipeline.ts), up to the target's
 * declared number at once (TargetInfo.concurrency, or the limits the write took since:
 * `limitTo`). Each result goes into the outcome in entry order, and a file the service has
 * (created, updated, or found there already) is then told to the job
 * (WriteOptions.onFileWritten: its resume journal) — never one whose result is not in.
 * A task returns a per-file failure as its result; what it throws stops the write.
 */
export class OutcomePipeline {
  private readonly pipeline: OrderedPipeline<FileResult | Pending>;
  /** the reports waiting behind a pending result; null when none waits */
  private tail: Promise<void> | null = null;

  constructor(
    declared: PipelineLimits | undefined,
    private readonly outcome: WriteOutcome,
    private readonly options: WriteOptions,
  ) {
    this.pipeline = new OrderedPipeline<FileResult | Pending>(pipelineLimits(declared), (result) => this.inOrder(result), options.signal);
  }

  /** True once a task has failed hard: take no more entries. */
  get stopped(): boolean {
    return this.pipeline.stopped;
  }

  /** A file whose result is known without a request (a refusal, a kept duplicate). */
  done(result: FileResult): void {
    this.pipeline.done(result);
  }

  /** Starts the write of `entry` once there is room (OrderedPipeline.startFile); `key`: its destination, never two at once. False: not started (a hard failure came first). */
  startFile(entry: Entry, key: string, task: () => Promise<FileResult | Pending>): Promise<boolean> {
    return this.pipeline.startFile(entry, key, task);
  }

  /** Work done early for files still to come (OrderedPipeline.startAhead): within the limits, no result, its failure not the write's. */
  startAhead(key: string, task: () => Promise<void>): Promise<boolean> {
    return this.pipeline.startAhead(key, task);
  }

  /**
   * `declared` from the next file on, for a write whose limits depend on what the destination
   * turns out to allow (Dataverse: DATAVERSE_IN_FLIGHT); one at a time still with the
   * `parallel-writes` fast path off.
   */
  limitTo(declared: PipelineLimits): void {
    this.pipeline.setLimits(pipelineLimits(declared));
  }

  /** Waits until no request is under way. */
  drain(): Promise<void> {
    return this.pipeline.drain();
  }

  /** Waits for every file, and every pending result to be reported; throws the first hard failure. */
  async finish(): Promise<void> {
    try {
      await this.pipeline.finish();
    } finally {
      await this.tail;
    }
  }

  /** Results in entry order: at once, or behind a pending one until it is in. */
  private inOrder(result: FileResult | Pending): void {
    if (this.tail === null && !('later' in result)) return this.reported(result);
    const tail: Promise<void> = (this.tail ?? Promise.resolve()).then(async () => {
      const known = 'later' in result ? await result.later.catch(() => null) : result;
      if (known) this.reported(known);
      if (this.tail === tail) this.tail = null;
    });
    this.tail = tail;
  }

  private reported(result: FileResult): void {
    if ('error' in result) return void this.outcome.fileErrors.push({ path: result.path, error: result.error });
    this.outcome[result.list].push(result.path);
    if (result.stored) (this.outcome.stored ??= new Map()).set(result.path, result.stored);
    this.options.onFileWritten?.(result.path);
  }
}
