import { describe, expect, it } from 'vitest';
import { job, MemoryStorage } from '../test-support.js';
import { createJobsStore, etaSeconds, mergeJob } from './jobs.js';

describe('merging job observations', () => {
  it('never moves a job backwards', () => {
    const done = mergeJob(undefined, job('t', 'succeeded', 1000), 0);
    expect(mergeJob(done, job('t', 'running', 500), 10)).toBe(done);
    const running = mergeJob(undefined, job('t', 'running', 600), 0);
    expect(mergeJob(running, job('t', 'running', 300), 10)).toBe(running);
    expect(mergeJob(running, job('t', 'queued'), 10)).toBe(running);
    const cancelled = mergeJob(undefined, job('t', 'cancelled'), 0);
    expect(mergeJob(cancelled, job('t', 'failed'), 1)).toBe(cancelled);
  });

  it('follows a pause back and forth (running → paused → queued → running), never out of a finished state', () => {
    let view = mergeJob(undefined, job('t', 'running', 600), 0);
    view = mergeJob(view, job('t', 'paused', 600), 1);
    expect(view.job.status).toBe('paused');
    view = mergeJob(view, job('t', 'queued', 600), 2);
    expect(view.job.status).toBe('queued');
    view = mergeJob(view, job('t', 'running', 600), 3);
    expect(view.job.status).toBe('running');
    const done = mergeJob(undefined, job('t', 'cancelled'), 0);
    expect(mergeJob(done, job('t', 'paused'), 1)).toBe(done);
  });

  it('derives a speed and an ETA from successive events', () => {
    let view = mergeJob(undefined, job('t', 'running', 0, 10_000), 0);
    view = mergeJob(view, job('t', 'running', 1000, 10_000), 1000);
    expect(view.speed).toBe(1000);
    expect(etaSeconds(view)).toBe(9);
    view = mergeJob(view, job('t', 'running', 3000, 10_000), 2000);
    expect(view.speed).toBeCloseTo(1000 * 0.6 + 2000 * 0.4);
    const finished = mergeJob(view, job('t', 'succeeded', 10_000, 10_000), 3000);
    expect(finished.speed).toBeNull();
    expect(etaSeconds(finished)).toBeNull();
  });
});

describe('jobs store', () => {
  it('merges the list and the SSE events, newest first, and tells listeners', () => {
    let now = 0;
    const jobs = createJobsStore(new MemoryStorage(), () => now);
    const changes: string[] = [];
    jobs.onChange((v, p) => changes.push(`${v.job.ticket_number}:${p?.job.status ?? '-'}→${v.job.status}`));
    jobs.load([job('a', 'succeeded', 1000, 1000, '2026-01-01T00:00:00.000000Z'), job('b', 'queued', 0, 1000, '2026-01-02T00:00:00.000000Z')]);
    expect(jobs.store.getState().order).toEqual(['b', 'a']);
    now = 500;
    jobs.event(job('b', 'running', 100, 1000, '2026-01-02T00:00:00.000000Z'));
    jobs.event(job('b', 'running', 100, 1000, '2026-01-02T00:00:00.000000Z')); // same again
    jobs.event(job('c', 'running', 0, 10, '2026-01-03T00:00:00.000000Z'));
    // a stale list arriving after the events changes nothing
    jobs.load([job('b', 'queued', 0, 1000, '2026-01-02T00:00:00.000000Z')]);
    expect(jobs.store.getState().jobs.b!.job.status).toBe('running');
    expect(jobs.store.getState().order).toEqual(['c', 'b', 'a']);
    expect(changes).toEqual(['a:-→succeeded', 'b:-→queued', 'b:queued→running', 'c:-→running']);
  });

  it('remembers submissions for retry in storage, without tokens or blobs', () => {
    const storage = new MemoryStorage();
    const jobs = createJobsStore(storage);
    jobs.remember('t1', {
      kind: 'transfer',
      label: 'x → y',
      destination: { target: 'local', containerId: null, trail: [] },
      source: { target: 'offline', id: 'abc', title: 'x' },
      duplicateAction: 'ignore',
    });
    const again = createJobsStore(storage);
    expect(again.store.getState().submissions.t1!.source!.id).toBe('abc');
    expect(storage.getItem('ferry.jobSubmissions')).not.toMatch(/token|Bearer/i);
  });
});
