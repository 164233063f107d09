import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { FINISHED_JOB_STATUSES, type Job, type JobKind, type JobProgress, type JobReport, type JobStatus, type QueueMove, type QueueSettings, type QueueState } from '../../../shared/api.js';
import { CancelledError, conflict, FerryError, isFerryError, notFound, notSupported } from '../errors.js';
import { withRetryNotices } from '../remote/retry-notice.js';
import { formatDate } from '../time.js';
import { TEMP_SUFFIX, writeFileAtomic } from './atomic-file.js';
import { Bandwidth } from './bandwidth.js';
import { endingOf, StoppedWithReport } from './outcome.js';
import { journalFileOf, ResumeJournal } from './resume-journal.js';
import type { QueueIdleListener } from '../idle-collection.js';
import { emptyReport, type JobExecutionContext, type JobExecutor, type JobService, type RetryParams, type SubmitJob } from './types.js';

export interface JobServiceOptions {
  /** where `<ticket>.json` files live */
  dir: string;
  /** jobs running at once */
  concurrency: number;
  /** finished jobs (and their owned files) are removed after this long */
  retentionMs: number;
  /** Ferry's access key: it may see and cancel every job */
  accessKey: string;
  now?: () => Date;
  /** how often progress is persisted and published at most (default 250 ms) */
  progressIntervalMs?: number;
  /** how often finished jobs are pruned (default: an hour, or the retention if shorter) */
  pruneIntervalMs?: number;
  /** how long close() waits for aborted executors to return (default 10 s) */
  closeTimeoutMs?: number;
  /** told when the last running job ends with none to start, and when a job starts (idle-collection.ts) */
  queueListener?: QueueIdleListener | null;
}

/** What `<ticket>.json` holds. Tokens appear only as sha256 digests. */
export interface StoredJob {
  format: 1;
  job: Job;
  params: Record<string, unknown>;
  ownedFiles: string[];
  tokenSha256: string[];
  /** a paused job's: what its runs so far changed */
  partialReport?: JobReport | null;
}

/**
 * The abort reasons after which a job runs again later: Ferry stopping (close()) or the
 * user pausing it. Executors that clean up after themselves (a spooled upload, a multipart
 * upload) check `isShutdownAbort(signal)` and keep what the resumed run needs.
 */
export abstract class ResumableStop extends Error {}

export class JobServiceClosing extends ResumableStop {
  constructor() {
    super('Ferry is stopping; the job will resume when it starts again.');
    this.name = 'JobServiceClosing';
  }
}

export class JobPaused extends ResumableStop {
  constructor() {
    super('The job was paused; it continues from where it stopped when resumed.');
    this.name = 'JobPaused';
  }
}

/** True when the job stopped to run again later (Ferry stopping, or paused): keep what a resumed run needs. */
export function isShutdownAbort(signal: AbortSignal): boolean {
  return signal.aborted && signal.reason instanceof ResumableStop;
}

const FINISHED: ReadonlySet<JobStatus> = new Set(FINISHED_JOB_STATUSES);
const QUEUE_FILE = 'queue.json';
/** the most jobs that may run at once, whatever the settings say: each holds sockets, files and memory */
export const MAX_CONCURRENCY = 16;
const TICKET_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const UNEXPECTED_ERROR = 'The job stopped because of an unexpected error inside Ferry; the details are in Ferry\'s log.';

interface JobRecord {
  job: Job;
  params: Record<string, unknown>;
  ownedFiles: string[];
  tokenSha256: string[];
  /** in memory only; empty for a job loaded from disk */
  tokens: Record<string, string>;
  resumed: boolean;
  controller: AbortController | null;
  /** settles when the running executor has returned and the outcome is recorded */
  settled: Promise<void> | null;
  cancelRequested: boolean;
  pauseRequested: boolean;
  /** what the runs before a pause changed (persisted): a cancel of the paused job reports it */
  partialReport: JobReport | null;
  // progress throttling
  lastFlush: number;
  flushTimer: NodeJS.Timeout | null;
  // persistence: writes for one job run one after another, coalescing bursts
  dirty: boolean;
  writing: Promise<void> | null;
  removed: boolean;
  /** the final state being written: shown only once it is on disk (see settle) */
  staged: Job | null;
}

