// What the taskbar (Windows), dock (macOS) or launcher (Linux) shows for Ferry's jobs: one
// bar for everything unfinished. Pure, so the renderer computes it and the main process
// only hands it to BrowserWindow.setProgressBar.
import type { Job } from './api.js';

/**
 * Electron's setProgressBar values: a share from 0 to 1; `INDETERMINATE` (any value above
 * 1) while work runs whose size is not known yet; `NO_PROGRESS` (below 0) removes the bar.
 */
export const INDETERMINATE = 2;
export const NO_PROGRESS = -1;

/** The running jobs' bytes done over their bytes in all; the bar shows nothing when no job runs or waits. */
export function overallProgress(jobs: readonly Pick<Job, 'status' | 'progress'>[]): number {
  const unfinished = jobs.filter((job) => job.status === 'running' || job.status === 'queued');
  if (unfinished.length === 0) return NO_PROGRESS;
  let done = 0;
  let total = 0;
  for (const job of unfinished) {
    // a waiting job, or one still counting, makes the whole unknown: no share is invented
    if (job.status === 'queued' || job.progress.bytes_total === null) return INDETERMINATE;
    done += Math.min(job.progress.bytes_done, job.progress.bytes_total);
    total += job.progress.bytes_total;
  }
  return total === 0 ? INDETERMINATE : done / total;
}

/** Whether a new value is worth sending: a change of state, or at least a percent of movement. */
export function progressChanged(previous: number | null, next: number): boolean {
  if (previous === null) return true;
  const inRange = (value: number) => value >= 0 && value <= 1;
  if (inRange(previous) !== inRange(next)) return true;
  if (!inRange(next)) return previous !== next;
  return Math.abs(previous - next) >= 0.01 || next === 1;
}
