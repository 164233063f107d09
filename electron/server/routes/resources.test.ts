import { describe, expect, it } from 'vitest';
import type { ResourceNode } from '../../core/target.js';
import { summaryWriter, toSummary } from './resources.js';

describe('summaryWriter', () => {
  const nodes: ResourceNode[] = [
    { kind: 'container', kind_name: 'folder', id: 'loc_U3VydmV5', container: null, title: 'Survey' },
    { kind: 'item', kind_name: 'file', id: 'a b/c.json?#%', container: 'p"q\\r', title: 'naïve "quoted" \\ name\n\u2028.txt' },
    { kind: 'item', kind_name: 'file', id: 'ünï-ćødé', container: 'x', title: '' },
    { kind: 'item', kind_name: 'file', id: 'loc_eA', container: 'x', title: 'lone \ud800 surrogate, pair \ud83d\ude00, tab\t, DEL \u007f' },
    { kind: 'item', kind_name: 'file', id: 'loc_eQ', container: 'p"q\\r', title: 'back in an earlier container' },
    { kind: 'container', kind_name: 'folder', id: 'x', container: null, title: 'top again' },
  ];

  it('writes exactly what JSON.stringify(toSummary(...)) writes, for awkward ids and titles', () => {
    const write = summaryWriter('http://127.0.0.1:8765', 'local');
    for (const node of nodes) {
      const text = write(node);
      expect(text).toBe(JSON.stringify(toSummary(node, 'http://127.0.0.1:8765', 'local')));
      expect(JSON.parse(text)).toEqual(toSummary(node, 'http://127.0.0.1:8765', 'local'));
    }
  });
});