export function createJobService(options: JobServiceOptions): JobService {
  return new FileJobService(options);
}

class FileJobService implements JobService {
  private readonly executors = new Map<JobKind, JobExecutor>();
  private readonly retries = new Map<JobKind, RetryParams>();
  private readonly resumable = new Set<JobKind>();
  private readonly records = new Map<string, JobRecord>();
  private readonly queue: string[] = [];
  private readonly listeners = new Set<(job: Job) => void>();
  private readonly now: () => Date;
  private settings: QueueSettings;
  /** the one limit on the bytes every running job reads together (settings.bandwidth_limit) */
  readonly bandwidth = new Bandwidth();
  private readonly runningRecords = new Set<JobRecord>();
  private readonly progressIntervalMs: number;
  private readonly accessKeyDigest: Buffer;
  private dirReady: Promise<void> | null = null;
  private pruneTimer: NodeJS.Timeout | null = null;
  private pruning: Promise<void> | null = null;
  private closing = false;
  private closed = false;

  constructor(private readonly options: JobServiceOptions) {
    this.now = options.now ?? (() => new Date());
    this.settings = { concurrency: Math.min(MAX_CONCURRENCY, Math.max(1, Math.floor(options.concurrency))), per_target: {}, bandwidth_limit: null };
    this.progressIntervalMs = options.progressIntervalMs ?? 250;
    this.accessKeyDigest = sha256(options.accessKey);
  }

  register(kind: JobKind, executor: JobExecutor, retry?: RetryParams, resumable = false): void {
    this.executors.set(kind, executor);
    if (retry) this.retries.set(kind, retry);
    if (resumable) this.resumable.add(kind);
  }

  async start(): Promise<void> {
    await this.ensureDir();
    await this.loadQueueSettings();
    const loaded = await this.loadAll();
    for (const record of loaded) this.records.set(record.job.ticket_number, record);

    // Jobs interrupted by a stop or a crash: resume them in the order they were submitted.
    const interrupted = loaded
      .filter((record) => record.job.status === 'running' || record.job.status === 'queued')
      .sort((a, b) => a.job.created.localeCompare(b.job.created));
    for (const record of interrupted) {
      const wasRunning = record.job.status === 'running';
      if (this.executors.has(record.job.kind)) {
        record.resumed = wasRunning;
        record.job.status = 'queued';
        this.queue.push(record.job.ticket_number);
      } else {
        const when = wasRunning ? 'was running' : 'was waiting to run';
        // a job that was running may have written files; what they are is not known (report stays null)
        const written = wasRunning ? ' Files it wrote before Ferry stopped may be in the destination.' : '';
        await this.settle(record, 'failed', {
          ...(wasRunning ? {} : { report: emptyReport() }),
          error: `Ferry stopped while this job ${when} and it could not be resumed: this version of Ferry cannot run ${record.job.kind} jobs.${written}`,
        });
      }
    }
    // A crash between saving a job's end and removing its files leaves them behind: not
    // needed any more, whatever the retention.
    for (const record of loaded) if (FINISHED.has(record.job.status)) await removeOwnedFiles(record);
    await this.prune();
    const interval = this.options.pruneIntervalMs ?? Math.min(3_600_000, Math.max(1000, this.options.retentionMs));
    this.pruneTimer = setInterval(() => void this.prune(), interval);
    this.pruneTimer.unref();
    this.pump();
  }

