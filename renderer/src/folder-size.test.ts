import { describe, expect, it } from 'vitest';
import type { ResourceSummary } from '../../shared/api.js';
import { folderSize } from './folder-size.js';

const file = (id: string, size: number | null): ResourceSummary => ({ kind: 'item', kind_name: 'file', id, container: '', title: id, detail: '', size });
const folder = (id: string): ResourceSummary => ({ kind: 'container', kind_name: 'folder', id, container: '', title: id, detail: '', size: null });

const TREE: Record<string, ResourceSummary[]> = {
  top: [file('a', 10), folder('sub'), file('b', null)],
  sub: [file('c', 5), folder('deeper')],
  deeper: [file('d', 100)],
};

describe('folderSize', () => {
  it('adds every file all the way down and counts the ones of unknown size apart', async () => {
    const seen: number[] = [];
    const size = await folderSize(async (id) => TREE[id]!, 'top', new AbortController().signal, (s) => seen.push(s.bytes));
    expect(size).toEqual({ bytes: 115, files: 4, folders: 2, unknown: 1 });
    expect(seen.at(-1)).toBe(115);
  });

  it('fails when a level cannot be listed, rather than answering a smaller total', async () => {
    const list = async (id: string) => {
      if (id === 'deeper') throw new Error('listing refused');
      return TREE[id]!;
    };
    await expect(folderSize(list, 'top', new AbortController().signal)).rejects.toThrow('listing refused');
  });
});
