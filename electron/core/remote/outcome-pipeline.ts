import { OrderedPipeline, pipelineLimits, type PipelineLimits } from '../jobs/ordered-pipeline.js';
import type { Entry, StoredRecord, WriteOptions, WriteOutcome } from '../target.js';

/** One file's result: the list it goes to (with the service's record of it), or its own failure. */
export type FileResult = { path: string; list: 'created' | 'updated' | 'ignored'; stored?: StoredRecord } | { path: string; error: string };

/**
 * A remote write's files on the write pipeline (jobs/ordered-pipeline.ts), up to the target's
 * declared number at once (TargetInfo.concurrency). Each result goes into the outcome in entry
 * order, and a file the service has (created, updated, or found there already) is then told to
 * the job (WriteOptions.onFileWritten: its resume journal) — never one whose result is not in.
 * A task returns a per-file failure as its result; what it throws stops the write.
 */
export class OutcomePipeline {
  private readonly pipeline: OrderedPipeline<FileResult>;

  constructor(
    declared: PipelineLimits | undefined,
    private readonly outcome: WriteOutcome,
    private readonly options: WriteOptions,
  ) {
    this.pipeline = new OrderedPipeline<FileResult>(pipelineLimits(declared), (result) => this.reported(result), options.signal);
  }

  /** True once a task has failed hard: take no more entries. */
  get stopped(): boolean {
    return this.pipeline.stopped;
  }

  /** A file whose result is known without a request (a refusal, a kept duplicate). */
  done(result: FileResult): void {
    this.pipeline.done(result);
  }

  /** Starts the write of `entry` once there is room (OrderedPipeline.startFile); `key`: its destination, never two at once. */
  startFile(entry: Entry, key: string, task: () => Promise<FileResult>): Promise<void> {
    return this.pipeline.startFile(entry, key, task);
  }

  /** Waits until no request is under way. */
  drain(): Promise<void> {
    return this.pipeline.drain();
  }

  /** Waits for every file; throws the first hard failure. */
  finish(): Promise<void> {
    return this.pipeline.finish();
  }

  private reported(result: FileResult): void {
    if ('error' in result) return void this.outcome.fileErrors.push({ path: result.path, error: result.error });
    this.outcome[result.list].push(result.path);
    if (result.stored) (this.outcome.stored ??= new Map()).set(result.path, result.stored);
    this.options.onFileWritten?.(result.path);
  }
}
