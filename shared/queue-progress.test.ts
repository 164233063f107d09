import { describe, expect, it } from 'vitest';
import type { Job } from './api.js';
import { INDETERMINATE, NO_PROGRESS, overallProgress, progressChanged } from './queue-progress.js';

const job = (status: Job['status'], bytes_done: number, bytes_total: number | null) => ({
  status,
  progress: { files_done: 0, files_total: null, bytes_done, bytes_total },
});

describe('overallProgress', () => {
  it('shows no bar when nothing runs or waits (finished and paused jobs do not count)', () => {
    expect(overallProgress([])).toBe(NO_PROGRESS);
    expect(overallProgress([job('succeeded', 10, 10), job('paused', 1, 10), job('failed', 0, null)])).toBe(NO_PROGRESS);
  });

  it("is the running jobs' bytes done over their bytes in all", () => {
    expect(overallProgress([job('running', 25, 100), job('running', 75, 100), job('succeeded', 5, 5)])).toBe(0.5);
  });

  it('is indeterminate while any job waits or has no total yet: no share is invented', () => {
    expect(overallProgress([job('running', 50, 100), job('queued', 0, null)])).toBe(INDETERMINATE);
    expect(overallProgress([job('running', 50, null)])).toBe(INDETERMINATE);
    expect(overallProgress([job('running', 0, 0)])).toBe(INDETERMINATE);
  });
});

describe('progressChanged', () => {
  it('sends state changes and movements of a percent or more, not every byte', () => {
    expect(progressChanged(null, 0)).toBe(true);
    expect(progressChanged(0.5, 0.504)).toBe(false);
    expect(progressChanged(0.5, 0.52)).toBe(true);
    expect(progressChanged(0.5, INDETERMINATE)).toBe(true);
    expect(progressChanged(INDETERMINATE, INDETERMINATE)).toBe(false);
    expect(progressChanged(0.995, 1)).toBe(true);
    expect(progressChanged(0.3, NO_PROGRESS)).toBe(true);
  });
});