  async submit(request: SubmitJob): Promise<Job> {
    if (this.closing) throw new Error('the job service is closed');
    if (!this.executors.has(request.kind)) throw new Error(`no executor registered for ${request.kind} jobs`);
    await this.ensureDir();
    const job: Job = {
      ticket_number: randomUUID(),
      kind: request.kind,
      status: 'queued',
      target: request.target,
      resource_id: request.resource_id,
      created: formatDate(this.now()),
      started: null,
      finished: null,
      progress: { files_done: 0, files_total: null, bytes_done: 0, bytes_total: null },
      report: null,
      error: null,
      source: request.source ?? null,
      retry_of: request.retryOf ?? null,
    };
    if (request.resumeOf) {
      // the earlier job's journal, before the ticket is handed out: its files are not sent again
      const journal = journalFileOf(this.options.dir, job.ticket_number);
      await ResumeJournal.copy(journalFileOf(this.options.dir, request.resumeOf), journal);
      job.resumed = { files_already_done: (await ResumeJournal.open(journal)).filesDone, from: request.resumeOf };
    }
    const tokens = { ...request.tokens };
    const record = newRecord(job, {
      params: request.params,
      ownedFiles: request.ownedFiles ?? [],
      tokenSha256: Object.values(tokens).map((token) => sha256(token).toString('hex')),
    });
    record.tokens = tokens;
    this.records.set(job.ticket_number, record);
    // Persist before acknowledging: a ticket handed out survives a crash right after.
    await this.persist(record);
    this.publish(record);
    const acknowledged = clone(record.job);
    this.queue.push(job.ticket_number);
    this.pump();
    return acknowledged;
  }

  get(ticket: string): Job | undefined {
    const record = this.records.get(ticket);
    return record ? clone(record.job) : undefined;
  }

  list(): Job[] {
    return [...this.records.values()]
      .map((record) => clone(record.job))
      .sort((a, b) => b.created.localeCompare(a.created));
  }

  mayAccess(ticket: string, token: string): boolean {
    if (typeof token !== 'string' || token === '') return false;
    const digest = sha256(token);
    // Compare against every candidate without stopping early, so timing says nothing
    // about which (if any) matched.
    let allowed = timingSafeEqual(digest, this.accessKeyDigest);
    const record = this.records.get(ticket);
    for (const stored of record?.tokenSha256 ?? []) {
      const candidate = Buffer.from(stored, 'hex');
      if (candidate.length === digest.length && timingSafeEqual(digest, candidate)) allowed = true;
    }
    return allowed && record !== undefined;
  }

  async cancel(ticket: string): Promise<Job> {
    const record = this.records.get(ticket);
    if (!record) throw ticketNotFound(ticket);
    if (FINISHED.has(record.job.status)) throw conflict('The job has already finished.');
    if (record.job.status === 'queued') {
      const index = this.queue.indexOf(ticket);
      if (index >= 0) this.queue.splice(index, 1);
      await this.settle(record, 'cancelled', { report: emptyReport(), error: null });
      return clone(record.job);
    }
    if (record.job.status === 'paused') {
      // what the runs before the pause changed stays in the report: cancelled, not undone
      await this.settle(record, 'cancelled', { report: record.partialReport ?? emptyReport(), error: null });
      return clone(record.job);
    }
    record.cancelRequested = true;
    record.controller?.abort(new CancelledError());
    // Give the executor a moment to unwind so the answer usually says "cancelled"; an
    // executor deaf to its signal still ends cancelled when it returns.
    await Promise.race([record.settled, delay(10_000)]);
    return clone(record.job);
  }

  async pause(ticket: string): Promise<Job> {
    const record = this.records.get(ticket);
    if (!record) throw ticketNotFound(ticket);
    if (FINISHED.has(record.job.status)) throw conflict('The job has already finished.');
    if (record.job.status === 'paused') return clone(record.job);
    if (record.job.status === 'queued') {
      this.removeFromQueue(ticket);
      record.job.status = 'paused';
      await this.persist(record);
      this.publish(record);
      return clone(record.job);
    }
    record.pauseRequested = true;
    record.controller?.abort(new JobPaused());
    await Promise.race([record.settled, delay(10_000)]);
    return clone(record.job);
  }

