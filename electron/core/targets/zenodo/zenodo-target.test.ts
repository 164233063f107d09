import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeConfig } from '../../config.js';
import { FerryError } from '../../errors.js';
import { MemorySecretStore } from '../../keychain/memory.js';
import type { Target } from '../../target.js';
import { startZenodoEmulator, type ZenodoEmulator } from '../../../../test/emulators/zenodo/emulator.js';
import { collect, ctx, drain, entriesFrom, md5, writeOptions } from '../../../../test/target-suite/test-entries.js';
import { createZenodoTarget } from './index.js';
import { depositionId, fileId } from './ids.js';

const TOKEN = 'zenodo-token';
let emulator: ZenodoEmulator;
let target: Target;

function makeTarget(overrides: Record<string, unknown> = {}): Target {
  const config = makeConfig({ dataDir: '/nonexistent', remotes: { osfApiUrl: '', githubApiUrl: '', gitlabUrl: '', figshareApiUrl: '', zenodoUrl: emulator.url } });
  return createZenodoTarget(config, new MemorySecretStore(), { ratePerSecond: 1000, pageSize: 2, retries: 2, ...overrides });
}

beforeEach(async () => {
  emulator = await startZenodoEmulator();
  target = makeTarget();
});
afterEach(async () => {
  await emulator.close();
});

async function failure(promise: Promise<unknown>): Promise<FerryError> {
  const error = await promise.then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(FerryError);
  return error as FerryError;
}

