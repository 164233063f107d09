import { describe, expect, it } from 'vitest';
import type { ResourceSummary } from '../../../shared/api.js';
import { summary, detail } from '../test-support.js';
import { arrangeRows, matchesFilter } from './arrange.js';
import { createPaneStore } from './pane.js';
import { pathText, resolvePath } from './path.js';

const tree: Record<string, ResourceSummary[]> = {
  None: [summary('d1', 'data', 'container'), summary('f1', 'readme.md')],
  d1: [summary('d2', 'raw', 'container', 'd1'), summary('f2', 'b.csv', 'item', 'd1')],
  d2: [summary('f3', 'deep.txt', 'item', 'd2')],
};

function fakeApi(delays: Record<string, number> = {}) {
  const calls: string[] = [];
  return {
    calls,
    children: async (target: string, container: string | null) => {
      const key = container ?? 'None';
      calls.push(`${target}:${key}`);
      await new Promise((r) => setTimeout(r, delays[key] ?? 0));
      if (target === 'osf') throw Object.assign(new Error('The OSF token is invalid or expired.'), { code: 'unauthorized' });
      return tree[key] ?? [];
    },
  };
}

describe('pane store navigation', () => {
  it('opens folders in place, goes up to the folder it came from, and jumps by breadcrumb', async () => {
    const api = fakeApi();
    const pane = createPaneStore('left', api);
    await pane.getState().setTarget('local');
    expect(pane.getState().items.map((i) => i.title)).toEqual(['data', 'readme.md']);
    await pane.getState().open({ id: 'd1', title: 'data' });
    await pane.getState().open({ id: 'd2', title: 'raw' });
    expect(pane.getState().trail.map((c) => c.title)).toEqual(['data', 'raw']);
    expect(pane.getState().items.map((i) => i.title)).toEqual(['deep.txt']);
    await pane.getState().up();
    expect(pane.getState().trail.map((c) => c.title)).toEqual(['data']);
    expect(pane.getState().cursor).toBe('d2');
    await pane.getState().goToCrumb(-1);
    expect(pane.getState().trail).toEqual([]);
    expect(api.calls).toEqual(['local:None', 'local:d1', 'local:d2', 'local:d1', 'local:None']);
  });

  it('ignores a slow answer for a location the user already left', async () => {
    const api = fakeApi({ d1: 30 });
    const pane = createPaneStore('left', api);
    await pane.getState().setTarget('local');
    const slow = pane.getState().open({ id: 'd1', title: 'data' });
    await pane.getState().goToCrumb(-1);
    await slow;
    expect(pane.getState().trail).toEqual([]);
    expect(pane.getState().items.map((i) => i.id)).toEqual(['d1', 'f1']);
  });

  it('keeps the error sentence and its code', async () => {
    const pane = createPaneStore('right', fakeApi());
    await pane.getState().setTarget('osf');
    expect(pane.getState().status).toBe('error');
    expect(pane.getState().error).toBe('The OSF token is invalid or expired.');
    expect(pane.getState().errorCode).toBe('unauthorized');
  });

  it('selects ranges and toggles', async () => {
    const pane = createPaneStore('left', fakeApi());
    const ordered = ['a', 'b', 'c', 'd'];
    pane.getState().select('b', 'replace', ordered);
    pane.getState().select('d', 'range', ordered);
    expect([...pane.getState().selection]).toEqual(['b', 'c', 'd']);
    pane.getState().select('c', 'toggle', ordered);
    expect([...pane.getState().selection].sort()).toEqual(['b', 'd']);
  });

  it('flips the sort direction when the same column is chosen again', () => {
    const pane = createPaneStore('left', fakeApi());
    pane.getState().setSort('size');
    expect(pane.getState().sort).toEqual({ key: 'size', dir: 'asc' });
    pane.getState().setSort('size');
    expect(pane.getState().sort).toEqual({ key: 'size', dir: 'desc' });
  });
});

