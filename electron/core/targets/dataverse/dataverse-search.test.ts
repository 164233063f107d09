import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeConfig } from '../../config.js';
import { MemorySecretStore } from '../../keychain/memory.js';
import { SEARCH_PAGE_SIZE } from '../../search.js';
import type { Target } from '../../target.js';
import { startDataverseEmulator, type DataverseEmulator } from '../../../../test/emulators/dataverse/emulator.js';
import { ctx } from '../../../../test/target-suite/test-entries.js';
import { createDataverseTarget } from './index.js';
import { datasetId } from './ids.js';

const TOKEN = 'dv-token-1111';
let emulator: DataverseEmulator;
let target: Target;

beforeEach(async () => {
  emulator = await startDataverseEmulator();
  target = createDataverseTarget(makeConfig({ dataDir: '/nonexistent' }), new MemorySecretStore(), { defaultUrl: emulator.url, ratePerSecond: 1000, retries: 0, journalDir: null });
});
afterEach(() => emulator.close());

describe('Dataverse target: search', () => {
  it("finds the user's datasets through My Data's search term, drafts and published alike", async () => {
    const draft = emulator.state.addDataset(1, 'Coral survey', { 'a.csv': 'a' });
    const released = emulator.state.addDataset(1, 'Survey of soils', {}, { released: true });
    emulator.state.addDataset(1, 'Unrelated');
    emulator.state.addDataset(2, 'Survey of somebody else');
    const page = await target.search!(ctx(TOKEN), { text: 'survey', page: 1 });
    expect(page).toMatchObject({ method: 'index', next: null });
    expect(page.nodes.map((n) => n.id).sort()).toEqual([datasetId(draft.id), datasetId(released.id)].sort());
    const sent = emulator.state.requests.filter((r) => r.path.startsWith('/api/mydata/retrieve')).at(-1)!;
    expect(new URL(sent.path, 'http://x').searchParams.get('mydata_search_term')).toBe('survey');
    expect(emulator.state.requests.some((r) => r.path.startsWith('/api/search'))).toBe(false);
  });

  it('reads five My Data pages of ten per page of fifty', async () => {
    for (let i = 0; i < SEARCH_PAGE_SIZE + 4; i++) emulator.state.addDataset(1, `Batch ${i}`);
    const first = await target.search!(ctx(TOKEN), { text: 'batch', page: 1 });
    expect([first.nodes.length, first.next]).toEqual([SEARCH_PAGE_SIZE, 2]);
    const second = await target.search!(ctx(TOKEN), { text: 'batch', page: 2 });
    expect([second.nodes.length, second.next]).toEqual([4, null]);
    expect(new Set([...first.nodes, ...second.nodes].map((n) => n.id)).size).toBe(SEARCH_PAGE_SIZE + 4);
  });
});
