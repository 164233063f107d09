import { describe, expect, it } from 'vitest';
import type { Job } from '../../shared/api.js';
import { INDETERMINATE, NO_PROGRESS } from '../../shared/queue-progress.js';
import { endNotice, notifyJobEnds, showQueueProgress, type Notice } from './job-notices.js';
import { createJobsStore } from './stores/jobs.js';

function job(status: Job['status'], overrides: Partial<Job> = {}): Job {
  return {
    ticket_number: 't1',
    kind: 'transfer',
    status,
    target: 'webdav',
    resource_id: null,
    created: '2026-11-24T10:00:00.000000Z',
    started: '2026-11-24T10:00:00.000000Z',
    finished: isEnd(status) ? '2026-11-24T10:05:00.000000Z' : null,
    progress: { files_done: 12, files_total: 12, bytes_done: 100, bytes_total: 100 },
    report: null,
    error: null,
    ...overrides,
  };
}
const isEnd = (status: Job['status']) => !['queued', 'running', 'paused'].includes(status);

describe('endNotice', () => {
  it('speaks when a long job ends, in the words of its outcome', () => {
    expect(endNotice(job('running'), job('succeeded'), 'Local → WebDAV')).toEqual({ title: 'Ferry: done', body: 'Local → WebDAV: 12 files arrived and checked.' });
    const partial = job('completed_with_errors', { report: { failed_files: [{ path: 'a', error: 'x' }, { path: 'b', error: 'y' }] } as unknown as Job['report'] });
    expect(endNotice(job('running'), partial, 'L')?.body).toBe('L: 2 files failed. Open Ferry to retry them.');
    expect(endNotice(job('running'), job('failed', { error: 'The server refused the token.' }), 'L')?.body).toBe('L: The server refused the token.');
  });

  it('stays quiet for short jobs, jobs first seen finished, and repeats of an end', () => {
    expect(endNotice(job('running'), job('succeeded', { finished: '2026-11-24T10:00:10.000000Z' }), 'L')).toBeNull();
    expect(endNotice(undefined, job('succeeded'), 'L')).toBeNull();
    expect(endNotice(job('succeeded'), job('succeeded'), 'L')).toBeNull();
    expect(endNotice(job('running'), job('paused'), 'L')).toBeNull();
  });
});

describe('wiring', () => {
  it('notifies once per long job end, and only when the person allowed it', () => {
    const jobs = createJobsStore(null, () => 0);
    const shown: Notice[] = [];
    let allowed = false;
    const stop = notifyJobEnds(jobs, { allowed: () => allowed, show: (notice) => shown.push(notice) }, () => 'Job');
    jobs.event(job('running', { finished: null, progress: { files_done: 0, files_total: 12, bytes_done: 0, bytes_total: 100 } }));
    jobs.event(job('succeeded'));
    expect(shown).toEqual([]);
    allowed = true;
    jobs.event(job('running', { ticket_number: 't2', finished: null }));
    jobs.event(job('succeeded', { ticket_number: 't2' }));
    jobs.event(job('succeeded', { ticket_number: 't2' }));
    expect(shown).toHaveLength(1);
    stop();
  });

  it('sends the taskbar the overall progress as jobs move, not on every byte', () => {
    const jobs = createJobsStore(null, () => 0);
    const sent: number[] = [];
    const stop = showQueueProgress(jobs, { setTaskbarProgress: async (value) => void sent.push(value) });
    jobs.event(job('queued', { finished: null, started: null }));
    jobs.event(job('running', { finished: null, progress: { files_done: 0, files_total: 12, bytes_done: 50, bytes_total: 100 } }));
    jobs.event(job('running', { finished: null, progress: { files_done: 0, files_total: 12, bytes_done: 50.4, bytes_total: 100 } }));
    jobs.event(job('succeeded'));
    expect(sent).toEqual([NO_PROGRESS, INDETERMINATE, 0.5, NO_PROGRESS]);
    stop();
  });
});
