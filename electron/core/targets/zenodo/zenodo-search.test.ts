import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeConfig } from '../../config.js';
import { MemorySecretStore } from '../../keychain/memory.js';
import { SEARCH_PAGE_SIZE } from '../../search.js';
import type { Target } from '../../target.js';
import { startZenodoEmulator, type ZenodoEmulator } from '../../../../test/emulators/zenodo/emulator.js';
import { ctx } from '../../../../test/target-suite/test-entries.js';
import { createZenodoTarget } from './index.js';
import { recordId } from '../invenio/index.js';

let emulator: ZenodoEmulator;
let target: Target;

beforeEach(async () => {
  emulator = await startZenodoEmulator();
  const config = makeConfig({ dataDir: '/nonexistent', remotes: { osfApiUrl: '', githubApiUrl: '', gitlabUrl: '', figshareApiUrl: '', zenodoUrl: emulator.url } });
  target = createZenodoTarget(config, new MemorySecretStore(), { ratePerSecond: 1000, retries: 0 });
});
afterEach(() => emulator.close());

describe('zenodo target: search', () => {
  it("asks Zenodo's index (/api/user/records) for the user's records matching q, drafts and published alike", async () => {
    const draft = emulator.state.addRecord(1, 'Coral survey 2024', { 'reef.csv': 'x' });
    const published = emulator.state.addRecord(1, 'Soil samples', { 'survey-sheet.pdf': 'y' }, { published: true });
    emulator.state.addRecord(1, 'Unrelated', {});
    emulator.state.addRecord(2, 'Survey of somebody else', {});
    const page = await target.search!(ctx('zenodo-token'), { text: 'Survey', page: 1 });
    expect(page).toMatchObject({ method: 'index', next: null });
    expect(page.nodes.map((n) => n.id).sort()).toEqual([recordId(draft.id), recordId(published.id)].sort());
    expect(page.nodes.every((n) => n.kind === 'container' && n.container === null)).toBe(true);
    expect(emulator.state.requests.at(-1)).toBe(`GET /api/user/records?q=Survey&page=1&size=${SEARCH_PAGE_SIZE}&sort=bestmatch`);
  });

  it('offers the next page while pages come back full', async () => {
    for (let i = 0; i < SEARCH_PAGE_SIZE + 2; i++) emulator.state.addRecord(1, `Batch ${i}`, {});
    const first = await target.search!(ctx('zenodo-token'), { text: 'batch', page: 1 });
    expect(first.nodes).toHaveLength(SEARCH_PAGE_SIZE);
    expect(first.next).toBe(2);
    const second = await target.search!(ctx('zenodo-token'), { text: 'batch', page: 2 });
    expect(second.nodes).toHaveLength(2);
    expect(second.next).toBeNull();
  });

  it('refuses a page past the 10,000-result window before sending it', async () => {
    const before = emulator.state.requests.length;
    await expect(target.search!(ctx('zenodo-token'), { text: 'batch', page: 10_000 / SEARCH_PAGE_SIZE + 1 })).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/^Zenodo answers only the first 10000 results/) });
    expect(emulator.state.requests.length).toBe(before);
  });
});
