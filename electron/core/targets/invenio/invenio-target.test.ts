import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeConfig } from '../../config.js';
import { FerryError } from '../../errors.js';
import { MemorySecretStore } from '../../keychain/memory.js';
import type { Target } from '../../target.js';
import { startInvenioEmulator, type InvenioEmulator, type InvenioEmulatorOptions } from '../../../../test/emulators/invenio/emulator.js';
import { collect, ctx, drain, entriesFrom, md5, writeOptions } from '../../../../test/target-suite/test-entries.js';
import { createInvenioTarget, type InvenioTargetOptions } from './index.js';
import { fileId, recordId } from './ids.js';

const TOKEN = 'invenio-token';
let emulator: InvenioEmulator;
let target: Target;

async function start(options: InvenioEmulatorOptions = {}, overrides: Partial<InvenioTargetOptions> = {}): Promise<void> {
  await emulator?.close();
  emulator = await startInvenioEmulator(options);
  target = createInvenioTarget(makeConfig({ dataDir: '/nonexistent' }), new MemorySecretStore(), { defaultUrl: emulator.url, ratePerSecond: 1000, retries: 0, pageSize: 2, ...overrides });
}

beforeEach(() => start());
afterEach(() => emulator.close());

async function failure(promise: Promise<unknown>): Promise<FerryError> {
  const error = await promise.then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(FerryError);
  return error as FerryError;
}
const requests = (pattern: RegExp) => emulator.state.requests.filter((r) => pattern.test(r));

