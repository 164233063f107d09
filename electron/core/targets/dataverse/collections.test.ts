// Collections ("dataverses") as containers (collections.ts, docs/targets/dataverse.md): the
// user's collections at the top, each holding its sub-collections and the datasets the user
// may see; an upload into one makes a new dataset there.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeConfig } from '../../config.js';
import { MemorySecretStore } from '../../keychain/memory.js';
import type { Target } from '../../target.js';
import { startDataverseEmulator, type DataverseEmulator } from '../../../../test/emulators/dataverse/emulator.js';
import { collect, ctx, entriesFrom, writeOptions } from '../../../../test/target-suite/test-entries.js';
import { createDataverseTarget } from './index.js';
import { collectionId, datasetId } from './ids.js';

const TOKEN = 'dv-token-1111';
let emulator: DataverseEmulator;
let target: Target;

beforeEach(async () => {
  emulator = await startDataverseEmulator();
  target = createDataverseTarget(makeConfig({ dataDir: '/nonexistent' }), new MemorySecretStore(), { defaultUrl: emulator.url, ratePerSecond: 1000, retries: 0, journalDir: null });
});
afterEach(() => emulator.close());

const requests = (pattern: RegExp) => emulator.state.requests.filter((r) => pattern.test(`${r.method} ${r.path}`));

function fixture() {
  const lab = emulator.state.addCollection(1, 'lab', 'Ocean Lab');
  const sub = emulator.state.addCollection(1, 'lab-cruises', 'Cruises', 'lab');
  emulator.state.addCollection(2, 'other', 'Not mine');
  const mine = emulator.state.addDataset(1, 'Lab dataset', { 'a.txt': 'a' }, { dataverse: 'lab' });
  const released = emulator.state.addDataset(2, 'Released by a colleague', {}, { dataverse: 'lab', released: true });
  emulator.state.addDataset(2, "A colleague's draft", {}, { dataverse: 'lab' });
  return { lab, sub, mine, released };
}

describe('dataverse target: collections', () => {
  it("lists the user's collections at the top, after the datasets, as containers", async () => {
    const { lab, sub, mine } = fixture();
    const top = await collect(target.list(ctx(TOKEN), { container: null }));
    expect(top[0]).toMatchObject({ id: datasetId(mine.id), title: 'Lab dataset' });
    expect(top.slice(1).map((n) => [n.id, n.title]).sort()).toEqual([[collectionId(lab.id), 'Ocean Lab'], [collectionId(sub.id), 'Cruises']].sort());
    expect(top.every((n) => n.kind === 'container' && n.container === null)).toBe(true);
    expect(requests(/mydata\/retrieve.*dvobject_types=Dataverse/)).toHaveLength(1);
  });

  it('opens a collection: its sub-collections and the datasets the user may see, titled from their versions', async () => {
    const { lab, sub, mine, released } = fixture();
    const children = await collect(target.list(ctx(TOKEN), { container: collectionId(lab.id) }));
    expect(children.map((n) => [n.id, n.title, n.container])).toEqual([
      [collectionId(sub.id), 'Cruises', collectionId(lab.id)],
      [datasetId(mine.id), 'Lab dataset', collectionId(lab.id)],
      [datasetId(released.id), 'Released by a colleague', collectionId(lab.id)],
    ]);
    // /contents names no dataset: one version read each, without its files
    expect(requests(/^GET \/api\/dataverses\/\d+\/contents$/)).toHaveLength(1);
    expect(requests(/versions\/:latest\?excludeFiles=true$/)).toHaveLength(2);
    // a dataset found there opens as any other
    expect((await collect(target.list(ctx(TOKEN), { container: datasetId(mine.id) }))).map((n) => n.title)).toEqual(['a.txt']);
  });

  it('describes a collection with its alias and page', async () => {
    const { lab } = fixture();
    const detail = await target.detail(ctx(TOKEN), collectionId(lab.id));
    expect(detail).toMatchObject({ kind: 'container', title: 'Ocean Lab', extra: { type: 'collection', alias: 'lab', html_url: `${emulator.url}/dataverse/lab` } });
  });

  it('an upload into a collection makes a new draft dataset in it', async () => {
    const { lab } = fixture();
    const outcome = await target.write(ctx(TOKEN), collectionId(lab.id), entriesFrom({ 'Cruise 7/': null, 'Cruise 7/ctd.txt': 'ctd' }), writeOptions());
    expect(outcome).toMatchObject({ created: ['Cruise 7/ctd.txt'], fileErrors: [], newResource: { title: 'Cruise 7' } });
    const made = emulator.state.datasets.get(Number(outcome.newResource!.id.slice(1)))!;
    expect(made.dataverse).toBe('lab');
    expect(requests(new RegExp(`^POST /api/dataverses/${lab.id}/datasets$`))).toHaveLength(1);
  });

  it('refuses to read a whole collection, saying what to do instead', async () => {
    const { lab } = fixture();
    await expect(target.read(ctx(TOKEN), collectionId(lab.id))).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/dataset by dataset/) });
  });
});