  async resume(ticket: string): Promise<Job> {
    const record = this.records.get(ticket);
    if (!record) throw ticketNotFound(ticket);
    if (record.job.status !== 'paused') {
      if (FINISHED.has(record.job.status)) throw conflict('The job has already finished; resume it as a new job (resumeFinished) or retry its failed files.');
      return clone(record.job); // waiting or running already
    }
    if (!this.executors.has(record.job.kind)) throw notSupported(`This version of Ferry cannot run ${record.job.kind} jobs.`);
    record.job.status = 'queued';
    // a resumed job goes first: the user asked for it by name
    this.queue.unshift(ticket);
    await this.persist(record);
    this.publish(record);
    this.pump();
    return clone(record.job);
  }

  async move(ticket: string, to: QueueMove): Promise<QueueState> {
    const record = this.records.get(ticket);
    if (!record) throw ticketNotFound(ticket);
    const waiting = this.waiting();
    const index = waiting.indexOf(ticket);
    if (index < 0) throw conflict('Only a job waiting to run can be moved in the queue; this one is not waiting.');
    waiting.splice(index, 1);
    const position = to === 'first' ? 0 : to === 'last' ? waiting.length : to === 'up' ? Math.max(0, index - 1) : Math.min(waiting.length, index + 1);
    waiting.splice(position, 0, ticket);
    this.queue.splice(0, this.queue.length, ...waiting);
    return this.queueState();
  }

  queueState(): QueueState {
    return { settings: structuredClone(this.settings), waiting: this.waiting() };
  }

  async configureQueue(update: Partial<QueueSettings>): Promise<QueueState> {
    const next: QueueSettings = {
      concurrency: update.concurrency === undefined ? this.settings.concurrency : clampConcurrency(update.concurrency),
      per_target: update.per_target === undefined ? this.settings.per_target : perTargetLimits(update.per_target),
      bandwidth_limit: update.bandwidth_limit === undefined ? this.settings.bandwidth_limit : bandwidthLimit(update.bandwidth_limit),
    };
    await this.ensureDir();
    await writeFileAtomic(path.join(this.options.dir, QUEUE_FILE), `${JSON.stringify(next, null, 2)}\n`);
    this.applySettings(next);
    this.pump();
    return this.queueState();
  }

  async clearFinished(): Promise<number> {
    const finished = [...this.records.values()].filter((record) => FINISHED.has(record.job.status));
    for (const record of finished) await this.remove(record);
    return finished.length;
  }

  async retry(ticket: string, tokens: Record<string, string>): Promise<Job> {
    const record = this.records.get(ticket);
    if (!record) throw ticketNotFound(ticket);
    const job = record.job;
    if (!FINISHED.has(job.status)) throw conflict('The job has not finished yet; retry its failed files once it has.');
    const failedPaths = [...new Set((job.report?.failed_files ?? []).map((file) => file.path))];
    if (failedPaths.length === 0) {
      throw new FerryError(409, 'retry_nothing', 'This job has no failed files to retry; start it again instead.');
    }
    const narrow = this.retries.get(job.kind);
    if (!narrow) throw notSupported(`A ${job.kind} job cannot be retried file by file; start it again instead.`);
    return this.submit({
      kind: job.kind,
      target: job.target,
      resource_id: job.resource_id,
      source: job.source ?? null,
      params: narrow(job, record.params, failedPaths),
      tokens,
      retryOf: job.ticket_number,
    });
  }

  async resumeFinished(ticket: string, tokens: Record<string, string>): Promise<Job> {
    const record = this.records.get(ticket);
    if (!record) throw ticketNotFound(ticket);
    const job = record.job;
    if (!FINISHED.has(job.status)) throw conflict('The job has not finished yet; it goes on by itself, or cancel it first.');
    if (job.status === 'succeeded') throw conflict('This job succeeded; there is nothing left to resume.');
    if (!this.resumable.has(job.kind)) throw notSupported(`A ${job.kind} job cannot be resumed; start it again instead.`);
    return this.submit({
      kind: job.kind,
      target: job.target,
      resource_id: job.resource_id,
      source: job.source ?? null,
      params: record.params,
      tokens,
      resumeOf: job.ticket_number,
    });
  }

