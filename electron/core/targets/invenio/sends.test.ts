import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeConfig } from '../../config.js';
import { MemorySecretStore } from '../../keychain/memory.js';
import { startInvenioEmulator, type InvenioEmulator, type InvenioState } from '../../../../test/emulators/invenio/emulator.js';
import { collect, ctx, drain, entriesFrom, writeOptions } from '../../../../test/target-suite/test-entries.js';
import { createInvenioTarget } from './index.js';
import { recordId } from './ids.js';

/**
 * What Ferry sends to an InvenioRDM instance, checked against docs/targets/invenio.md: one pass
 * through listing, reading, uploading into a draft and into a published record, updating and
 * creating, then assertions over everything the emulator recorded.
 */
const TOKEN = 'invenio-token';
let emulator: InvenioEmulator;
let sent: InvenioState['sent'];
let draftId: string;
let publishedId: string;

beforeAll(async () => {
  emulator = await startInvenioEmulator();
  const target = createInvenioTarget(makeConfig({ dataDir: '/nonexistent' }), new MemorySecretStore(), { defaultUrl: emulator.url, ratePerSecond: 1000, retries: 0, pageSize: 25 });
  const draft = emulator.state.addRecord(1, 'Draft', { 'keep.txt': 'keep' });
  const published = emulator.state.addRecord(1, 'Published', { 'old.txt': 'old' }, { published: true });
  draftId = draft.id;
  publishedId = published.id;
  await target.write(ctx(TOKEN), recordId(draft.id), entriesFrom({ 'raw/a.csv': '1,2', 'keep.txt': 'changed' }), writeOptions('update'));
  await target.write(ctx(TOKEN), recordId(published.id), entriesFrom({ 'new.txt': 'new' }), writeOptions());
  await target.write(ctx(TOKEN), null, entriesFrom({ 'Fresh/': null, 'Fresh/f.txt': 'f' }), writeOptions());
  await collect(target.list(ctx(TOKEN)));
  await drain((await target.read(ctx(TOKEN), recordId(draft.id))).entries);
  sent = emulator.state.sent;
});
afterAll(() => emulator.close());

const requests = (pattern: RegExp) => sent.filter((r) => pattern.test(`${r.method} ${r.path}`));

describe('what Ferry sends to InvenioRDM', () => {
  it('the token as a Bearer header on every request, never in a URL', () => {
    for (const request of sent) {
      expect(request.headers.authorization, request.path).toBe(`Bearer ${TOKEN}`);
      expect(request.path).not.toContain(TOKEN);
    }
  });

  it('the user records search, newest first, a page size, then the links it was given', () => {
    const searches = requests(/^GET \/api\/user\/records/);
    expect(searches.length).toBeGreaterThan(0);
    expect(new URL(`http://x${searches[0]!.path}`).searchParams.get('sort')).toBe('newest');
    expect(new URL(`http://x${searches[0]!.path}`).searchParams.get('size')).toBe('25');
  });

  it('a new file in three steps: declare the flattened key as JSON, PUT octet-stream with its length, commit', () => {
    const steps = requests(new RegExp(`/api/records/${draftId}/draft/files`)).filter((r) => r.method !== 'GET');
    const init = steps.find((r) => r.method === 'POST' && r.path.endsWith('/draft/files'))!;
    expect(init.json).toEqual([{ key: 'raw__a.csv' }]);
    const put = steps.find((r) => r.method === 'PUT' && r.path.includes('raw__a.csv'))!;
    expect(put.path).toBe(`/api/records/${draftId}/draft/files/raw__a.csv/content`);
    expect(put.headers['content-type']).toBe('application/octet-stream');
    expect(put.headers['content-length']).toBe('3');
    expect(steps.some((r) => r.method === 'POST' && r.path === `/api/records/${draftId}/draft/files/raw__a.csv/commit`)).toBe(true);
  });

  it('a changed file deleted, then added again', () => {
    const keep = requests(/keep\.txt/).filter((r) => r.method !== 'GET').map((r) => `${r.method} ${r.path.replace(/^\/api\/records\/[^/]+/, '')}`);
    expect(keep).toEqual(['DELETE /draft/files/keep.txt', 'PUT /draft/files/keep.txt/content', 'POST /draft/files/keep.txt/commit']);
  });

  it('a published record: a new version, its files imported, never a publish or an edit of the record', () => {
    expect(requests(/^POST \/api\/records\/[^/]+\/versions$/).map((r) => r.path)).toEqual([`/api/records/${publishedId}/versions`]);
    expect(requests(/files-import/)).toHaveLength(1);
    expect(requests(/publish|\/actions\/(?!files-import)/)).toEqual([]);
    expect(requests(/^PUT \/api\/records\/[^/]+(\/draft)?$/)).toEqual([]);
  });

  it('a new draft as JSON with title, resource type, date and description, files enabled', () => {
    const created = requests(/^POST \/api\/records$/);
    expect(created).toHaveLength(1);
    expect(created[0]!.json).toMatchObject({ files: { enabled: true }, metadata: { title: 'Fresh', resource_type: { id: 'dataset' }, publication_date: expect.stringMatching(/^\d{4}-\d\d-\d\d$/) } });
  });
});
