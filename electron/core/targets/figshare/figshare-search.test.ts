import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeConfig } from '../../config.js';
import { FerryError } from '../../errors.js';
import { MemorySecretStore } from '../../keychain/memory.js';
import { SEARCH_PAGE_SIZE } from '../../search.js';
import type { Target } from '../../target.js';
import { startFigshareEmulator, type FigshareEmulator } from '../../../../test/emulators/figshare/emulator.js';
import { ctx } from '../../../../test/target-suite/test-entries.js';
import { createFigshareTarget } from './index.js';

let emulator: FigshareEmulator;
let target: Target;

beforeEach(async () => {
  emulator = await startFigshareEmulator();
  const config = makeConfig({ dataDir: '/nonexistent', remotes: { osfApiUrl: '', githubApiUrl: '', gitlabUrl: '', zenodoUrl: '', figshareApiUrl: emulator.url } });
  target = createFigshareTarget(config, new MemorySecretStore(), { ratePerSecond: 1000, retries: 0, downloadUrl: emulator.downloadUrl });
});
afterEach(() => emulator.close());

describe('figshare target: search', () => {
  it("sends POST /account/articles/search and answers the account's matching items, projects kept as containers", async () => {
    const project = emulator.state.addProject(1, 'Reef project');
    emulator.state.addArticle(1, 'Coral survey', project.id);
    emulator.state.addArticle(1, 'Survey sheets', null);
    emulator.state.addArticle(1, 'Unrelated', null);
    emulator.state.addArticle(2, 'Survey of somebody else', null);
    const page = await target.search!(ctx('figshare-token'), { text: 'survey', page: 1 });
    expect(page).toMatchObject({ method: 'index', next: null });
    const titles = new Map(page.nodes.map((n) => [n.title, n]));
    expect([...titles.keys()].sort()).toEqual(['Coral survey', 'Survey sheets']);
    const listed = new Map<string, unknown>();
    for await (const node of target.list(ctx('figshare-token'))) listed.set(node.id, node);
    // the same ids and containers as the listing gives them, so detail and download work
    expect(listed.get(titles.get('Coral survey')!.id)).toEqual(titles.get('Coral survey'));
    expect(listed.get(titles.get('Survey sheets')!.id)).toEqual(titles.get('Survey sheets'));
    expect(titles.get('Coral survey')!.container).not.toBeNull();
    const sent = emulator.state.exchanges.filter((e) => e.path.endsWith('/account/articles/search'));
    expect(sent.map((e) => e.method)).toEqual(['POST']);
  });

  it('pages while pages come back full, and refuses what figshare calls invalid before sending it', async () => {
    for (let i = 0; i < SEARCH_PAGE_SIZE + 1; i++) emulator.state.addArticle(1, `Batch item ${i}`, null);
    const first = await target.search!(ctx('figshare-token'), { text: 'batch', page: 1 });
    expect([first.nodes.length, first.next]).toEqual([SEARCH_PAGE_SIZE, 2]);
    const second = await target.search!(ctx('figshare-token'), { text: 'batch', page: 2 });
    expect([second.nodes.length, second.next]).toEqual([1, null]);
    const before = emulator.state.exchanges.length;
    const short = await target.search!(ctx('figshare-token'), { text: 'abc', page: 1 }).catch((e: unknown) => e);
    expect(short).toBeInstanceOf(FerryError);
    expect((short as FerryError).status).toBe(400);
    expect((short as FerryError).message).toMatch(/at least 4 characters/);
    expect(emulator.state.exchanges.length).toBe(before);
  });
});
