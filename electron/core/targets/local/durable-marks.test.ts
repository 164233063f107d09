import { spawnSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DurableMarks, foldersUpTo } from './durable-marks.js';
import { tempDirEach } from './test-helpers.js';

/** A barrier the test opens by hand, recording which files each one was asked to make durable. */
function manualBarrier() {
  const asked: string[][] = [];
  const opens: (() => void)[] = [];
  const fails: ((error: Error) => void)[] = [];
  const barrier = (files: readonly string[]) =>
    new Promise<void>((resolve, reject) => {
      asked.push([...files]);
      opens.push(resolve);
      fails.push(reject);
    });
  return { barrier, asked, open: (i: number) => opens[i]!(), fail: (i: number) => fails[i]!(new Error('EIO')) };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('DurableMarks: a file is told to the job only after a barrier begun after it was put in place', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('tells nothing until the barrier ends, then each mark in the order files arrived', async () => {
    const manual = manualBarrier();
    const told: string[] = [];
    const marks = new DurableMarks(manual.barrier, (p) => told.push(p), 60_000);
    marks.add('a', '/w/a');
    marks.add('b', '/w/b');
    const settled = marks.settle();
    marks.add('c', '/w/c'); // arrived after the first barrier began: not covered by it
    const second = marks.settle();
    await turn();
    expect([manual.asked, told]).toEqual([[['/w/a', '/w/b']], []]);
    manual.open(0);
    await settled;
    expect(told).toEqual(['a', 'b']);
    await turn();
    expect(manual.asked).toEqual([['/w/a', '/w/b'], ['/w/c']]);
    manual.open(1);
    await second;
    expect(told).toEqual(['a', 'b', 'c']);
  });

  it('a failed barrier tells nothing of its files (they are sent again on a resume), later ones still tell theirs', async () => {
    const manual = manualBarrier();
    const told: string[] = [];
    const marks = new DurableMarks(manual.barrier, (p) => told.push(p), 60_000);
    marks.add('a', '/w/a');
    const first = marks.settle();
    await turn();
    manual.fail(0);
    await first;
    marks.add('b', '/w/b');
    const second = marks.settle();
    await turn();
    manual.open(1);
    await second;
    expect(told).toEqual(['b']);
  });

  it('runs a barrier by itself once a mark has waited the interval', async () => {
    vi.useFakeTimers();
    const barrier = vi.fn(() => Promise.resolve());
    const told: string[] = [];
    const marks = new DurableMarks(barrier, (p) => told.push(p), 1000);
    marks.add('a', '/w/a');
    await vi.advanceTimersByTimeAsync(999);
    expect(barrier).not.toHaveBeenCalled();
    marks.add('b', '/w/b');
    await vi.advanceTimersByTimeAsync(1);
    expect(barrier).toHaveBeenCalledTimes(1);
    expect(told).toEqual(['a', 'b']);
    marks.drop();
  });

  it('after drop (the write succeeded, its journal goes) nothing is told, not even by a barrier in flight', async () => {
    const manual = manualBarrier();
    const told: string[] = [];
    const marks = new DurableMarks(manual.barrier, (p) => told.push(p), 60_000);
    marks.add('a', '/w/a');
    const inFlight = marks.settle();
    await turn();
    marks.drop();
    marks.add('b', '/w/b');
    manual.open(0);
    await inFlight;
    await marks.settle();
    expect([told, manual.asked]).toEqual([[], [['/w/a']]]);
  });
});

describe('durabilityBarrier', () => {
  const workspace = tempDirEach('durable');

  it('lists each folder from the files\' own up to the root, deepest first, once', () => {
    expect(foldersUpTo('/w', ['/w/a/b/x', '/w/a/y', '/w/z'])).toEqual(['/w/a/b', '/w/a', '/w']);
  });

  afterEach(() => {
    vi.unstubAllEnvs();
    vi.resetModules();
  });

  /** the module as it is with FERRY_FAST_PATHS set to `setting` (read once per process) */
  async function freshModule(setting: string) {
    vi.resetModules();
    vi.stubEnv('FERRY_FAST_PATHS', setting);
    return (await import('./durable-marks.js')) as typeof import('./durable-marks.js');
  }

  it.each([['one syncfs (sync -f)', ''], ['an fsync of each file and folder', '-syncfs-marks']])('makes real files durable by %s', async (_how, setting) => {
    // A power cut cannot be staged here; what can be checked is that each way succeeds on
    // real files and which way is taken: syncfs flushes the whole file system and does not
    // look at the files, the fallback (macOS, Windows, or switched off) opens each one.
    if (setting === '' && (process.platform !== 'linux' || spawnSync('sync', ['-f', workspace.dir]).status !== 0)) {
      console.log('[durable-marks] syncfs not run: no Linux `sync -f` here');
      return;
    }
    const { durabilityBarrier } = await freshModule(setting);
    await mkdir(path.join(workspace.dir, 'sub'));
    const files = [path.join(workspace.dir, 'sub', 'a.txt'), path.join(workspace.dir, 'b.txt')];
    for (const file of files) await writeFile(file, 'bytes');
    await expect(durabilityBarrier(workspace.dir)(files)).resolves.toBeUndefined();
    const gone = durabilityBarrier(workspace.dir)([path.join(workspace.dir, 'gone.txt')]);
    if (setting === '') await expect(gone).resolves.toBeUndefined();
    else await expect(gone).rejects.toThrow(/ENOENT/);
  });

  it('a syncfs that fails (the destination gone) falls back for that barrier only', async () => {
    if (process.platform !== 'linux' || spawnSync('sync', ['-f', workspace.dir]).status !== 0) {
      console.log('[durable-marks] syncfs fallback not run: no Linux `sync -f` here');
      return;
    }
    const { durabilityBarrier } = await freshModule('');
    const missing = path.join(workspace.dir, 'removed-meanwhile');
    // sync -f cannot open the root; the fsync of its file fails too: nothing is told
    await expect(durabilityBarrier(missing)([path.join(missing, 'a.txt')])).rejects.toThrow(/ENOENT/);
    // the next barrier takes syncfs again (a fallback fsync would fail on the file gone)
    await expect(durabilityBarrier(workspace.dir)([path.join(workspace.dir, 'gone.txt')])).resolves.toBeUndefined();
  });
});

