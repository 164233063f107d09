import { describe, expect, it } from 'vitest';
import { derivedSignal, detachedSignal, retryListener, withRetryNotices } from './retry-notice.js';

// The channel from a request to its job's progress: the job's signal, and signals made from it.

describe('retry notices', () => {
  it("reaches the job from its signal and from signals made from it, the job's cancel aside", async () => {
    const job = new AbortController();
    const notes: (string | null)[] = [];
    await withRetryNotices(job.signal, (note) => notes.push(note), async () => {
      const request = {};
      retryListener(job.signal)('one', request);
      retryListener(derivedSignal(derivedSignal(job.signal), AbortSignal.timeout(60_000)))('two', request);
      job.abort(); // cleanup after a cancel still belongs to the job
      const cleanup = detachedSignal(job.signal, 60_000);
      expect(cleanup.aborted).toBe(false);
      retryListener(cleanup)('three', request);
      retryListener(cleanup)(null, request);
    });
    expect(notes).toEqual(['one', 'two', 'three', null]);
  });

  it('reaches nobody without a job: no signal, a signal no job registered, a job that has ended', async () => {
    const notes: (string | null)[] = [];
    const job = new AbortController().signal;
    const derived = derivedSignal(job);
    await withRetryNotices(job, (note) => notes.push(note), async () => {
      retryListener(undefined)('none', {});
      retryListener(new AbortController().signal)('a listing', {});
      retryListener(AbortSignal.any([job]))('made without derivedSignal', {});
    });
    retryListener(job)('after', {});
    retryListener(derived)('after', {});
    expect(notes).toEqual([]);
  });

  it('clears a notice only for the request that set it', async () => {
    const notes: (string | null)[] = [];
    const job = new AbortController().signal;
    await withRetryNotices(job, (note) => notes.push(note), async () => {
      const [first, second] = [{}, {}];
      retryListener(job)('first', first);
      retryListener(job)('second', second);
      retryListener(job)(null, first);
      retryListener(job)(null, second);
    });
    expect(notes).toEqual(['first', 'second', null]);
  });
});