describe('invenio target', () => {
  it('describes itself', () => {
    expect(target.info).toMatchObject({ name: 'invenio', readable_name: 'InvenioRDM', supported_hash_algorithms: ['md5'], credential: 'remote' });
  });

  it('lists drafts and published records over pages, following links.next, and their committed files only', async () => {
    const a = emulator.state.addRecord(1, 'Alpha', { 'a.txt': 'a' });
    emulator.state.addRecord(1, 'Beta', { 'b.txt': 'b' }, { published: true });
    emulator.state.addRecord(1, 'Gamma');
    emulator.state.addRecord(2, 'Not mine');
    a.files.push({ key: 'half.bin', bytes: null, committed: false, created: '', updated: '' });
    const top = await collect(target.list(ctx(TOKEN), { container: null }));
    expect(top.map((n) => n.title).sort()).toEqual(['Alpha', 'Beta', 'Gamma']);
    expect(requests(/^GET \/api\/user\/records/)).toHaveLength(2);
    const children = await collect(target.list(ctx(TOKEN), { container: recordId(a.id) }));
    expect(children.map((n) => n.title)).toEqual(['a.txt']);
  });

  it('gives details with the md5 taken from "md5:<hex>", and reads the bytes', async () => {
    const r = emulator.state.addRecord(1, 'Alpha', { 'a.txt': 'hello' }, { published: true });
    const detail = await target.detail(ctx(TOKEN), fileId(r.id, 'a.txt'));
    expect(detail.hashes).toEqual({ md5: md5('hello') });
    expect(detail.extra).toMatchObject({ key: 'a.txt', size: 5, published: true, status: 'published' });
    const record = await target.detail(ctx(TOKEN), recordId(r.id));
    expect(record.extra).toMatchObject({ file_count: 1, doi: expect.stringContaining(r.id) });
    const read = await target.read(ctx(TOKEN), recordId(r.id));
    expect((await drain(read.entries)).get('Alpha/a.txt')?.toString()).toBe('hello');
  });

  it('uploads in three steps with flattened names, ignores what is there, and replaces a changed file by delete and re-add', async () => {
    const r = emulator.state.addRecord(1, 'Draft');
    const first = await target.write(ctx(TOKEN), recordId(r.id), entriesFrom({ 'Top/a.txt': 'a', 'Top/sub/b.txt': 'b' }), writeOptions());
    expect(first).toMatchObject({ created: ['Top/a.txt', 'Top/sub/b.txt'], fileErrors: [] });
    // two files are declared at once (2 in flight): the names matter here, not which declare arrived first
    expect(r.files.map((f) => f.key).sort()).toEqual(['Top__a.txt', 'Top__sub__b.txt']);
    expect(requests(/Top__a\.txt/)).toEqual([`PUT /api/records/${r.id}/draft/files/Top__a.txt/content`, `POST /api/records/${r.id}/draft/files/Top__a.txt/commit`]);

    const second = await target.write(ctx(TOKEN), recordId(r.id), entriesFrom({ 'Top/a.txt': 'a', 'Top/sub/b.txt': 'b2' }), writeOptions('update'));
    expect(second).toMatchObject({ created: [], updated: ['Top/sub/b.txt'], ignored: ['Top/a.txt'], fileErrors: [] });
    expect(requests(/^DELETE /)).toEqual([`DELETE /api/records/${r.id}/draft/files/Top__sub__b.txt`]);
    expect(r.files.find((f) => f.key === 'Top__sub__b.txt')?.bytes?.toString()).toBe('b2');
    // InvenioRDM's record of the committed file (md5, size), for the job to verify against
    expect(second.stored?.get('Top/sub/b.txt')).toEqual({ hashes: { md5: md5('b2') }, size: 2 });
  });

  it('puts an upload into a published record into its next version, with the old files imported, and never publishes', async () => {
    const r = emulator.state.addRecord(1, 'Published', { 'old.txt': 'old' }, { published: true });
    const outcome = await target.write(ctx(TOKEN), recordId(r.id), entriesFrom({ 'new.txt': 'new' }), writeOptions());
    expect(outcome).toMatchObject({ created: ['new.txt'], fileErrors: [] });
    const next = emulator.state.records.get(r.nextDraft!)!;
    expect(outcome.newResource).toEqual({ id: recordId(next.id), title: 'Published' });
    expect(next.files.map((f) => f.key)).toEqual(['old.txt', 'new.txt']);
    expect(r.files.map((f) => f.key)).toEqual(['old.txt']);
    // again: the same next draft (the service returns it), nothing imported twice
    const again = await target.write(ctx(TOKEN), recordId(r.id), entriesFrom({ 'more.txt': 'more' }), writeOptions());
    expect(again.newResource?.id).toBe(recordId(next.id));
    expect(next.files.map((f) => f.key)).toEqual(['old.txt', 'new.txt', 'more.txt']);
    expect(requests(/files-import/)).toHaveLength(1);
    expect(requests(/publish/)).toEqual([]);
  });

  it('creates a new draft from a top folder without waiting for the search index', async () => {
    await start({ indexLagSearches: 5 });
    emulator.state.addRecord(1, 'Survey', {}, { published: true });
    const outcome = await target.write(ctx(TOKEN), null, entriesFrom({ 'Survey/': null, 'Survey/r.txt': 'r' }), writeOptions());
    expect(outcome).toMatchObject({ created: ['Survey/r.txt'], fileErrors: [] });
    expect(outcome.newResource?.title).toBe('Survey (2)');
    const made = [...emulator.state.records.values()].find((r) => r.title === 'Survey (2)')!;
    expect(made.files.map((f) => f.key)).toEqual(['r.txt']);
    // the search does not show it yet; the record itself answers
    expect((await collect(target.list(ctx(TOKEN), { container: null }))).map((n) => n.title)).toEqual(['Survey']);
    expect((await target.detail(ctx(TOKEN), outcome.newResource!.id)).title).toBe('Survey (2)');
  });

  it('reports a refused file and leaves no pending key behind', async () => {
    await start({ allowEmptyFiles: false });
    const r = emulator.state.addRecord(1, 'Draft');
    const outcome = await target.write(ctx(TOKEN), recordId(r.id), entriesFrom({ 'empty.txt': '', 'full.txt': 'x' }), writeOptions());
    expect(outcome.created).toEqual(['full.txt']);
    expect(outcome.fileErrors).toEqual([{ path: 'empty.txt', error: expect.stringMatching(/Empty files are not accepted/) }]);
    expect(r.files.map((f) => f.key)).toEqual(['full.txt']);
  });

  it('sends the token as a Bearer header only, and says what to do when it is refused', async () => {
    emulator.state.addRecord(1, 'Alpha');
    await collect(target.list(ctx(TOKEN)));
    expect(emulator.state.authorizations.every((a) => a === `Bearer ${TOKEN}`)).toBe(true);
    const error = await failure(collect(target.list(ctx('wrong-token-123456'))));
    expect(error.status).toBe(401);
    expect(error.message).toMatch(/personal access token/);
    expect(error.message).not.toContain('wrong-token-123456');
  });

  it('needs an instance: a bare token with none configured is refused with the JSON shape to use', async () => {
    const unconfigured = createInvenioTarget(makeConfig({ dataDir: '/nonexistent' }), new MemorySecretStore(), { defaultUrl: '' });
    expect((await failure(collect(unconfigured.list(ctx(TOKEN))))).message).toMatch(/\{"url":/);
    emulator.state.addRecord(1, 'Via JSON');
    const viaJson = await collect(unconfigured.list(ctx(JSON.stringify({ url: emulator.url, token: TOKEN })), { container: null }));
    expect(viaJson.map((n) => n.title)).toEqual(['Via JSON']);
  });
});

describe('invenio target: a failed new top-level upload', () => {
  it('deletes the draft it made, so nothing is left behind', async () => {
    const before = emulator.state.records.size;
    async function* entries() {
      yield* entriesFrom({ 'Study/': null, 'Study/a.txt': 'a' });
      yield { path: 'Study/b.bin', kind: 'file' as const, size: 3, mtime: null, hashes: {}, open: () => Promise.reject(new Error('the source disk went away')) };
    }
    const error = (await target.write(ctx(TOKEN), null, entries(), writeOptions()).catch((e: unknown) => e)) as Error;
    expect(error.message).toMatch(/The new draft record 'Study' \(.+\) was removed again, so nothing is left behind\.$/);
    expect(emulator.state.records.size).toBe(before);
  });
});
