// Every job, live: the list fetched on load (jobs survive restarts on the server) merged
// with the SSE stream. Events may arrive out of order with the list snapshot, so a job
// never moves backwards (queued → running → finished; bytes only grow while running).
// What was submitted is kept client-side (never a token) so a failed job can be retried.
import { createStore } from 'zustand/vanilla';
import { isFinishedStatus, type DescriptiveMetadata, type DuplicateFileAction, type FolderMode, type Job, type JobStatus } from '../../../shared/api.js';
import type { Crumb } from './pane.js';

export interface JobView {
  job: Job;
  /** bytes per second, smoothed; null until two samples */
  speed: number | null;
  sample: { at: number; bytes: number } | null;
}

export interface Submission {
  kind: 'upload' | 'transfer' | 'verify' | 'check';
  label: string;
  destination: { target: string; containerId: string | null; trail: Crumb[] };
  /** `ids`: a transfer of a whole selection (one job); `id` is then its first */
  source?: { target: string; id: string; title: string; ids?: string[] };
  duplicateAction: DuplicateFileAction;
  /** per file (a transfer: by the source's path; an upload: by its path in the ZIP), the action instead of duplicateAction */
  duplicateChoices?: Record<string, DuplicateFileAction>;
  /** how a destination that keeps no folders keeps them, as chosen (absent: the server's default) */
  folders?: FolderMode;
  /** uploads: key of the ZIP blob kept in memory for a retry during this run */
  blobKey?: string;
  /** false: sent with `ferry-provenance: off` (absent: on, the server's default) */
  provenance?: boolean;
  /** a transfer to a new record: the descriptive metadata a person reviewed and edited, sent as the body's `metadata` */
  metadata?: DescriptiveMetadata;
}

// A pause sends a job back (running → paused → queued → running), so order is judged only
// between the states a job passes through once: a stale "queued" never undoes "running".
const RANK: Record<JobStatus, number> = { queued: 0, running: 1, paused: 1, succeeded: 2, completed_with_errors: 2, failed: 2, cancelled: 2 };
export const isFinished = (status: JobStatus) => isFinishedStatus(status);

/** What a job retrying another's failed files is called. */
export const retryLabel = (label: string) => (label.startsWith('Retry failed files: ') ? label : `Retry failed files: ${label}`);

/** How a job's end reads: each finished state its own tone, so only a full success looks like one. */
export type Outcome = 'pending' | 'complete' | 'partial' | 'failed' | 'incomplete';

export function outcomeOf(job: Job): Outcome {
  switch (job.status) {
    case 'queued':
    case 'running':
    case 'paused':
      return 'pending';
    case 'succeeded':
      return 'complete';
    case 'completed_with_errors':
      return 'partial';
    case 'failed':
      return 'failed';
    case 'cancelled':
      return 'incomplete';
  }
}

/** Whether "Retry failed files" applies: finished, with failed files, of a kind the server retries file by file. */
/** A cancelled or failed transfer can go on where it stopped (POST resume/); an upload's ZIP is gone by then. */
export function canResume(job: Job): boolean {
  return job.kind === 'transfer' && (job.status === 'cancelled' || job.status === 'failed');
}

export function canRetryFailedFiles(job: Job): boolean {
  return isFinished(job.status) && job.kind !== 'upload' && (job.report?.failed_files?.length ?? 0) > 0;
}

/** Merge one observation of a job into what we know. Pure. */
export function mergeJob(previous: JobView | undefined, incoming: Job, now: number): JobView {
  if (!previous) {
    return { job: incoming, speed: null, sample: { at: now, bytes: incoming.progress.bytes_done } };
  }
  const old = previous.job;
  if (JSON.stringify(old) === JSON.stringify(incoming)) return previous; // nothing new
  const pauseMove = !isFinished(old.status) && (old.status === 'paused' || incoming.status === 'paused');
  if (RANK[incoming.status] < RANK[old.status] && !pauseMove) return previous;
  if (isFinished(old.status) && isFinished(incoming.status) && old.status !== incoming.status) return previous;
  if (incoming.status === old.status && incoming.progress.bytes_done < old.progress.bytes_done) return previous;

  let speed = previous.speed;
  let sample = previous.sample;
  const bytes = incoming.progress.bytes_done;
  if (incoming.status === 'running' && sample) {
    const elapsed = (now - sample.at) / 1000;
    if (elapsed >= 0.25) {
      const instant = Math.max(0, bytes - sample.bytes) / elapsed;
      speed = speed === null ? instant : speed * 0.6 + instant * 0.4; // smooth out bursts
      sample = { at: now, bytes };
    }
  } else if (isFinished(incoming.status)) {
    speed = null;
  }
  return { job: incoming, speed, sample: sample ?? { at: now, bytes } };
}

