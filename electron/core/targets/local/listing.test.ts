import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ResourceNode } from '../../target.js';
import { decodeLocalId } from './ids.js';
import { WorkspaceLister } from './listing.js';
import { collect, tempDir } from './test-helpers.js';

const titles = (batches: (readonly ResourceNode[])[]) => batches.flat().map((row) => decodeLocalId(row.id));
/** ctime moves with the kernel's coarse clock: let a tick pass so a change is seen as one */
const nextClockTick = () => new Promise((resolve) => setTimeout(resolve, 30));

describe('WorkspaceLister', () => {
  let root: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => {
    ({ dir: root, cleanup } = await tempDir('listing'));
    await mkdir(path.join(root, 'A/sub'), { recursive: true });
    await mkdir(path.join(root, 'B'));
    for (const file of ['A/1.txt', 'A/2.txt', 'A/sub/x.txt', 'B/y.txt', 'top.txt']) await writeFile(path.join(root, file), file);
    // a folder whose ctime is not yet in the past by Date.now()'s whole milliseconds is not
    // settled even with settledNs 0: a listing in the same millisecond as the writes keeps nothing
    await nextClockTick();
  });
  afterEach(() => cleanup());

  it('lists depth first in name order, each run ending at the subfolder whose rows follow', async () => {
    const batches = await collect(new WorkspaceLister().all(root));
    expect(titles(batches)).toEqual(['A', 'A/1.txt', 'A/2.txt', 'A/sub', 'A/sub/x.txt', 'B', 'B/y.txt', 'top.txt']);
    expect(batches.map((batch) => titles([batch]))).toEqual([['A'], ['A/1.txt', 'A/2.txt', 'A/sub'], ['A/sub/x.txt'], ['B'], ['B/y.txt'], ['top.txt']]);
    const rows = batches.flat();
    expect(rows.find((row) => row.title === 'x.txt')!.container).toBe(rows.find((row) => row.title === 'sub')!.id);
    expect(rows.find((row) => row.title === 'A')!.container).toBeNull();
  });

  it('keeps a settled folder seen unchanged twice: the same frozen runs, marked kept, from then on, nothing kept for a tree listed once', async () => {
    const lister = new WorkspaceLister({ settledNs: 0n });
    const first = await collect(lister.all(root));
    for (const batch of first) expect(lister.kept.isKept(batch)).toBe(false);
    const second = await collect(lister.all(root));
    const third = await collect(lister.all(root));
    expect(titles(third)).toEqual(titles(first));
    third.forEach((batch, i) => {
      expect(batch).toBe(second[i]);
      expect(lister.kept.isKept(batch)).toBe(true);
      expect(Object.isFrozen(batch)).toBe(true);
    });
  });

  it('keeps nothing a folder changed too recently to trust its ctime (a change in the same tick would not show)', async () => {
    const lister = new WorkspaceLister();
    const first = await collect(lister.all(root));
    await collect(lister.all(root));
    const third = await collect(lister.all(root));
    expect(titles(third)).toEqual(titles(first));
    for (const batch of third) expect(lister.kept.isKept(batch)).toBe(false);
  });

  it('keeps nothing with a row budget of 0', async () => {
    const lister = new WorkspaceLister({ settledNs: 0n, cachedRows: 0 });
    await collect(lister.all(root));
    await collect(lister.all(root));
    for (const batch of await collect(lister.all(root))) expect(lister.kept.isKept(batch)).toBe(false);
  });

  it.each([
    ['a file added', (r: string) => writeFile(path.join(r, 'A/3.txt'), ''), ['A', 'A/1.txt', 'A/2.txt', 'A/3.txt', 'A/sub', 'A/sub/x.txt', 'B', 'B/y.txt', 'top.txt']],
    ['a file removed', (r: string) => rm(path.join(r, 'A/2.txt')), ['A', 'A/1.txt', 'A/sub', 'A/sub/x.txt', 'B', 'B/y.txt', 'top.txt']],
    ['a file renamed within its folder', (r: string) => rename(path.join(r, 'B/y.txt'), path.join(r, 'B/z.txt')), ['A', 'A/1.txt', 'A/2.txt', 'A/sub', 'A/sub/x.txt', 'B', 'B/z.txt', 'top.txt']],
    ['a file moved between folders', (r: string) => rename(path.join(r, 'A/sub/x.txt'), path.join(r, 'B/x.txt')), ['A', 'A/1.txt', 'A/2.txt', 'A/sub', 'B', 'B/x.txt', 'B/y.txt', 'top.txt']],
    [
      'a file replaced by a folder of the same name',
      async (r: string) => {
        await rm(path.join(r, 'top.txt'));
        await mkdir(path.join(r, 'top.txt'));
        await writeFile(path.join(r, 'top.txt/inner'), '');
      },
      ['A', 'A/1.txt', 'A/2.txt', 'A/sub', 'A/sub/x.txt', 'B', 'B/y.txt', 'top.txt', 'top.txt/inner'],
    ],
    [
      'a folder replaced by another at the same path',
      async (r: string) => {
        await rename(path.join(r, 'B'), path.join(r, 'old-B'));
        await mkdir(path.join(r, 'B'));
        await rm(path.join(r, 'old-B'), { recursive: true });
      },
      ['A', 'A/1.txt', 'A/2.txt', 'A/sub', 'A/sub/x.txt', 'B', 'top.txt'],
    ],
  ])('sees %s after a cached listing', async (_label, change, expected) => {
    const lister = new WorkspaceLister({ settledNs: 0n });
    await collect(lister.all(root));
    // kept from the second listing on
    for (const batch of await collect(lister.all(root))) expect(lister.kept.isKept(batch)).toBe(true);
    await nextClockTick();
    await change(root);
    expect(titles(await collect(lister.all(root)))).toEqual(expected);
  });

  it('lists one folder as its runs', async () => {
    const lister = new WorkspaceLister();
    expect(titles([...(await lister.children(path.join(root, 'A'), 'A'))])).toEqual(['A/1.txt', 'A/2.txt', 'A/sub']);
    expect(titles([...(await lister.children(root, ''))])).toEqual(['A', 'B', 'top.txt']);
  });
});
