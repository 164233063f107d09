import { describe, expect, it } from 'vitest';
import type { ResourceNode } from '../../core/target.js';
import { jsonArrayStream } from '../stream-json.js';
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

  // plain ASCII rows and rows needing escapes or UTF-8 mixed, in runs of one container and not
  const awkwardTitles = ['plain.txt', 'naïve café.csv', 'say "hi".txt', 'back\\slash', 'tab\there', 'nul\u0000', 'emoji \ud83d\ude00', 'lone \udc00', '\u2028\u2029', 'DEL\u007f', '日本語のファイル名.txt', ''];
  const mixed: ResourceNode[] = Array.from({ length: 600 }, (_, i) => ({
    kind: i % 7 === 0 ? 'container' : 'item',
    kind_name: i % 7 === 0 ? 'folder' : 'file',
    id: i % 11 === 5 ? `odd id ${i} "é"/?` : `loc_${Buffer.from(`row ${i}`).toString('base64url')}`,
    container: i % 50 === 0 ? null : i % 13 === 3 ? `other "${i % 3}"` : `loc_${Buffer.from(`folder ${Math.floor(i / 40)}`).toString('base64url')}`,
    title: `${awkwardTitles[i % awkwardTitles.length]}${i % 5 === 0 ? '' : ` ${i}`}`.repeat(i === 77 ? 400 : 1),
  }));

  it('writes rows straight into the buffer with the same bytes as JSON.stringify of each row in UTF-8', () => {
    const write = summaryWriter('http://127.0.0.1:8765', 'local');
    const out = Buffer.alloc(1 << 20);
    let direct = 0;
    for (const node of mixed) {
      const end = write.into!(node, out, 3, out.length);
      const expected = Buffer.from(JSON.stringify(toSummary(node, 'http://127.0.0.1:8765', 'local')), 'utf8');
      if (end >= 0) {
        direct++;
        expect(out.subarray(3, end).equals(expected), `row ${node.title}`).toBe(true);
      } else {
        expect(Buffer.from(write(node), 'utf8').equals(expected)).toBe(true);
      }
    }
    // the fast path is taken for every row with a plain id, whatever its title
    expect(direct).toBe(mixed.filter((node) => /^[A-Za-z0-9_~-]+$/.test(node.id)).length);
  });

  it('answers that it needs room rather than writing past the end it is given', () => {
    const write = summaryWriter('http://127.0.0.1:8765', 'local');
    const node = mixed[1]!;
    const full = Buffer.from(JSON.stringify(toSummary(node, 'http://127.0.0.1:8765', 'local')));
    const out = Buffer.alloc(full.length + 64, 0xee);
    expect(write.into!(node, out, 0, 20)).toBeLessThan(0);
    expect(out.subarray(20).every((byte) => byte === 0xee)).toBe(true);
  });

  it('streams a listing of such rows byte for byte as JSON.stringify of the whole array', async () => {
    async function* batches() {
      for (let i = 0; i < mixed.length; i += 64) yield mixed.slice(i, i + 64);
    }
    const chunks: Buffer[] = [];
    for await (const chunk of await jsonArrayStream(batches(), summaryWriter('http://127.0.0.1:8765', 'local'), 'k')) chunks.push(chunk as Buffer);
    const expected = Buffer.from(JSON.stringify(mixed.map((node) => toSummary(node, 'http://127.0.0.1:8765', 'local'))), 'utf8');
    expect(Buffer.concat(chunks).equals(expected)).toBe(true);
  });
});
