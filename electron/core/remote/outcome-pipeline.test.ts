import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { Entry, WriteOutcome } from '../target.js';
import { OutcomePipeline, type FileResult } from './outcome-pipeline.js';

const file = (path: string): Entry => ({ path, kind: 'file', size: 10, mtime: null, hashes: {}, open: async () => Readable.from([Buffer.alloc(10)]) });
const later = <T>(ms: number, value: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value), ms));

describe('OutcomePipeline', () => {
  it('fills the outcome in entry order and tells the job each file the service has, only once its result is in', async () => {
    const outcome: WriteOutcome = { created: [], updated: [], ignored: [], fileErrors: [] };
    const told: string[] = [];
    const writes = new OutcomePipeline({ files: 3, bytes: 1024 }, outcome, {
      duplicateAction: 'update',
      signal: new AbortController().signal,
      jobLabel: 'test',
      onFileWritten: (path) => told.push(path),
    });
    // the first ends last: nothing after it is told before it
    const results: [string, number, FileResult][] = [
      ['a', 60, { path: 'a', list: 'created', stored: { hashes: { md5: 'aa' }, size: 10 } }],
      ['b', 10, { path: 'b', error: 'refused' }],
      ['c', 20, { path: 'c', list: 'updated' }],
    ];
    for (const [path, ms, result] of results) await writes.startFile(file(path), path, () => later(ms, result));
    writes.done({ path: 'd', list: 'ignored' });
    await writes.finish();
    expect(outcome).toEqual({ created: ['a'], updated: ['c'], ignored: ['d'], fileErrors: [{ path: 'b', error: 'refused' }], stored: new Map([['a', { hashes: { md5: 'aa' }, size: 10 }]]) });
    // a file's own failure is never told as written
    expect(told).toEqual(['a', 'c', 'd']);
  });

  it('a pending result frees its slot at once; it and the results behind it are reported in entry order once it is in, never if it fails', async () => {
    const outcome: WriteOutcome = { created: [], updated: [], ignored: [], fileErrors: [] };
    const told: string[] = [];
    const writes = new OutcomePipeline({ files: 1, bytes: 0 }, outcome, { duplicateAction: 'update', signal: new AbortController().signal, jobLabel: 'test', onFileWritten: (path) => told.push(path) });
    let register!: (result: FileResult) => void;
    let refuse!: (error: Error) => void;
    await writes.startFile(file('a'), 'a', async () => ({ later: new Promise<FileResult>((resolve) => (register = resolve)) }));
    await writes.startFile(file('b'), 'b', async () => ({ path: 'b', list: 'created' }));
    await writes.startFile(file('c'), 'c', async () => ({ later: new Promise<FileResult>((_, reject) => (refuse = reject)) }));
    await writes.startFile(file('d'), 'd', async () => ({ path: 'd', list: 'created' }));
    // one slot, and all four started: a pending result held none
    await writes.drain();
    expect(told).toEqual([]);
    register({ path: 'a', list: 'created' });
    refuse(new Error('never registered'));
    await writes.finish();
    expect(outcome.created).toEqual(['a', 'b', 'd']);
    expect(told).toEqual(['a', 'b', 'd']);
  });

  it('stops taking files after a hard failure, and finish throws it once nothing is under way', async () => {
    const outcome: WriteOutcome = { created: [], updated: [], ignored: [], fileErrors: [] };
    const writes = new OutcomePipeline({ files: 2, bytes: 1024 }, outcome, { duplicateAction: 'update', signal: new AbortController().signal, jobLabel: 'test' });
    await writes.startFile(file('a'), 'a', () => Promise.reject(new Error('token rejected')));
    await writes.drain();
    expect(writes.stopped).toBe(true);
    await expect(writes.finish()).rejects.toThrow('token rejected');
    expect(outcome.created).toEqual([]);
  });
});
