// Small files from a streamed source (a download: no readWhole), written by the local writer
// with the fast path `gathered-small-files` (gathered whole, then written on a file-write
// worker thread in one hop) and without it (a handle opened first, the bytes streamed in):
// the same files, times and outcome; a source that fails part-way leaves no partial file; a source
// far bigger than it said is still written whole.
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Entry } from '../../target.js';
import { ctx, entriesOf, tempDirEach, writeOptions } from './test-helpers.js';

const where = tempDirEach('gathered-small-files');
const mtime = new Date('2023-04-05T06:07:08Z');

afterEach(() => {
  vi.unstubAllEnvs();
  vi.resetModules();
  vi.restoreAllMocks();
});

/** LocalTarget, and the file-write pool it uses, as they are with FERRY_FAST_PATHS set to `setting` */
async function withFastPaths(setting: string) {
  vi.resetModules();
  vi.stubEnv('FERRY_FAST_PATHS', setting);
  const [{ LocalTarget }, { fileWriteWorkers }] = await Promise.all([import('./local-target.js'), import('../../jobs/file-write-workers.js')]);
  const pool = fileWriteWorkers();
  return { target: new LocalTarget({ root: where.dir }), writesOnWorkers: vi.spyOn(pool, 'writeNewFile') };
}

async function* withEntry(entries: AsyncIterable<Entry>, extra: Entry): AsyncGenerator<Entry> {
  yield* entries;
  yield extra;
}

const WAYS = [
  ['gathered, then written on a worker thread', '', true],
  ['streamed into a handle opened first', '-gathered-small-files', false],
] as const;

describe.each(WAYS)('small streamed files, %s', (_way, setting, onWorkers) => {
  it('writes each file, its bytes and its time', async () => {
    const { target, writesOnWorkers } = await withFastPaths(setting);
    const tree = { 'Set/': null, 'Set/a.txt': 'alpha', 'Set/sub/': null, 'Set/sub/b.bin': Buffer.alloc(300_000, 7), 'Set/empty': '' };
    const outcome = await target.write(ctx(), null, entriesOf(tree, mtime), writeOptions('ignore'));
    expect(outcome).toMatchObject({ created: ['Set', 'Set/a.txt', 'Set/sub', 'Set/sub/b.bin', 'Set/empty'], fileErrors: [] });
    expect(await readFile(path.join(where.dir, 'Set', 'a.txt'), 'utf8')).toBe('alpha');
    expect((await readFile(path.join(where.dir, 'Set', 'sub', 'b.bin'))).equals(Buffer.alloc(300_000, 7))).toBe(true);
    expect((await stat(path.join(where.dir, 'Set', 'empty'))).size).toBe(0);
    expect((await stat(path.join(where.dir, 'Set', 'sub', 'b.bin'))).mtime).toEqual(mtime);
    expect(writesOnWorkers).toHaveBeenCalledTimes(onWorkers ? 3 : 0);
  });

  it('leaves no partial file behind for a source that fails part-way', async () => {
    const { target } = await withFastPaths(setting);
    const failing: Entry = {
      path: 'Set/broken.txt',
      kind: 'file',
      size: 10,
      mtime,
      hashes: {},
      open: async () =>
        Readable.from(
          (async function* () {
            yield Buffer.from('hello');
            throw new Error('the connection broke');
          })(),
        ),
    };
    // a source's own failure ends the local write (only the destination's refusals are per file)
    await expect(target.write(ctx(), null, withEntry(entriesOf({ 'Set/': null, 'Set/ok.txt': 'fine' }, mtime), failing), writeOptions('ignore'))).rejects.toThrow('the connection broke');
    const left = await readdir(path.join(where.dir, 'Set')).catch(() => []);
    expect(left.filter((name) => name !== 'ok.txt')).toEqual([]);
  });

  it('writes a source far bigger than it said whole, holding no more than its limit', async () => {
    const { target } = await withFastPaths(setting);
    const big = Buffer.alloc(5 * 1024 * 1024 + 3, 9);
    const understated: Entry = {
      path: 'Set/big.bin',
      kind: 'file',
      size: 10,
      mtime,
      hashes: {},
      open: async () => Readable.from([big.subarray(0, 2_000_000), big.subarray(2_000_000, 4_500_000), big.subarray(4_500_000)]),
    };
    const outcome = await target.write(ctx(), null, withEntry(entriesOf({ 'Set/': null }, mtime), understated), writeOptions('ignore'));
    expect(outcome.fileErrors).toEqual([]);
    expect((await readFile(path.join(where.dir, 'Set', 'big.bin'))).equals(big)).toBe(true);
    expect((await stat(path.join(where.dir, 'Set', 'big.bin'))).mtime).toEqual(mtime);
  });
});
