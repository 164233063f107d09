// What the desktop hears about jobs while the person looks elsewhere: a notification when a
// long job ends (Electron and browsers both give the page the Notification API), and the
// taskbar/dock progress in the desktop app. The decisions are pure; the wiring takes a
// notifier and a bridge so the tests can hand in fakes.
import type { Job } from '../../shared/api.js';
import type { FerryBridge } from '../../shared/ipc.js';
import { overallProgress, progressChanged } from '../../shared/queue-progress.js';
import { isFinished, type JobsStore } from './stores/jobs.js';

/** A job shorter than this ends while the person is still watching: no notification. */
export const LONG_JOB_MS = 30_000;

export interface Notice {
  title: string;
  body: string;
}

/** The notice for a job that has just ended after running a long time; null otherwise. */
export function endNotice(previous: Job | undefined, next: Job, label: string): Notice | null {
  if (!previous || isFinished(previous.status) || !isFinished(next.status)) return null;
  if (!next.started || !next.finished || Date.parse(next.finished) - Date.parse(next.started) < LONG_JOB_MS) return null;
  const failed = next.report?.failed_files?.length ?? 0;
  const files = next.progress.files_done;
  switch (next.status) {
    case 'succeeded':
      return { title: 'Ferry: done', body: `${label}: ${files === 1 ? '1 file' : `${files} files`} arrived and checked.` };
    case 'completed_with_errors':
      return { title: 'Ferry: done with errors', body: `${label}: ${failed === 1 ? '1 file' : `${failed} files`} failed. Open Ferry to retry them.` };
    case 'failed':
      return { title: 'Ferry: failed', body: `${label}: ${next.error ?? 'the job stopped.'}` };
    default:
      return { title: 'Ferry: cancelled', body: `${label}: stopped before it was complete.` };
  }
}

export interface Notifier {
  /** true when the person allowed notifications */
  allowed(): boolean;
  show(notice: Notice): void;
}

/** The page's Notification API, shown only while the window is not in front. */
export function pageNotifier(): Notifier | null {
  if (typeof Notification === 'undefined') return null;
  return {
    allowed: () => Notification.permission === 'granted',
    show: ({ title, body }) => {
      if (document.visibilityState === 'visible' && document.hasFocus()) return;
      new Notification(title, { body });
    },
  };
}

/** Notifies each long job's end; returns the unsubscribe. */
export function notifyJobEnds(jobs: JobsStore, notifier: Notifier, labelOf: (job: Job) => string): () => void {
  return jobs.onChange((next, previous) => {
    if (!notifier.allowed()) return;
    const notice = endNotice(previous?.job, next.job, labelOf(next.job));
    if (notice) notifier.show(notice);
  });
}

/** Keeps the taskbar/dock bar in step with the jobs (desktop app only); returns the unsubscribe. */
export function showQueueProgress(jobs: JobsStore, bridge: Pick<FerryBridge, 'setTaskbarProgress'>): () => void {
  let shown: number | null = null;
  const update = () => {
    const state = jobs.store.getState();
    const value = overallProgress(state.order.map((ticket) => state.jobs[ticket]!.job));
    if (!progressChanged(shown, value)) return;
    shown = value;
    void bridge.setTaskbarProgress(value).catch(() => undefined);
  };
  update();
  return jobs.store.subscribe(update);
}
