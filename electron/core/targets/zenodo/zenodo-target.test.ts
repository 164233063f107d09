// The `zenodo` target on Zenodo's records API (the invenio target with Zenodo's instance
// settings, instance.ts), against the emulator with Zenodo's quirks (docs/targets/zenodo.md).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeConfig } from '../../config.js';
import { FerryError } from '../../errors.js';
import { MemorySecretStore } from '../../keychain/memory.js';
import type { Target } from '../../target.js';
import { FaultPlan } from '../../../../test/emulators/shared/faults.js';
import { startZenodoEmulator, type ZenodoEmulator } from '../../../../test/emulators/zenodo/emulator.js';
import type { InvenioEmulatorOptions } from '../../../../test/emulators/invenio/emulator.js';
import { collect, ctx, drain, entriesFrom, md5, writeOptions } from '../../../../test/target-suite/test-entries.js';
import { fileId, recordId, type InvenioTargetOptions } from '../invenio/index.js';
import { createZenodoTarget, zenodoInstance } from './index.js';

const TOKEN = 'zenodo-token';
let emulator: ZenodoEmulator;
let target: Target;

function makeTarget(overrides: Partial<InvenioTargetOptions> = {}): Target {
  const config = makeConfig({ dataDir: '/nonexistent', remotes: { ...makeConfig().remotes, zenodoUrl: emulator.url } });
  return createZenodoTarget(config, new MemorySecretStore(), { ratePerSecond: 1000, pageSize: 2, retries: 2, ...overrides });
}

async function start(options: InvenioEmulatorOptions = {}): Promise<void> {
  await emulator?.close();
  emulator = await startZenodoEmulator(options);
  target = makeTarget();
}

beforeEach(() => start());
afterEach(() => emulator.close());

async function failure(promise: Promise<unknown>): Promise<FerryError> {
  const error = await promise.then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(FerryError);
  return error as FerryError;
}
const requests = (pattern: RegExp) => emulator.state.requests.filter((r) => pattern.test(r));

