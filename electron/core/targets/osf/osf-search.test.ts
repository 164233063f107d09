import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SEARCH_PAGE_SIZE } from '../../search.js';
import { nodeId } from './ids.js';
import { osfFixture, type OsfFixture } from './test-helpers.js';

describe('OSF target: search (emulator over HTTP)', () => {
  let f: OsfFixture;
  let study: string;
  let component: string;

  beforeAll(async () => {
    f = await osfFixture();
    const s = f.emu.state;
    study = s.addNode({ title: 'Reading Survey', owner: f.userId }).id;
    component = s.addNode({ title: 'survey analysis', owner: f.userId, parent: study }).id;
    s.addNode({ title: 'Unrelated', owner: f.userId });
    const other = s.addUser('Other');
    s.addNode({ title: 'Private survey of someone else', owner: other.id });
    for (let i = 0; i < SEARCH_PAGE_SIZE + 3; i++) s.addNode({ title: `Batch ${i}`, owner: f.userId });
  });
  afterAll(() => f.emu.close());

  it("finds the user's projects and components by title, case-insensitively, through OSF's filter", async () => {
    const page = await f.target.search!(f.ctx, { text: 'SURVEY', page: 1 });
    expect(page.method).toBe('index');
    expect(page.next).toBeNull();
    expect(page.nodes.map((n) => [n.title, n.container]).sort()).toEqual([
      ['Reading Survey', null],
      ['survey analysis', nodeId(study)],
    ]);
    expect(page.nodes.find((n) => n.title === 'survey analysis')!.id).toBe(nodeId(component));
    const sent = f.emu.state.requests.filter((r) => r.url.includes('/users/me/nodes/')).at(-1)!;
    expect(new URL(sent.url, 'http://x').searchParams.get('filter[title][icontains]')).toBe('SURVEY');
  });

  it('pages by fifty', async () => {
    const first = await f.target.search!(f.ctx, { text: 'batch', page: 1 });
    expect(first.nodes).toHaveLength(SEARCH_PAGE_SIZE);
    expect(first.next).toBe(2);
    const second = await f.target.search!(f.ctx, { text: 'batch', page: 2 });
    expect(second.nodes).toHaveLength(3);
    expect(second.next).toBeNull();
    expect(new Set([...first.nodes, ...second.nodes].map((n) => n.id)).size).toBe(SEARCH_PAGE_SIZE + 3);
  });
});