/** Seconds left at the current speed, or null if it cannot be told. */
export function etaSeconds(view: JobView): number | null {
  const { bytes_total, bytes_done } = view.job.progress;
  if (!view.speed || view.speed <= 0 || bytes_total === null) return null;
  return Math.max(0, (bytes_total - bytes_done) / view.speed);
}

const SUBMISSIONS_KEY = 'ferry.jobSubmissions';
const MAX_REMEMBERED = 200;

export interface JobsState {
  jobs: Record<string, JobView>;
  /** tickets, newest first */
  order: string[];
  stream: 'connecting' | 'live' | 'reconnecting';
  submissions: Record<string, Submission>;
  loadError: string | null;
}

export function createJobsStore(storage: Pick<Storage, 'getItem' | 'setItem'> | null, clock: () => number = Date.now) {
  function readSubmissions(): Record<string, Submission> {
    try {
      return JSON.parse(storage?.getItem(SUBMISSIONS_KEY) ?? '{}') as Record<string, Submission>;
    } catch {
      return {};
    }
  }

  const store = createStore<JobsState>()(() => ({
    jobs: {},
    order: [],
    stream: 'connecting',
    submissions: readSubmissions(),
    loadError: null,
  }));

  const listeners = new Set<(view: JobView, previous: JobView | undefined) => void>();

  function orderOf(jobs: Record<string, JobView>): string[] {
    return Object.values(jobs)
      .sort((a, b) => (a.job.created < b.job.created ? 1 : a.job.created > b.job.created ? -1 : 0))
      .map((view) => view.job.ticket_number);
  }

  function apply(incoming: readonly Job[]): void {
    const now = clock();
    const jobs = { ...store.getState().jobs };
    const changed: [JobView, JobView | undefined][] = [];
    for (const job of incoming) {
      const previous = jobs[job.ticket_number];
      const next = mergeJob(previous, job, now);
      if (next !== previous) {
        jobs[job.ticket_number] = next;
        changed.push([next, previous]);
      }
    }
    if (changed.length === 0) return;
    store.setState({ jobs, order: orderOf(jobs) });
    for (const [next, previous] of changed) for (const listener of listeners) listener(next, previous);
  }

  return {
    store,
    /** the list from GET /api_v1/jobs/ */
    load: (list: readonly Job[]) => apply(list),
    /** one SSE `job` event */
    event: (job: Job) => apply([job]),
    /** drops every finished job from the list (after the server cleared them) */
    forgetFinished(): void {
      const jobs = Object.fromEntries(Object.entries(store.getState().jobs).filter(([, view]) => !isFinished(view.job.status)));
      store.setState({ jobs, order: orderOf(jobs) });
    },
    setStream: (stream: JobsState['stream']) => store.setState({ stream }),
    setLoadError: (loadError: string | null) => store.setState({ loadError }),
    remember(ticket: string, submission: Submission): void {
      const submissions = { ...store.getState().submissions, [ticket]: submission };
      const tickets = Object.keys(submissions);
      for (const old of tickets.slice(0, Math.max(0, tickets.length - MAX_REMEMBERED))) delete submissions[old];
      store.setState({ submissions });
      try {
        // blobs stay in memory; only the plain description is written
        storage?.setItem(SUBMISSIONS_KEY, JSON.stringify(submissions));
      } catch {
        /* storage full or unavailable: retry after restart won't be offered */
      }
    },
    /** called with every change; used to refresh panes when a job finishes */
    onChange(listener: (view: JobView, previous: JobView | undefined) => void): () => void {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

export type JobsStore = ReturnType<typeof createJobsStore>;