describe('zenodo target (records API)', () => {
  it('describes itself as the zenodo target, keeping descriptive metadata', () => {
    expect(target.info).toMatchObject({ name: 'zenodo', readable_name: 'Zenodo', supported_hash_algorithms: ['md5'], credential: 'remote', keepsMetadata: true });
  });

  it('lists drafts and published records across pages of /api/user/records, and their files', async () => {
    const a = emulator.state.addRecord(1, 'Alpha', { 'a.txt': 'aaa' });
    emulator.state.addRecord(1, 'Beta', {}, { published: true });
    const c = emulator.state.addRecord(1, 'Gamma', { 'c1.csv': '1,2', 'c2.csv': '3,4' });
    emulator.state.addRecord(2, 'Someone else', { 'x.txt': 'x' });

    const top = await collect(target.list(ctx(TOKEN), { container: null }));
    expect(top.map((n) => n.title).sort()).toEqual(['Alpha', 'Beta', 'Gamma']);
    expect(top.every((n) => n.kind === 'container' && n.container === null)).toBe(true);
    // page size 2, three records → pages 1 and 2 (links.next), no more
    expect(requests(/^GET \/api\/user\/records\?/)).toHaveLength(2);

    const all = await collect(target.list(ctx(TOKEN)));
    expect(all).toHaveLength(3 + 3);
    expect(all).toContainEqual({ kind: 'item', kind_name: 'file', id: fileId(c.id, 'c2.csv'), container: recordId(c.id), title: 'c2.csv' });
    const children = await collect(target.list(ctx(TOKEN), { container: recordId(a.id) }));
    expect(children.map((n) => n.title)).toEqual(['a.txt']);
    for (const node of all) expect(node.id).not.toContain('.');
  });

  it('resolves the deposition ids of the former legacy-API target (d<id>: the same record id)', async () => {
    const d = emulator.state.addRecord(1, 'Alpha', { 'a.txt': 'hello' });
    expect((await target.detail(ctx(TOKEN), `d${d.id}`)).extra).toMatchObject({ record_id: d.id, provider: 'zenodo' });
  });

  it('gives details with the md5 taken from "md5:<hex>" and contract timestamps', async () => {
    const d = emulator.state.addRecord(1, 'Alpha', { 'a.txt': 'hello' });
    const file = await target.detail(ctx(TOKEN), fileId(d.id, 'a.txt'));
    expect(file.hashes).toEqual({ md5: md5('hello') });
    expect(file.extra).toMatchObject({ size: 5, key: 'a.txt', provider: 'zenodo' });
    const record = await target.detail(ctx(TOKEN), recordId(d.id));
    expect(record).toMatchObject({ kind: 'container', title: 'Alpha', hashes: {}, extra: { status: 'draft', published: false, file_count: 1 } });
    expect(record.date_created).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    expect((await failure(target.detail(ctx(TOKEN), fileId(d.id, 'nope.txt')))).status).toBe(404);
    expect((await failure(target.detail(ctx(TOKEN), 'r999999'))).status).toBe(404);
  });

  it("streams a record as entries under its title, file by file (a published record's from the record, not /draft/)", async () => {
    const big = Buffer.alloc(300_000, 7);
    const d = emulator.state.addRecord(1, 'Alpha', { 'a.txt': 'hello', 'big.bin': big }, { published: true });
    const read = await target.read(ctx(TOKEN), recordId(d.id));
    expect(read.title).toBe('Alpha');
    const files = await drain(read.entries);
    expect([...files.keys()]).toEqual(['Alpha', 'Alpha/a.txt', 'Alpha/big.bin']);
    expect(files.get('Alpha/big.bin')?.equals(big)).toBe(true);
    expect(requests(/files-archive|\/draft\/files\/.*\/content/)).toEqual([]);
    expect(requests(/\/content$/)).toContain(`GET /api/records/${d.id}/files/a.txt/content`);
    const one = await target.read(ctx(TOKEN), fileId(d.id, 'a.txt'));
    expect([...(await drain(one.entries)).entries()]).toEqual([['a.txt', Buffer.from('hello')]]);
  });

  it('uploads into a draft in three steps, flattening sub-paths, honouring ignore and update', async () => {
    const d = emulator.state.addRecord(1, 'Alpha', { 'a.txt': 'old' });
    const first = await target.write(ctx(TOKEN), recordId(d.id), entriesFrom({ 'a.txt': 'new', 'b.txt': 'bee', 'raw/': null, 'raw/run1.csv': '1,2' }, { withSize: false }), writeOptions('ignore'));
    expect(first).toMatchObject({ created: ['b.txt', 'raw/run1.csv'], updated: [], ignored: ['a.txt'], fileErrors: [] });
    expect(emulator.state.records.get(d.id)?.files.map((f) => f.key)).toEqual(['a.txt', 'b.txt', 'raw__run1.csv']);
    expect(requests(/^PUT \/api\/records\/\d+\/draft\/files\/.*\/content$/)).toHaveLength(2);
    expect(requests(/^POST \/api\/records\/\d+\/draft\/files\/.*\/commit$/)).toHaveLength(2);

    const second = await target.write(ctx(TOKEN), recordId(d.id), entriesFrom({ 'a.txt': 'new', 'b.txt': 'bee' }, { withMd5: true }), writeOptions('update'));
    expect(second).toMatchObject({ created: [], updated: ['a.txt'], ignored: ['b.txt'] });
    expect(emulator.state.records.get(d.id)?.files.find((f) => f.key === 'a.txt')?.bytes?.toString()).toBe('new');
  });

  it('creates a new draft record for a top-level upload, with a distinct title when taken, never publishing', async () => {
    emulator.state.addRecord(1, 'Survey');
    const outcome = await target.write(ctx(TOKEN), null, entriesFrom({ 'Survey/': null, 'Survey/data.csv': 'x,y', 'Survey/docs/readme.md': '# hi' }), writeOptions());
    expect(outcome.newResource?.title).toBe('Survey (2)');
    expect(outcome.created).toEqual(['Survey/data.csv', 'Survey/docs/readme.md']);
    const created = [...emulator.state.records.values()].find((r) => recordId(r.id) === outcome.newResource?.id)!;
    expect(created.title).toBe('Survey (2)');
    expect(created.metadata).toMatchObject({ resource_type: { id: 'dataset' } });
    expect(created.published).toBe(false);
    expect(created.files.map((f) => f.key)).toEqual(['data.csv', 'docs__readme.md']);
    expect(requests(/actions\/publish/)).toEqual([]);
  });

  it('an upload into a published record goes to its new version draft, with the previous files, never published', async () => {
    const d = emulator.state.addRecord(1, 'Done', { 'a.txt': 'a' }, { published: true });
    const outcome = await target.write(ctx(TOKEN), recordId(d.id), entriesFrom({ 'b.txt': 'b' }), writeOptions());
    expect(outcome.created).toEqual(['b.txt']);
    const next = emulator.state.records.get(d.nextDraft!)!;
    expect(outcome.newResource).toEqual({ id: recordId(next.id), title: 'Done' });
    expect(next.files.map((f) => f.key)).toEqual(['a.txt', 'b.txt']);
    expect(next.published).toBe(false);
    expect(emulator.state.records.get(d.id)?.files.map((f) => f.key)).toEqual(['a.txt']);
    expect(requests(/actions\/publish/)).toEqual([]);
  });

  it("reports zero-byte files and Zenodo's file-count and size limits per file, before sending them", async () => {
    const d = emulator.state.addRecord(1, 'Alpha', { 'a.txt': 'a' });
    const limited = makeTarget({ instance: { ...zenodoInstance(emulator.url), maxFiles: 3, maxRecordBytes: 10 } });
    const outcome = await limited.write(ctx(TOKEN), recordId(d.id), entriesFrom({ 'empty.txt': '', 'b.txt': 'bb', 'huge.bin': Buffer.alloc(20), 'c.txt': 'c', 'd.txt': 'd' }), writeOptions());
    expect(outcome.created).toEqual(['b.txt', 'c.txt']);
    expect(outcome.fileErrors.map((e) => e.path)).toEqual(['empty.txt', 'huge.bin', 'd.txt']);
    expect(outcome.fileErrors[0]?.error).toMatch(/empty/);
    expect(outcome.fileErrors[1]?.error).toMatch(/at most 10 bytes/);
    expect(outcome.fileErrors[2]?.error).toMatch(/at most 3 files/);
    expect(requests(/empty\.txt|huge\.bin|d\.txt/)).toEqual([]);
  });

  it('turns a refusal by the server into a per-file error too', async () => {
    await start({ maxFiles: 1 });
    const d = emulator.state.addRecord(1, 'Alpha');
    const outcome = await target.write(ctx(TOKEN), recordId(d.id), entriesFrom({ 'a.txt': 'a', 'b.txt': 'b' }), writeOptions());
    expect(outcome.created).toEqual(['a.txt']);
    expect(outcome.fileErrors).toEqual([{ path: 'b.txt', error: expect.stringMatching(/max is 1/) }]);
  });

  it('says Zenodo does not accept the token on a 401, without echoing it', async () => {
    const error = await failure(collect(target.list(ctx('wrong-token'))));
    expect(error.status).toBe(401);
    expect(error.code).toBe('unauthorized');
    expect(error.message).toMatch(/does not accept this Zenodo token/);
    expect(error.message).not.toContain('wrong-token');
  });

  it('waits out a 429 with Retry-After and then succeeds', async () => {
    await start({ faults: new FaultPlan().add({ kind: 'status', server: 'api', status: 429, retryAfter: 1 }) });
    emulator.state.addRecord(1, 'Alpha');
    const started = Date.now();
    expect(await collect(target.list(ctx(TOKEN), { container: null }))).toHaveLength(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });

  it('gives up with 429 and the Retry-After when throttling persists', async () => {
    await start({ faults: new FaultPlan().add({ kind: 'status', server: 'api', status: 429, retryAfter: 1, times: 10 }) });
    const error = await failure(collect(makeTarget({ retries: 0 }).list(ctx(TOKEN), { container: null })));
    expect(error.status).toBe(429);
    expect(error.code).toBe('rate_limited');
    expect(error.retryAfter).toBe(1);
  });

  it('does not treat the retry-after: 60 on every ordinary answer as throttling', async () => {
    emulator.state.addRecord(1, 'Alpha');
    const started = Date.now();
    await collect(target.list(ctx(TOKEN)));
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
