// Communities as containers (communities.ts, docs/targets/invenio.md): the user's communities
// at the top, each holding its published records (anyone's), readable like any record; an
// upload into a community is refused with what to do instead.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeConfig } from '../../config.js';
import { MemorySecretStore } from '../../keychain/memory.js';
import type { Target } from '../../target.js';
import { startInvenioEmulator, type InvenioEmulator } from '../../../../test/emulators/invenio/emulator.js';
import { collect, ctx, drain, entriesFrom, writeOptions } from '../../../../test/target-suite/test-entries.js';
import { communityId, createInvenioTarget, recordId } from './index.js';

const TOKEN = 'invenio-token';
let emulator: InvenioEmulator;
let target: Target;

beforeEach(async () => {
  emulator = await startInvenioEmulator();
  target = createInvenioTarget(makeConfig({ dataDir: '/nonexistent' }), new MemorySecretStore(), { defaultUrl: emulator.url, ratePerSecond: 1000, retries: 0, pageSize: 2 });
});
afterEach(() => emulator.close());

function fixture() {
  const mine = emulator.state.addRecord(1, 'My record', { 'm.txt': 'mine' }, { published: true });
  const theirs = emulator.state.addRecord(2, 'A colleague record', { 't.csv': 'a,b' }, { published: true });
  const draft = emulator.state.addRecord(2, 'A colleague draft');
  const lab = emulator.state.addCommunity([1, 2], 'ocean-lab', 'Ocean Lab', [mine, theirs, draft]);
  emulator.state.addCommunity([2], 'other', 'Not mine');
  return { mine, theirs, lab };
}

describe('invenio target: communities', () => {
  it("lists the user's communities at the top, after the records", async () => {
    const { mine, lab } = fixture();
    const top = await collect(target.list(ctx(TOKEN), { container: null }));
    expect(top.map((n) => [n.id, n.title, n.container])).toEqual([
      [recordId(mine.id), 'My record', null],
      [communityId(lab.id), 'Ocean Lab', null],
    ]);
    expect(emulator.state.requests.filter((r) => r.startsWith('GET /api/user/communities?'))).toHaveLength(1);
  });

  it("opens a community: its published records, anyone's, readable with their files", async () => {
    const { mine, theirs, lab } = fixture();
    const inside = await collect(target.list(ctx(TOKEN), { container: communityId(lab.id) }));
    expect(inside.map((n) => [n.id, n.container]).sort()).toEqual([recordId(mine.id), recordId(theirs.id)].sort().map((id) => [id, communityId(lab.id)]));
    expect((await collect(target.list(ctx(TOKEN), { container: recordId(theirs.id) }))).map((n) => n.title)).toEqual(['t.csv']);
    const files = await drain((await target.read(ctx(TOKEN), recordId(theirs.id))).entries);
    expect(files.get('A colleague record/t.csv')?.toString()).toBe('a,b');
  });

  it('describes a community with its slug and page', async () => {
    const { lab } = fixture();
    expect(await target.detail(ctx(TOKEN), communityId(lab.id))).toMatchObject({ kind: 'container', title: 'Ocean Lab', extra: { type: 'community', slug: 'ocean-lab', html_url: `${emulator.url}/communities/ocean-lab` } });
  });

  it('refuses an upload into a community or a read of a whole one, saying what to do', async () => {
    const { lab } = fixture();
    const before = emulator.state.requests.length;
    await expect(target.write(ctx(TOKEN), communityId(lab.id), entriesFrom({ 'a.txt': 'a' }), writeOptions())).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/submit it to the community/) });
    await expect(target.read(ctx(TOKEN), communityId(lab.id))).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/record by record/) });
    expect(emulator.state.requests.length).toBe(before);
  });
});
