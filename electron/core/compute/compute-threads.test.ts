import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

// Each case imports the modules afresh: the sets a process starts, and the threads, are counted.
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-compute-'));
  vi.resetModules();
});
afterEach(async () => {
  vi.doUnmock('./worker-source.js');
  await rm(dir, { recursive: true, force: true });
});

const md5 = (bytes: Buffer) => createHash('md5').update(bytes).digest('hex');

/** A batch of one small file for the bag pool, stored (level 0). */
const oneFile = (bytes: Buffer) => ({ name: 'a.txt', folder: false, bytes, dosTime: 0, dosDate: 0, algorithms: ['md5'], level: 0, decide: false });

describe('compute threads', () => {
  it('are one set the file-write, hash and bag pools share: no pool starts threads of its own', async () => {
    const { computeThreadCount, computeThreadsStarted } = await import('./compute-threads.js');
    const { fileWriteWorkers } = await import('../jobs/file-write-workers.js');
    const { hashFile } = await import('../hashing.js');
    const { bagWorkers } = await import('../bag/bag-workers.js');
    const large = Buffer.alloc(2 * 1024 * 1024, 7);
    await writeFile(path.join(dir, 'large'), large);

    await fileWriteWorkers().writeNewFile(path.join(dir, 'small'), Buffer.from('small'), null, false);
    expect((await hashFile(path.join(dir, 'large'), ['md5'])).hashes.md5).toBe(md5(large));
    const batch = await bagWorkers().batch([oneFile(Buffer.from('bag bytes'))]);

    expect(await readFile(path.join(dir, 'small'), 'utf8')).toBe('small');
    expect(batch.results[0]!.hashes!.md5).toBe(md5(Buffer.from('bag bytes')));
    expect(computeThreadsStarted()).toBe(computeThreadCount());
  });

  it('when threads cannot start, the pools work without them or, the bag pool, fail with a sentence; no more sets are tried than MAX_THREAD_SETS', async () => {
    let asked = 0;
    vi.doMock('./worker-source.js', () => ({
      computeWorkerSource: () => {
        asked++;
        throw new Error('no script');
      },
    }));
    const { computeThreads, computeThreadsAvailable, MAX_THREAD_SETS } = await import('./compute-threads.js');
    const { fileWriteWorkers, readOnWorkerOrHere } = await import('../jobs/file-write-workers.js');
    const { hashFile } = await import('../hashing.js');
    const { bagWorkers } = await import('../bag/bag-workers.js');
    const large = Buffer.alloc(1024 * 1024, 9);
    await writeFile(path.join(dir, 'large'), large);

    const read = () => readOnWorkerOrHere(async (workers) => `on a thread: ${(await workers.readFile(path.join(dir, 'large'), large.length, [])).bytes.length}`, async () => 'here');
    expect(await read()).toBe('here');
    expect((await hashFile(path.join(dir, 'large'), ['md5'])).hashes.md5).toBe(md5(large));
    await expect(bagWorkers().batch([oneFile(Buffer.from('x'))])).rejects.toThrow("The ZIP could not be made: Ferry's worker threads could not be started.");
    for (let i = 0; i < 5; i++) expect(computeThreads()).toBeNull();
    expect(asked).toBe(MAX_THREAD_SETS);
    expect(computeThreadsAvailable()).toBe(false);
    expect(fileWriteWorkers().available).toBe(false);
    expect(await read()).toBe('here');
  });

  it('a set lost while the bag pool waits fails its batch with a sentence, and the next pool gets a new set', async () => {
    const { computeThreads } = await import('./compute-threads.js');
    const { bagWorkers } = await import('../bag/bag-workers.js');
    const pool = bagWorkers();
    const lost = computeThreads()!;
    // a message that throws on every thread: each dies before the batch posted after it
    for (const thread of lost.threads) thread.post({ kind: 'files', batch: null as unknown as [] });
    await expect(pool.batch([oneFile(Buffer.from('x'))])).rejects.toThrow(/^The ZIP could not be made: a worker thread/);
    expect(lost.lost).not.toBeNull();
    const again = await bagWorkers().batch([oneFile(Buffer.from('again'))]);
    expect(again.results[0]!.hashes!.md5).toBe(md5(Buffer.from('again')));
    expect(computeThreads()).not.toBe(lost);
  });
});
