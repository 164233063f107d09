// "What Ferry sends" to Zenodo: the requests of a listing, downloads (a draft's file and a
// published record's), an upload into a draft, into a published record (a new version) and a
// new top-level upload, recorded by the emulator at Ferry's default rate, each checked
// against docs/targets/zenodo.md.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeConfig } from '../../config.js';
import { MemorySecretStore } from '../../keychain/memory.js';
import { startZenodoEmulator, type ZenodoEmulator, type ZenodoState } from '../../../../test/emulators/zenodo/emulator.js';
import { busiestWindow, evidenceRows, withoutEvidence } from '../../../../test/emulators/shared/evidence-table.js';
import { collect, ctx, drain, entriesFrom, writeOptions } from '../../../../test/target-suite/test-entries.js';
import { fileId, recordId } from '../invenio/index.js';
import { createZenodoTarget } from './index.js';

/** Zenodo allows 100 requests a minute per token; Ferry's default is 1 a second. */
const ZENODO_PER_MINUTE = 100;
let emulator: ZenodoEmulator;
let sent: ZenodoState['sent'] = [];

beforeAll(async () => {
  emulator = await startZenodoEmulator();
  const draft = emulator.state.addRecord(1, 'Draft', { 'd.txt': 'draft' });
  const published = emulator.state.addRecord(1, 'Published', { 'p.txt': 'published' }, { published: true });
  // Ferry's defaults (zenodo/index.ts), pointed at the emulator
  const target = createZenodoTarget(makeConfig({ dataDir: '/nonexistent', remotes: { ...makeConfig().remotes, zenodoUrl: emulator.url } }), new MemorySecretStore());
  const c = ctx('zenodo-token');

  await collect(target.list(c, { container: null }));
  await collect(target.list(c, { container: recordId(draft.id) }));
  await drain((await target.read(c, fileId(draft.id, 'd.txt'))).entries);
  await drain((await target.read(c, fileId(published.id, 'p.txt'))).entries);
  await target.write(c, recordId(draft.id), entriesFrom({ 'up.txt': 'up' }), writeOptions('ignore'));
  await target.write(c, recordId(published.id), entriesFrom({ 'v2.txt': 'v2' }), writeOptions('ignore'));
  await target.write(c, null, entriesFrom({ 'Top/': null, 'Top/x.txt': 'x' }), writeOptions('ignore'));
  sent = [...emulator.state.sent];
}, 90_000);
afterAll(() => emulator?.close());

describe('What Ferry sends to Zenodo', () => {
  it('every request has a row of evidence in docs/targets/zenodo.md', () => {
    expect(sent.length).toBeGreaterThan(15);
    expect(withoutEvidence(evidenceRows('zenodo'), sent.map((r) => ({ method: r.method, host: 'zenodo.org', path: r.path.split('?')[0]! })))).toEqual([]);
  });

  it('uses only the records API, never the legacy deposit API', () => {
    expect(sent.filter((r) => /\/api\/(deposit|files)\//.test(r.path))).toEqual([]);
  });

  it("reads a published record's files from the record, never from a /draft/ link", () => {
    const published = [...emulator.state.records.values()].find((r) => r.published)!;
    expect(sent.map((r) => `${r.method} ${r.path}`)).toContain(`GET /api/records/${published.id}/files/p.txt/content`);
    expect(sent.filter((r) => r.path.startsWith(`/api/records/${published.id}/draft/files/`))).toEqual([]);
  });

  it('sends the token as a Bearer header on every request, never in a URL', () => {
    expect(sent.every((r) => r.headers.authorization === 'Bearer zenodo-token')).toBe(true);
    expect(sent.filter((r) => /access_token|token=/i.test(r.path))).toEqual([]);
  });

  it("stays under Zenodo's 100 requests a minute: at most one a second", () => {
    expect(busiestWindow(sent.map((r) => r.at))).toBeLessThanOrEqual(1);
    expect(busiestWindow(sent.map((r) => r.at), 60_000)).toBeLessThanOrEqual(ZENODO_PER_MINUTE);
  });
});
