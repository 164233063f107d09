import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeConfig } from '../../config.js';
import { MemorySecretStore } from '../../keychain/memory.js';
import { SEARCH_PAGE_SIZE } from '../../search.js';
import type { Target } from '../../target.js';
import { startInvenioEmulator, type InvenioEmulator } from '../../../../test/emulators/invenio/emulator.js';
import { ctx } from '../../../../test/target-suite/test-entries.js';
import { createInvenioTarget } from './index.js';
import { recordId } from './ids.js';

let emulator: InvenioEmulator;
let target: Target;

beforeEach(async () => {
  emulator = await startInvenioEmulator();
  target = createInvenioTarget(makeConfig({ dataDir: '/nonexistent' }), new MemorySecretStore(), { defaultUrl: emulator.url, ratePerSecond: 1000, retries: 0 });
});
afterEach(() => emulator.close());

describe('InvenioRDM target: search', () => {
  it("asks the instance's index for the user's records matching q, by title or file name", async () => {
    const byTitle = emulator.state.addRecord(1, 'Coral survey', { 'a.csv': 'a' });
    const byFile = emulator.state.addRecord(1, 'Soil', { 'survey-sheet.pdf': 'b' }, { published: true });
    emulator.state.addRecord(1, 'Surveyor notes');
    emulator.state.addRecord(2, 'Survey of somebody else');
    const page = await target.search!(ctx('invenio-token'), { text: 'survey', page: 1 });
    expect(page).toMatchObject({ method: 'index', next: null });
    expect(page.nodes.map((n) => n.id).sort()).toEqual([recordId(byTitle.id), recordId(byFile.id)].sort());
    expect(emulator.state.requests.at(-1)).toBe(`GET /api/user/records?q=survey&page=1&size=${SEARCH_PAGE_SIZE}&sort=bestmatch`);
  });

  it('pages by the total the index reports', async () => {
    for (let i = 0; i < SEARCH_PAGE_SIZE + 1; i++) emulator.state.addRecord(1, `Batch ${i}`);
    const first = await target.search!(ctx('invenio-token'), { text: 'batch', page: 1 });
    expect(first.nodes).toHaveLength(SEARCH_PAGE_SIZE);
    expect(first.next).toBe(2);
    const second = await target.search!(ctx('invenio-token'), { text: 'batch', page: 2 });
    expect(second.nodes).toHaveLength(1);
    expect(second.next).toBeNull();
  });

  it('refuses a page past the 10,000-result window before sending it', async () => {
    const before = emulator.state.requests.length;
    await expect(target.search!(ctx('invenio-token'), { text: 'batch', page: 10_000 / SEARCH_PAGE_SIZE + 1 })).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/^InvenioRDM answers only the first 10000 results/) });
    expect(emulator.state.requests.length).toBe(before);
  });
});