describe('zenodo target', () => {
  it('describes itself', () => {
    expect(target.info).toMatchObject({ name: 'zenodo', readable_name: 'Zenodo', supported_hash_algorithms: ['md5'], credential: 'remote' });
  });

  it('lists drafts and published depositions across pages, and their files', async () => {
    const a = emulator.state.addDeposition(1, 'Alpha', { 'a.txt': 'aaa' });
    const b = emulator.state.addDeposition(1, 'Beta', {}, true);
    const c = emulator.state.addDeposition(1, 'Gamma', { 'c1.csv': '1,2', 'c2.csv': '3,4' });
    emulator.state.addDeposition(2, 'Someone else', { 'x.txt': 'x' });

    const top = await collect(target.list(ctx(TOKEN), { container: null }));
    expect(top.map((n) => n.title).sort()).toEqual(['Alpha', 'Beta', 'Gamma']);
    expect(top.every((n) => n.kind === 'container' && n.container === null)).toBe(true);
    // page size 2, three depositions → pages 1, 2 (short) and no more
    expect(emulator.state.requests.filter((r) => r.startsWith('GET /api/deposit/depositions?'))).toHaveLength(2);

    const all = await collect(target.list(ctx(TOKEN)));
    expect(all).toHaveLength(3 + 3);
    expect(all).toContainEqual({ kind: 'item', kind_name: 'file', id: fileId(c.id, 'c2.csv'), container: depositionId(c.id), title: 'c2.csv' });
    const children = await collect(target.list(ctx(TOKEN), { container: depositionId(a.id) }));
    expect(children.map((n) => n.title)).toEqual(['a.txt']);
    expect(b.submitted).toBe(true);
    for (const node of all) expect(node.id).not.toContain('.');
  });

  it('follows a Link header when the server sends one', async () => {
    await emulator.close();
    emulator = await startZenodoEmulator({ linkHeader: true });
    target = makeTarget();
    for (const title of ['1', '2', '3', '4']) emulator.state.addDeposition(1, title);
    const top = await collect(target.list(ctx(TOKEN), { container: null }));
    expect(top).toHaveLength(4);
  });

  it('gives details with the md5 normalised and contract timestamps', async () => {
    const d = emulator.state.addDeposition(1, 'Alpha', { 'a.txt': 'hello' });
    const file = await target.detail(ctx(TOKEN), fileId(d.id, 'a.txt'));
    expect(file.hashes).toEqual({ md5: md5('hello') });
    expect(file.extra).toMatchObject({ size: 5, key: 'a.txt', provider: 'zenodo' });
    const dep = await target.detail(ctx(TOKEN), depositionId(d.id));
    expect(dep).toMatchObject({ kind: 'container', title: 'Alpha', hashes: {}, extra: { state: 'unsubmitted', published: false, file_count: 1 } });
    expect(dep.date_created).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    expect((await failure(target.detail(ctx(TOKEN), fileId(d.id, 'nope.txt')))).status).toBe(404);
    expect((await failure(target.detail(ctx(TOKEN), 'd999999'))).status).toBe(404);
  });

  it('streams a deposition as entries under its title, file by file', async () => {
    const big = Buffer.alloc(300_000, 7);
    const d = emulator.state.addDeposition(1, 'Alpha', { 'a.txt': 'hello', 'big.bin': big });
    const read = await target.read(ctx(TOKEN), depositionId(d.id));
    expect(read.title).toBe('Alpha');
    const files = await drain(read.entries);
    expect([...files.keys()]).toEqual(['Alpha', 'Alpha/a.txt', 'Alpha/big.bin']);
    expect(files.get('Alpha/big.bin')?.equals(big)).toBe(true);
    expect(emulator.state.requests.some((r) => r.includes('files-archive'))).toBe(false);
    const one = await target.read(ctx(TOKEN), fileId(d.id, 'a.txt'));
    expect([...(await drain(one.entries)).entries()]).toEqual([['a.txt', Buffer.from('hello')]]);
  });

  it('uploads into a draft through its bucket, flattening sub-paths, honouring ignore and update', async () => {
    const d = emulator.state.addDeposition(1, 'Alpha', { 'a.txt': 'old' });
    const first = await target.write(ctx(TOKEN), depositionId(d.id), entriesFrom({ 'a.txt': 'new', 'b.txt': 'bee', 'raw/': null, 'raw/run1.csv': '1,2' }, { withSize: false }), writeOptions('ignore'));
    expect(first).toMatchObject({ created: ['b.txt', 'raw/run1.csv'], updated: [], ignored: ['a.txt'], fileErrors: [] });
    const keys = emulator.state.depositions.get(d.id)?.files.map((f) => f.key);
    expect(keys).toEqual(['a.txt', 'b.txt', 'raw__run1.csv']);
    expect(emulator.state.requests.filter((r) => r.startsWith('PUT /api/files/'))).toHaveLength(2);

    const second = await target.write(ctx(TOKEN), depositionId(d.id), entriesFrom({ 'a.txt': 'new', 'b.txt': 'bee' }, { withMd5: true }), writeOptions('update'));
    expect(second).toMatchObject({ created: [], updated: ['a.txt'], ignored: ['b.txt'] });
    expect(emulator.state.depositions.get(d.id)?.files.find((f) => f.key === 'a.txt')?.bytes.toString()).toBe('new');
  });

  it('creates a new draft deposition for a top-level upload, with a distinct title when taken', async () => {
    emulator.state.addDeposition(1, 'Survey');
    const outcome = await target.write(ctx(TOKEN), null, entriesFrom({ 'Survey/': null, 'Survey/data.csv': 'x,y', 'Survey/docs/readme.md': '# hi' }), writeOptions());
    expect(outcome.newResource?.title).toBe('Survey (2)');
    expect(outcome.created).toEqual(['Survey/data.csv', 'Survey/docs/readme.md']);
    const created = [...emulator.state.depositions.values()].find((dep) => depositionId(dep.id) === outcome.newResource?.id);
    expect(created?.metadata).toMatchObject({ title: 'Survey (2)', upload_type: 'dataset' });
    expect(created?.submitted).toBe(false);
    expect(created?.files.map((f) => f.key)).toEqual(['data.csv', 'docs__readme.md']);
    expect(emulator.state.requests).not.toContainEqual(expect.stringContaining('/actions/publish'));
  });

  it('refuses to write into a published record, explaining why', async () => {
    const d = emulator.state.addDeposition(1, 'Done', { 'a.txt': 'a' }, true);
    const error = await failure(target.write(ctx(TOKEN), depositionId(d.id), entriesFrom({ 'b.txt': 'b' }), writeOptions()));
    expect(error.status).toBe(409);
    expect(error.message).toMatch(/published.*cannot change.*new version/i);
    expect(emulator.state.depositions.get(d.id)?.files).toHaveLength(1);
  });

  it('reports zero-byte files and the file-count and size limits per file', async () => {
    const d = emulator.state.addDeposition(1, 'Alpha', { 'a.txt': 'a' });
    const limited = makeTarget({ maxFiles: 3, maxRecordBytes: 10 });
    const outcome = await limited.write(ctx(TOKEN), depositionId(d.id), entriesFrom({ 'empty.txt': '', 'b.txt': 'bb', 'huge.bin': Buffer.alloc(20), 'c.txt': 'c', 'd.txt': 'd' }), writeOptions());
    expect(outcome.created).toEqual(['b.txt', 'c.txt']);
    expect(outcome.fileErrors.map((e) => e.path)).toEqual(['empty.txt', 'huge.bin', 'd.txt']);
    expect(outcome.fileErrors[0]?.error).toMatch(/empty/);
    expect(outcome.fileErrors[1]?.error).toMatch(/at most 10 bytes/);
    expect(outcome.fileErrors[2]?.error).toMatch(/at most 3 files/);
  });

  it('turns a refusal by the server into a per-file error too', async () => {
    await emulator.close();
    emulator = await startZenodoEmulator({ maxFiles: 1 });
    target = makeTarget();
    const d = emulator.state.addDeposition(1, 'Alpha');
    const outcome = await target.write(ctx(TOKEN), depositionId(d.id), entriesFrom({ 'a.txt': 'a', 'b.txt': 'b' }), writeOptions());
    expect(outcome.created).toEqual(['a.txt']);
    expect(outcome.fileErrors).toEqual([{ path: 'b.txt', error: expect.stringMatching(/Too many files/) }]);
  });

  it('says the token is invalid or expired on a 401', async () => {
    const error = await failure(collect(target.list(ctx('wrong-token'))));
    expect(error.status).toBe(401);
    expect(error.code).toBe('unauthorized');
    expect(error.message).toBe('The Zenodo token is invalid or expired.');
    expect(error.message).not.toContain('wrong-token');
  });

  // Needs RemoteClient to retry on statuses: ky only retries what it throws, and http.ts
  // creates it with throwHttpErrors: false (reported to the lead; one-line fix there).
  it('waits out a 429 with Retry-After and then succeeds', async () => {
    emulator.state.addDeposition(1, 'Alpha');
    emulator.state.throttle = { count: 1, retryAfter: 1 };
    const started = Date.now();
    expect(await collect(target.list(ctx(TOKEN), { container: null }))).toHaveLength(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });

  it('gives up with 429 and the Retry-After when throttling persists', async () => {
    emulator.state.throttle = { count: 10, retryAfter: 1 };
    const error = await failure(collect(makeTarget({ retries: 0 }).list(ctx(TOKEN), { container: null })));
    expect(error.status).toBe(429);
    expect(error.code).toBe('rate_limited');
    expect(error.retryAfter).toBe(1);
  });

  it('does not treat retry-after on an ordinary 200 as throttling', async () => {
    emulator.state.addDeposition(1, 'Alpha');
    const started = Date.now();
    await collect(target.list(ctx(TOKEN)));
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