  ownedFiles(): Set<string> {
    const owned = new Set<string>();
    for (const record of this.records.values()) for (const file of record.ownedFiles) owned.add(path.resolve(file));
    return owned;
  }

  subscribe(listener: (job: Job) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    if (this.pruneTimer) clearInterval(this.pruneTimer);
    this.pruneTimer = null;
    const running = [...this.records.values()].filter((record) => record.controller);
    for (const record of running) record.controller?.abort(new JobServiceClosing());
    const timeout = this.options.closeTimeoutMs ?? 10_000;
    await Promise.race([Promise.allSettled(running.map((record) => record.settled)), delay(timeout)]);
    await this.pruning;
    for (const record of this.records.values()) {
      if (record.flushTimer) clearTimeout(record.flushTimer);
      record.flushTimer = null;
    }
    await Promise.allSettled([...this.records.values()].map((record) => record.writing));
    this.closed = true;
    this.listeners.clear();
  }

  // ---- running -------------------------------------------------------------------

  /**
   * Starts waiting jobs in queue order while there is room: fewer than `concurrency` running,
   * and each target the job touches under its own limit. A job held back by its target's
   * limit keeps its place; a later job for other targets may start before it.
   */
  private pump(): void {
    if (this.closing) return;
    for (let index = 0; index < this.queue.length && this.runningRecords.size < this.settings.concurrency; ) {
      const record = this.records.get(this.queue[index]!);
      if (!record || record.job.status !== 'queued') {
        this.queue.splice(index, 1);
        continue;
      }
      if (!this.hasRoomFor(record.job)) {
        index += 1;
        continue;
      }
      this.queue.splice(index, 1);
      this.runningRecords.add(record);
      this.options.queueListener?.busy();
      record.settled = this.run(record).finally(() => {
        this.runningRecords.delete(record);
        this.pump();
        if (this.runningRecords.size === 0) this.options.queueListener?.idle();
      });
    }
  }

  private hasRoomFor(job: Job): boolean {
    for (const target of targetsOf(job)) {
      const limit = this.settings.per_target[target];
      if (limit === undefined) continue;
      let busy = 0;
      for (const running of this.runningRecords) if (targetsOf(running.job).includes(target)) busy += 1;
      if (busy >= limit) return false;
    }
    return true;
  }

  private waiting(): string[] {
    return this.queue.filter((ticket) => this.records.get(ticket)?.job.status === 'queued');
  }

  private removeFromQueue(ticket: string): void {
    const index = this.queue.indexOf(ticket);
    if (index >= 0) this.queue.splice(index, 1);
  }

  private applySettings(settings: QueueSettings): void {
    this.settings = settings;
    this.bandwidth.limit = settings.bandwidth_limit;
  }

  private async loadQueueSettings(): Promise<void> {
    let stored: Partial<QueueSettings>;
    try {
      stored = JSON.parse(await readFile(path.join(this.options.dir, QUEUE_FILE), 'utf8')) as Partial<QueueSettings>;
    } catch {
      return; // none saved yet (or unreadable): the defaults stand
    }
    try {
      this.applySettings({
        concurrency: stored.concurrency === undefined ? this.settings.concurrency : clampConcurrency(stored.concurrency),
        per_target: stored.per_target === undefined ? {} : perTargetLimits(stored.per_target),
        bandwidth_limit: stored.bandwidth_limit === undefined ? null : bandwidthLimit(stored.bandwidth_limit),
      });
    } catch (error) {
      console.error('ferry: ignoring unreadable queue settings:', error instanceof Error ? error.message : String(error));
    }
  }

