import type { Job, JobKind, JobProgress, JobReport, QueueMove, QueueSettings, QueueState } from '../../../shared/api.js';
import type { Bandwidth } from './bandwidth.js';
import type { ResumeJournal } from './resume-journal.js';

/**
 * What a running job's executor gets. Executors are registered per job kind, so a new
 * kind (verify, download-to-library) plugs in without the runner knowing it.
 */
export interface JobExecutionContext {
  job: Readonly<Job>;
  /** the parameters the job was submitted with (persisted; never holds a token) */
  params: Record<string, unknown>;
  /** tokens by role ("source", "destination"); in memory only, or looked up again on resume */
  tokens: Record<string, string>;
  signal: AbortSignal;
  /** merge progress; the runner persists and publishes it at a bounded rate */
  progress(update: Partial<JobProgress>): void;
  /** true when this run resumes a job that was running when the service stopped, or was paused */
  resumed: boolean;
  /** the queue's limit on bytes read per second, shared by every running job */
  bandwidth: Bandwidth;
  /** what earlier runs of this job completed; record files as the destination confirms them */
  journal: ResumeJournal;
}

/**
 * Runs a job and returns its report; the job service decides from it whether the job
 * succeeded (outcome.ts). An executor that stops after it began changing the destination
 * throws StoppedWithReport (what changed, and why it stopped); any other throw declares that
 * nothing changed.
 */
export type JobExecutor = (ctx: JobExecutionContext) => Promise<JobReport>;

/**
 * How a kind of job is retried for its failed files only (POST /api_v1/jobs/<ticket>/retry/):
 * the parameters of a new job of the same kind limited to `failedPaths` (report.failed_files,
 * as the source names them). A kind without one cannot be retried that way.
 */
export type RetryParams = (finished: Readonly<Job>, params: Record<string, unknown>, failedPaths: string[]) => Record<string, unknown>;

export interface SubmitJob {
  kind: JobKind;
  target: string;
  resource_id: string | null;
  source?: { target: string; resource_id: string } | null;
  params: Record<string, unknown>;
  /** tokens by role; kept in memory, their sha256 persisted to authorise later requests */
  tokens: Record<string, string>;
  /** files the job owns (a spooled upload); removed when the job is pruned */
  ownedFiles?: string[];
  /** the ticket of the job this one retries the failed files of */
  retryOf?: string;
  /** the ticket of the finished job this one resumes (its journal is carried over) */
  resumeOf?: string;
}

export interface JobService {
  /** `resumable`: a cancelled or failed job of this kind may be resumed (its params still hold all it needs) */
  register(kind: JobKind, executor: JobExecutor, retry?: RetryParams, resumable?: boolean): void;
  /** loads persisted jobs, resumes or fails the ones that were running, starts pruning */
  start(): Promise<void>;
  submit(request: SubmitJob): Promise<Job>;
  get(ticket: string): Job | undefined;
  list(): Job[];
  /** true when `token` is one the job was started with, or the access key */
  mayAccess(ticket: string, token: string): boolean;
  /** 409 FerryError when already finished; a paused job ends cancelled with what it changed */
  cancel(ticket: string): Promise<Job>;
  /** holds a waiting or running job (a running one stops and keeps what it did); 409 when finished */
  pause(ticket: string): Promise<Job>;
  /** puts a paused job first in the queue; it continues as a resumed run (a finished one: resumeFinished) */
  resume(ticket: string): Promise<Job>;
  /** moves a waiting job within the queue; 409 when it is not waiting */
  move(ticket: string, to: QueueMove): Promise<QueueState>;
  queueState(): QueueState;
  /** changes the queue's settings (400 on a bad value), saves them, and starts what now has room */
  configureQueue(update: Partial<QueueSettings>): Promise<QueueState>;
  /** removes every finished job now; the count removed */
  clearFinished(): Promise<number>;
  /**
   * A new job of the same kind for the finished job's failed files only, run with `tokens`
   * (by role; a role left out is looked up again as on resume). 409 when the job has not
   * finished or has no failed file; 405 when its kind cannot be retried file by file.
   */
  retry(ticket: string, tokens: Record<string, string>): Promise<Job>;
  /**
   * A new job with the finished job's parameters that skips the files it completed (its
   * resume journal), run with `tokens` as for retry. 409 when the job has not finished or
   * succeeded; 405 when its kind cannot be resumed. (A paused job resumes itself: resume.)
   */
  resumeFinished(ticket: string, tokens: Record<string, string>): Promise<Job>;
  /** every file a known job owns (absolute paths): what a sweep of leftovers must keep */
  ownedFiles(): Set<string>;
  /** listener gets every change; returns an unsubscribe function */
  subscribe(listener: (job: Job) => void): () => void;
  /** stops running jobs without failing them, so start() can resume them next time */
  close(): Promise<void>;
}

export const emptyReport = (): JobReport => ({
  resources_created: [],
  resources_updated: [],
  resources_ignored: [],
  failed_fixity: [],
  file_errors: [],
  failed_files: [],
  new_resource: null,
});
