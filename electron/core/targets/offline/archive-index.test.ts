import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../limits.js';
import type { ResourceNode } from '../../target.js';
import { rawZip } from '../../zip/testing/raw-zip.js';
import { indexArchive, type ArchiveIndex } from './archive-index.js';

// The recursive listings (nodes and columns) come from one depth-first order of the payload,
// made once and kept with the index. They must be what a reader listing folder after folder
// would see: each folder's members in code-point order, each folder followed by everything
// below it. The reference below is that reader, built on the non-recursive listing alone.

const ARCHIVE = 'A';

function nodes(index: ArchiveIndex, folder: string, folderId: string, recursive: boolean, batchSize = 3): ResourceNode[] {
  return [...index.nodeBatches(ARCHIVE, folder, folderId, recursive, batchSize)].flat();
}

function columns(index: ArchiveIndex, batchSize = 3): ResourceNode[] {
  const rows: ResourceNode[] = [];
  for (const batch of index.columnBatches(ARCHIVE, batchSize)) {
    expect(batch.count).toBeLessThanOrEqual(batchSize);
    for (let r = 0; r < batch.count; r++) rows.push(batch.node(r));
  }
  return rows;
}

/** A folder's members, then each sub-folder's listing right after its own row: folder by folder, with an explicit stack. */
function reference(index: ArchiveIndex, folder: string, folderId: string): ResourceNode[] {
  const out: ResourceNode[] = [];
  const pending: { path: string; id: string; rows: ResourceNode[]; next: number }[] = [{ path: folder, id: folderId, rows: nodes(index, folder, folderId, false), next: 0 }];
  while (pending.length > 0) {
    const top = pending[pending.length - 1]!;
    if (top.next === top.rows.length) {
      pending.pop();
      continue;
    }
    const row = top.rows[top.next++]!;
    out.push(row);
    if (row.kind === 'container') {
      const childPath = top.path === '' ? row.title : `${top.path}/${row.title}`;
      pending.push({ path: childPath, id: row.id, rows: nodes(index, childPath, row.id, false), next: 0 });
    }
  }
  return out;
}

const idOf = (entryPath: string) => `${ARCHIVE}-${Buffer.from(entryPath, 'utf8').toString('base64url')}`;

describe('ArchiveIndex listing order', () => {
  let dir: string;
  const write = async (name: string, names: string[]) => {
    const file = path.join(dir, name);
    await writeFile(file, rawZip(names.map((entry) => ({ name: entry }))));
    const index = await indexArchive(file, DEFAULT_LIMITS);
    expect(index.damage).toBeNull();
    return index;
  };

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-archive-index-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const mixed = [
    'z.txt',
    'b/',
    'b/y/deep/er/most.txt',
    'b/a.txt',
    'b/é/ü"q.txt',
    'b/say "hi".txt',
    'b.txt',
    'b/y/x.txt',
    'a',
    'c/',
    'c/',
    'c/empty/',
    'c/d/e/f/g/',
    'c/d/z',
    'c/d/e/y',
    'm/1',
    'm/10',
    'm/2/',
    'm/2/3',
  ];

  it('lists the payload depth first, each folder sorted, as folder-by-folder listings would, in nodes and in columns alike', async () => {
    const index = await write('mixed.zip', mixed);
    const all = nodes(index, '', ARCHIVE, true);
    expect(all).toEqual(reference(index, '', ARCHIVE));
    expect(columns(index)).toEqual(all);
    // the same rows however they are batched, and again from the kept order
    expect(nodes(index, '', ARCHIVE, true, 1000)).toEqual(all);
    expect(columns(index, 1)).toEqual(all);
    expect(all.map((row) => row.title)).toEqual([
      'a',
      'b',
      'a.txt',
      'say "hi".txt',
      'y',
      'deep',
      'er',
      'most.txt',
      'x.txt',
      'é',
      'ü"q.txt',
      'b.txt',
      'c',
      'd',
      'e',
      'f',
      'g',
      'y',
      'z',
      'empty',
      'm',
      '1',
      '10',
      '2',
      '3',
      'z.txt',
    ]);
    expect(all.find((row) => row.title === 'most.txt')!.container).toBe(idOf('b/y/deep/er'));
    expect(all.find((row) => row.title === 'x.txt')!.container).toBe(idOf('b/y'));
    expect(all.find((row) => row.title === 'é')!.container).toBe(idOf('b'));
    expect(all.find((row) => row.title === 'z.txt')!.container).toBe(ARCHIVE);
  });

  it('lists any folder recursively as the payload listing shows it', async () => {
    const index = await write('folders.zip', mixed);
    const all = nodes(index, '', ARCHIVE, true);
    for (const folder of ['b', 'b/y', 'b/y/deep', 'c', 'c/d', 'c/empty', 'm']) {
      const folderId = `F-${folder}`;
      const rows = nodes(index, folder, folderId, true);
      expect(rows, folder).toEqual(reference(index, folder, folderId));
      // in the payload listing: the rows right after the folder's own, its id as their container
      const at = all.findIndex((row) => row.id === idOf(folder));
      const inPayload = all.slice(at + 1, at + 1 + rows.length).map((row) => (row.container === idOf(folder) ? { ...row, container: folderId } : row));
      expect(rows, folder).toEqual(inPayload);
    }
    expect(nodes(index, 'c/empty', 'F', true)).toEqual([]);
    expect(nodes(index, 'nowhere', 'F', true)).toEqual([]);
  });

  it('walks a payload nested 1,500 folders deep without recursion', async () => {
    const deep = Array.from({ length: 1_500 }, () => 'd').join('/');
    const index = await write('deep.zip', [`${deep}/f.txt`, 'top.txt']);
    const all = nodes(index, '', ARCHIVE, true, 1000);
    expect(all).toHaveLength(1_502);
    expect(all.at(-2)!.title).toBe('f.txt');
    expect(all.at(-1)!).toMatchObject({ title: 'top.txt', container: ARCHIVE });
    expect(columns(index, 1000)).toEqual(all);
  });

  it('lists a flat payload and an empty one', async () => {
    const flat = await write('flat.zip', ['c', 'a', 'b']);
    expect(nodes(flat, '', ARCHIVE, true).map((row) => row.title)).toEqual(['a', 'b', 'c']);
    expect(columns(flat)).toEqual(nodes(flat, '', ARCHIVE, false));
    const empty = await write('empty.zip', []);
    expect(nodes(empty, '', ARCHIVE, true)).toEqual([]);
    expect(columns(empty)).toEqual([]);
  });
});