  private async run(record: JobRecord): Promise<void> {
    const executor = this.executors.get(record.job.kind)!;
    const journal = await ResumeJournal.open(this.journalOf(record));
    // cancelled while its journal was read, or Ferry is stopping: the saved state stands
    if (record.job.status !== 'queued' || this.closing) return;
    if (journal.hasEarlierRun) {
      record.job.resumed = { files_already_done: journal.filesDone, from: record.job.resumed?.from ?? null };
    }
    const controller = new AbortController();
    record.controller = controller;
    record.job.status = 'running';
    record.job.started ??= formatDate(this.now());
    record.job.error = null;
    void this.persist(record);
    this.publish(record);

    const context: JobExecutionContext = {
      job: record.job,
      params: record.params,
      tokens: { ...record.tokens },
      signal: controller.signal,
      progress: (update) => this.progress(record, update),
      resumed: record.resumed,
      bandwidth: this.bandwidth,
      journal,
    };
    let outcome: { report: JobReport } | { error: unknown };
    try {
      // `await` inside try so a synchronous throw and a rejection land in the same place.
      // a request waiting to be retried says so in the job's progress: the client finds this
      // listener through the job's signal, which every request of the job carries (remote/retry-notice.ts)
      outcome = { report: await withRetryNotices(controller.signal, (note) => this.progress(record, { note }), () => executor(context)) };
    } catch (error) {
      outcome = { error };
    }
    // what the executor recorded is on disk before its end is
    await journal.close();
    record.controller = null;
    delete record.job.progress.note; // a finished job waits for nothing
    if (record.flushTimer) clearTimeout(record.flushTimer);
    record.flushTimer = null;

    if (this.closed) return; // the service is gone; the file still says running
    const shutdown = controller.signal.reason instanceof JobServiceClosing;
    const paused = controller.signal.reason instanceof JobPaused && !record.cancelRequested;
    if ('report' in outcome) {
      if (record.cancelRequested) {
        await this.settle(record, 'cancelled', { report: outcome.report, error: null });
      } else {
        // succeeded only when every file arrived and checked (outcome.ts decides)
        const ending = endingOf(outcome.report);
        await this.settle(record, ending.status, { report: outcome.report, error: ending.error });
      }
      return;
    }
    // An executor that changed something before it stopped says what (StoppedWithReport);
    // any other throw means it stopped before changing anything.
    const stopped = outcome.error instanceof StoppedWithReport ? outcome.error : null;
    const cause = stopped ? stopped.cause : outcome.error;
    const report = stopped ? stopped.report : emptyReport();
    if (shutdown && !record.cancelRequested) {
      // Stopping, not failing: keep `running` on disk so the next start resumes it.
      await this.persist(record);
    } else if (paused) {
      // Held, not failed: the next run continues from here (a resumed run), and what this
      // one changed is kept for the report of a cancel.
      record.pauseRequested = false;
      record.resumed = true;
      record.partialReport = report;
      record.job.status = 'paused';
      await this.persist(record);
      this.publish(record);
    } else if (record.cancelRequested || cause instanceof CancelledError) {
      await this.settle(record, 'cancelled', { report, error: null });
    } else {
      await this.settle(record, 'failed', { report, error: this.describeFailure(record, cause) });
    }
  }

  private describeFailure(record: JobRecord, error: unknown): string {
    if (isFerryError(error)) return error.message;
    const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
    // The log may be read by others: never let a token the job holds reach it.
    const secrets = [...Object.values(record.tokens), this.options.accessKey];
    console.error(`ferry: ${record.job.kind} job ${record.job.ticket_number} failed: ${redact(detail, secrets)}`);
    return UNEXPECTED_ERROR;
  }

  /**
   * Ends a job in this order: the final state on disk, then the job's owned files removed,
   * then the end shown (get, list, events). A crash at any point leaves a state the next
   * start handles: still `running` with its spool (resumed), or ended with a spool that
   * start() removes. Nobody is told "succeeded" before the disk says so.
   */
  private async settle(record: JobRecord, status: JobStatus, fields: { report?: JobReport; error: string | null }): Promise<void> {
    const final: Job = { ...clone(record.job), status, finished: formatDate(this.now()), error: fields.error };
    if (fields.report) final.report = fields.report;
    record.resumed = false;
    record.tokens = {};
    record.staged = final;
    try {
      await this.persist(record);
      await removeOwnedFiles(record);
      // a job that ended goes on from no partial file (a cancel of a paused job included)
      await ResumeJournal.removeKeptPartials(this.journalOf(record)).catch(() => undefined);
      // a job that may be resumed keeps its journal until it is pruned
      if (status === 'succeeded') await ResumeJournal.remove(this.journalOf(record));
    } finally {
      record.job = final;
      record.staged = null;
    }
    this.publish(record);
  }