describe('arranging rows', () => {
  const items = [
    summary('1', 'file10.txt'),
    summary('2', 'file2.txt'),
    summary('3', 'Zeta', 'container'),
    summary('4', 'alpha', 'container'),
    summary('5', 'nodetail.bin'),
  ];
  const details = new Map([
    ['1', detail('1', 'file10.txt', 500, '2024-01-01T00:00:00.000000Z')],
    ['2', detail('2', 'file2.txt', 20, '2025-01-01T00:00:00.000000Z')],
  ]);
  const lookup = (id: string) => details.get(id);

  it('puts folders first and sorts names naturally', () => {
    expect(arrangeRows(items, '', { key: 'title', dir: 'asc' }).map((r) => r.title)).toEqual([
      'alpha',
      'Zeta',
      'file2.txt',
      'file10.txt',
      'nodetail.bin',
    ]);
    expect(arrangeRows(items, '', { key: 'title', dir: 'desc' }).map((r) => r.title)).toEqual([
      'Zeta',
      'alpha',
      'nodetail.bin',
      'file10.txt',
      'file2.txt',
    ]);
  });

  it('sorts by size and date from the listing rows, unknown last in both directions', () => {
    const sized = items.map((item) => {
      const d = lookup(item.id);
      return { ...item, size: d ? (d.extra.size as number) : null, date_modified: d?.date_modified ?? null };
    });
    const bySizeDesc = arrangeRows(sized, '', { key: 'size', dir: 'desc' }).map((r) => r.title);
    expect(bySizeDesc.slice(2)).toEqual(['file10.txt', 'file2.txt', 'nodetail.bin']);
    const bySizeAsc = arrangeRows(sized, '', { key: 'size', dir: 'asc' }).map((r) => r.title);
    expect(bySizeAsc.slice(2)).toEqual(['file2.txt', 'file10.txt', 'nodetail.bin']);
    const byDate = arrangeRows(sized, '', { key: 'modified', dir: 'desc' }).map((r) => r.title);
    expect(byDate.slice(2)).toEqual(['file2.txt', 'file10.txt', 'nodetail.bin']);
  });

  it('compares dates as instants, whatever their zone or precision', () => {
    const rows = [
      { ...summary('a', 'late-27th.txt'), date_modified: '2025-12-27T23:30:00-02:00' }, // 28 Dec 01:30 UTC
      { ...summary('b', 'early-28th.txt'), date_modified: '2025-12-28T00:10:00.000000Z' },
      { ...summary('c', 'dec-27.txt'), date_modified: '2025-12-27T12:00:00.123456Z' },
    ];
    expect(arrangeRows(rows, '', { key: 'modified', dir: 'desc' }).map((r) => r.id)).toEqual(['a', 'b', 'c']);
  });

  it('filters by substring or wildcard, case-insensitively', () => {
    expect(arrangeRows(items, 'FILE', { key: 'title', dir: 'asc' }).map((r) => r.id)).toEqual(['2', '1']);
    expect(arrangeRows(items, 'file?.txt', { key: 'title', dir: 'asc' }).map((r) => r.id)).toEqual(['2']);
    expect(matchesFilter('a.b(c)', 'a.b(')).toBe(true);
    expect(matchesFilter('axb', 'a.b')).toBe(false);
  });
});

describe('pane history and typed paths', () => {
  it('goes back and forward as a browser does; a new move forgets Forward', async () => {
    const pane = createPaneStore('left', fakeApi());
    const at = () => pane.getState().trail.map((c) => c.title).join('/');
    await pane.getState().setTarget('local');
    await pane.getState().open({ id: 'd1', title: 'data' });
    await pane.getState().open({ id: 'd2', title: 'raw' });
    await pane.getState().goBack();
    expect(at()).toBe('data');
    await pane.getState().goBack();
    expect(at()).toBe('');
    await pane.getState().goForward();
    expect(at()).toBe('data');
    await pane.getState().up();
    expect(pane.getState().forward).toEqual([]);
    await pane.getState().refresh(); // not a move
    await pane.getState().goBack();
    expect(at()).toBe('data');
  });

  it('resolves a typed path level by level, or says which part is missing', async () => {
    const api = fakeApi();
    expect(await resolvePath(api, 'local', 'Local folders', '/Data/raw/')).toEqual({
      trail: [
        { id: 'd1', title: 'data' },
        { id: 'd2', title: 'raw' },
      ],
    });
    expect(await resolvePath(api, 'local', 'Local folders', 'data/nope')).toEqual({ error: 'There is no “nope” in data.' });
    expect(await resolvePath(api, 'local', 'Local folders', 'readme.md')).toEqual({
      error: '“readme.md” in Local folders is a file, not a folder.',
    });
    expect(pathText([{ id: 'd1', title: 'data' }])).toBe('/data');
  });
});

describe('sorting by size or date', () => {
  it('asks for the level with sizes, also when the sort changed while a plain listing was on its way', async () => {
    const calls: boolean[] = [];
    const api = {
      children: async (_t: string, _c: string | null, _s?: AbortSignal, withSizes = false) => {
        calls.push(withSizes);
        await new Promise((r) => setTimeout(r, 5));
        return [{ ...summary('f1', 'a.txt'), ...(withSizes ? { size: 1, date_modified: null } : {}) }];
      },
    };
    const pane = createPaneStore('left', api);
    const loading = pane.getState().setTarget('local');
    pane.getState().setSort('size'); // before the listing is here
    await loading;
    await new Promise((r) => setTimeout(r, 20));
    expect(calls).toEqual([false, true]);
    expect(pane.getState().sized).toBe(true);
    await pane.getState().open({ id: 'd', title: 'd' }); // sorted by size: the next level comes with sizes at once
    expect(calls.at(-1)).toBe(true);
  });
});