  // ---- progress --------------------------------------------------------------------

  private progress(record: JobRecord, update: Partial<JobProgress>): void {
    if (record.job.status !== 'running' || record.controller === null) return;
    const merged: JobProgress = { ...record.job.progress };
    for (const key of ['files_done', 'files_total', 'bytes_done', 'bytes_total'] as const) {
      const value = update[key];
      if (value !== undefined) (merged as unknown as Record<string, number | null>)[key] = value;
    }
    if (update.note !== undefined) merged.note = update.note;
    record.job.progress = merged;
    const since = Date.now() - record.lastFlush;
    if (since >= this.progressIntervalMs) {
      this.flushProgress(record);
    } else if (!record.flushTimer) {
      record.flushTimer = setTimeout(() => this.flushProgress(record), this.progressIntervalMs - since);
      record.flushTimer.unref();
    }
  }

  private flushProgress(record: JobRecord): void {
    if (record.flushTimer) clearTimeout(record.flushTimer);
    record.flushTimer = null;
    if (this.closed || record.job.status !== 'running') return;
    record.lastFlush = Date.now();
    void this.persist(record);
    this.publish(record);
  }

  private publish(record: JobRecord): void {
    if (this.closed) return;
    for (const listener of this.listeners) {
      try {
        listener(clone(record.job));
      } catch (error) {
        console.error('ferry: a job listener threw:', error instanceof Error ? error.message : String(error));
      }
    }
  }

  // ---- persistence ---------------------------------------------------------------------

  private ensureDir(): Promise<void> {
    this.dirReady ??= mkdir(this.options.dir, { recursive: true, mode: 0o700 }).then(() => undefined);
    return this.dirReady;
  }

  private fileOf(ticket: string): string {
    return path.join(this.options.dir, `${ticket}.json`);
  }

  private journalOf(record: JobRecord): string {
    return journalFileOf(this.options.dir, record.job.ticket_number);
  }

  /** Resolves once the record's latest state is on disk. */
  private persist(record: JobRecord): Promise<void> {
    if (record.removed) return Promise.resolve();
    record.dirty = true;
    record.writing ??= this.drain(record);
    return record.writing;
  }

  private async drain(record: JobRecord): Promise<void> {
    try {
      while (record.dirty && !record.removed) {
        record.dirty = false;
        const stored: StoredJob = {
          format: 1,
          job: record.staged ?? record.job,
          params: record.params,
          ownedFiles: record.ownedFiles,
          tokenSha256: record.tokenSha256,
          ...(record.partialReport ? { partialReport: record.partialReport } : {}),
        };
        try {
          await writeFileAtomic(this.fileOf(record.job.ticket_number), `${JSON.stringify(stored, null, 2)}\n`);
        } catch (error) {
          console.error(`ferry: could not save job ${record.job.ticket_number}:`, error instanceof Error ? error.message : String(error));
        }
      }
    } finally {
      // In the same synchronous step as the loop's last check, so no persist() is lost.
      record.writing = null;
    }
  }

  private async loadAll(): Promise<JobRecord[]> {
    const names = await readdir(this.options.dir);
    const records: JobRecord[] = [];
    for (const name of names) {
      if (name.endsWith(TEMP_SUFFIX)) {
        // Left by a write that never finished; the json it was replacing is intact.
        await rm(path.join(this.options.dir, name), { force: true });
        continue;
      }
      const ticket = name.slice(0, -'.json'.length);
      if (!name.endsWith('.json') || !TICKET_PATTERN.test(ticket)) continue;
      try {
        const stored = JSON.parse(await readFile(path.join(this.options.dir, name), 'utf8')) as StoredJob;
        if (stored.format !== 1 || stored.job?.ticket_number !== ticket) throw new Error('unexpected content');
        records.push(
          newRecord(stored.job, {
            params: stored.params ?? {},
            ownedFiles: Array.isArray(stored.ownedFiles) ? stored.ownedFiles : [],
            tokenSha256: Array.isArray(stored.tokenSha256) ? stored.tokenSha256 : [],
            partialReport: stored.partialReport ?? null,
          }),
        );
      } catch (error) {
        console.error(`ferry: ignoring unreadable job file ${name}:`, error instanceof Error ? error.message : String(error));
      }
    }
    return records;
  }

  private prune(): Promise<void> {
    this.pruning ??= this.pruneOnce().finally(() => {
      this.pruning = null;
    });
    return this.pruning;
  }

  private async pruneOnce(): Promise<void> {
    const cutoff = this.now().getTime() - this.options.retentionMs;
    for (const record of [...this.records.values()]) {
      if (!FINISHED.has(record.job.status) || !record.job.finished) continue;
      if (Date.parse(record.job.finished) >= cutoff) continue;
      await this.remove(record);
    }
  }

  private async remove(record: JobRecord): Promise<void> {
    record.removed = true;
    await record.writing;
    await removeOwnedFiles(record);
    await ResumeJournal.remove(this.journalOf(record)).catch(() => undefined);
    await rm(this.fileOf(record.job.ticket_number), { force: true }).catch(() => undefined);
    this.records.delete(record.job.ticket_number);
  }
}

function newRecord(job: Job, stored: { params: Record<string, unknown>; ownedFiles: string[]; tokenSha256: string[]; partialReport?: JobReport | null }): JobRecord {
  return {
    job,
    params: stored.params,
    ownedFiles: stored.ownedFiles,
    tokenSha256: stored.tokenSha256,
    tokens: {},
    resumed: false,
    controller: null,
    settled: null,
    cancelRequested: false,
    pauseRequested: false,
    partialReport: stored.partialReport ?? null,
    lastFlush: 0,
    flushTimer: null,
    dirty: false,
    writing: null,
    removed: false,
    staged: null,
  };
}

/**
 * A job's inputs (a spooled upload) matter only while it may still run; a job that never
 * will (cancelled while waiting, or unrunnable after a restart) lets them go at once
 * rather than at pruning time.
 */
async function removeOwnedFiles(record: JobRecord): Promise<void> {
  for (const file of record.ownedFiles) await rm(file, { force: true, recursive: true }).catch(() => undefined);
}

/** the targets a job reads or writes: what per-target limits count */
function targetsOf(job: Job): string[] {
  return job.source && job.source.target !== job.target ? [job.target, job.source.target] : [job.target];
}

function clampConcurrency(value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_CONCURRENCY) {
    throw new FerryError(400, 'bad_request', `The number of jobs running at once must be a whole number from 1 to ${MAX_CONCURRENCY}.`);
  }
  return value;
}

function perTargetLimits(value: unknown): Record<string, number> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new FerryError(400, 'bad_request', 'per_target must be an object of target ids and numbers of jobs.');
  }
  const limits: Record<string, number> = {};
  for (const [target, limit] of Object.entries(value)) limits[target] = clampConcurrency(limit);
  return limits;
}

function bandwidthLimit(value: unknown): number | null {
  if (value === null) return null;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1024) {
    throw new FerryError(400, 'bad_request', 'The bandwidth limit is a whole number of bytes a second, at least 1024 (1 KiB/s), or null for no limit.');
  }
  return value;
}

function ticketNotFound(ticket: string) {
  const shown = TICKET_PATTERN.test(ticket) ? ` '${ticket}'` : '';
  return notFound(`There is no job with ticket${shown}; finished jobs are removed after a while.`, 'ticket_not_found');
}

function sha256(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

function redact(text: string, secrets: string[]): string {
  let result = text;
  for (const token of secrets) {
    if (token.length >= 4) result = result.split(token).join('[token]');
  }
  return result;
}

function clone(job: Job): Job {
  return structuredClone(job);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
