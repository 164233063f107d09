import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeConfig } from '../../config.js';
import { FerryError } from '../../errors.js';
import { MemorySecretStore } from '../../keychain/memory.js';
import type { Target } from '../../target.js';
import { startFigshareEmulator, type FigshareEmulator } from '../../../../test/emulators/figshare/emulator.js';
import { collect, ctx, drain, entriesFrom, md5, writeOptions } from '../../../../test/target-suite/test-entries.js';
import { createFigshareTarget } from './index.js';

const TOKEN = 'figshare-token';
let emulator: FigshareEmulator;
let target: Target;

function makeTarget(overrides: Record<string, unknown> = {}): Target {
  const config = makeConfig({ dataDir: '/nonexistent', remotes: { osfApiUrl: '', githubApiUrl: '', gitlabUrl: '', zenodoUrl: '', figshareApiUrl: emulator.url } });
  return createFigshareTarget(config, new MemorySecretStore(), { ratePerSecond: 1000, pageSize: 2, retries: 1, downloadUrl: emulator.downloadUrl, ...overrides });
}

beforeEach(async () => {
  emulator = await startFigshareEmulator({ partSize: 4 });
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

describe('figshare target', () => {
  it('lists projects, their articles, standalone articles and files, each once', async () => {
    const project = emulator.state.addProject(1, 'Project One');
    const inProject = emulator.state.addArticle(1, 'In project', project.id, { 'a.txt': 'a' });
    const loose = emulator.state.addArticle(1, 'Loose', null, { 'b.txt': 'b', 'c.txt': 'c' });
    emulator.state.addArticle(1, 'Loose 2', null);
    emulator.state.addArticle(2, 'Not mine', null, { 'x.txt': 'x' });

    const top = await collect(target.list(ctx(TOKEN), { container: null }));
    expect(top.map((n) => [n.id, n.title, n.container])).toEqual([
      [`p${project.id}`, 'Project One', null],
      [`a${loose.id}`, 'Loose', null],
      [expect.stringMatching(/^a\d+$/), 'Loose 2', null],
    ]);
    const all = await collect(target.list(ctx(TOKEN)));
    expect(all.map((n) => n.title)).toEqual(['Project One', 'In project', 'a.txt', 'Loose', 'b.txt', 'c.txt', 'Loose 2']);
    expect(all.find((n) => n.title === 'In project')?.container).toBe(`p${project.id}`);
    expect(all.find((n) => n.title === 'a.txt')?.container).toBe(`p${project.id}_a${inProject.id}`);
    for (const node of all) expect(node.id).not.toContain('.');
    // page_size 2: the three articles of /account/articles take two pages
    expect(emulator.state.requests.filter((r) => r.startsWith('GET /v2/account/articles?'))).toHaveLength(4);
    expect((await collect(target.list(ctx(TOKEN), { container: `p${project.id}` }))).map((n) => n.title)).toEqual(['In project']);
  });

  it('gives computed_md5 as md5, and none while figshare is still processing', async () => {
    const done = emulator.state.addArticle(1, 'Done', null, { 'a.txt': 'hello' });
    const busy = emulator.state.addArticle(1, 'Busy', null, { 'b.txt': 'world' }, { processing: true });
    const a = await target.detail(ctx(TOKEN), `f${done.id}_${done.files[0]?.id}`);
    expect(a.hashes).toEqual({ md5: md5('hello') });
    expect(a.extra).toMatchObject({ md5_status: 'computed', size: 5, provider: 'figshare' });
    const b = await target.detail(ctx(TOKEN), `f${busy.id}_${busy.files[0]?.id}`);
    expect(b.hashes).toEqual({});
    expect(b.extra).toMatchObject({ md5_status: 'pending', status: 'moving_to_final' });
    const article = await target.detail(ctx(TOKEN), `a${done.id}`);
    expect(article).toMatchObject({ kind: 'container', title: 'Done', hashes: {}, extra: { is_public: false, file_count: 1 } });
    expect(article.date_created).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000000Z$/);
    expect((await failure(target.detail(ctx(TOKEN), 'a999'))).status).toBe(404);
  });

  it('downloads private files with the token and published ones through S3 without it', async () => {
    const big = Buffer.alloc(200_000, 3);
    const priv = emulator.state.addArticle(1, 'Private', null, { 'a.txt': 'hello', 'big.bin': big });
    const pub = emulator.state.addArticle(1, 'Public', null, { 'p.txt': 'published' }, { public: true });
    const files = await drain((await target.read(ctx(TOKEN), `a${priv.id}`)).entries);
    expect([...files.keys()]).toEqual(['Private', 'Private/a.txt', 'Private/big.bin']);
    expect(files.get('Private/big.bin')?.equals(big)).toBe(true);
    const published = await drain((await target.read(ctx(TOKEN), `a${pub.id}`)).entries);
    expect(published.get('Public/p.txt')?.toString()).toBe('published');
    expect(emulator.state.requests).toContain(`UPLOAD GET /s3/${pub.files[0]?.id}`);
  });

  it('reads a project as folders of articles', async () => {
    const project = emulator.state.addProject(1, 'Proj');
    emulator.state.addArticle(1, 'Art', project.id, { 'x.csv': '1' });
    const files = await drain((await target.read(ctx(TOKEN), `p${project.id}`)).entries);
    expect([...files.keys()]).toEqual(['Proj', 'Proj/Art', 'Proj/Art/x.csv']);
  });

  it('uploads through the multi-part protocol, one part after another', async () => {
    // figshare is still computing the MD5 after the target's reads of the new files
    emulator.state.options.processingReads = 5;
    const article = emulator.state.addArticle(1, 'Target', null);
    const content = 'abcdefghij'; // 10 bytes, parts of 4 → 3 parts
    const outcome = await target.write(ctx(TOKEN), `a${article.id}`, entriesFrom({ 'data.txt': content, 'sub/x.txt': 'xy' }, { withSize: false }), writeOptions());
    expect(outcome).toMatchObject({ created: ['data.txt', 'sub/x.txt'], fileErrors: [] });
    const stored = emulator.state.articles.get(article.id)?.files ?? [];
    expect(stored.map((f) => f.name)).toEqual(['data.txt', 'sub__x.txt']);
    expect(stored[0]?.bytes.toString()).toBe(content);
    expect(stored[0]?.suppliedMd5).toBe(md5(content));
    const partPuts = emulator.state.requests.filter((r) => /^UPLOAD PUT \/upload\/.+\/\d+$/.test(r));
    expect(partPuts).toHaveLength(3 + 1);
    expect(outcome.stored?.get('data.txt')).toEqual({ unverifiable: expect.stringContaining('figshare computes its MD5 after the upload') });
    // right after upload figshare has not computed its md5 yet: detail says pending
    const detail = await target.detail(ctx(TOKEN), `f${article.id}_${stored[0]?.id}`);
    expect(detail.extra.md5_status).toBe('pending');
    expect(detail.hashes).toEqual({});
    emulator.state.processAll();
    expect((await target.detail(ctx(TOKEN), `f${article.id}_${stored[0]?.id}`)).hashes).toEqual({ md5: md5(content) });
  });

  it('carries on with an upload a stopped run began: only the parts figshare lacks are sent, never counted done before', async () => {
    const article = emulator.state.addArticle(1, 'Target', null);
    const content = 'abcdefghij'; // parts of 4 → 3 parts
    // what a run killed after its first part leaves: a file record still taking parts
    const auth = { authorization: `token ${TOKEN}`, 'content-type': 'application/json' };
    const initiated = await fetch(`${emulator.url}/account/articles/${article.id}/files`, { method: 'POST', headers: auth, body: JSON.stringify({ name: 'big.txt', size: 10, md5: md5(content) }) });
    const file = (await (await fetch(((await initiated.json()) as { location: string }).location, { headers: auth })).json()) as { upload_url: string };
    expect((await fetch(`${file.upload_url}/1`, { method: 'PUT', body: 'abcd' })).status).toBe(200);
    // a stale start for other bytes of another file is of no use: removed, sent afresh
    const stale = await fetch(`${emulator.url}/account/articles/${article.id}/files`, { method: 'POST', headers: auth, body: JSON.stringify({ name: 'other.txt', size: 3, md5: md5('old') }) });
    expect(stale.status).toBe(201);
    emulator.state.requests.length = 0;

    // `ignore` too: an upload still waiting for its bytes is not a file that is there
    const outcome = await target.write(ctx(TOKEN), `a${article.id}`, entriesFrom({ 'big.txt': content, 'other.txt': 'new!' }, { withMd5: true }), writeOptions('ignore'));
    expect(outcome).toMatchObject({ created: ['big.txt', 'other.txt'], ignored: [], fileErrors: [] });
    const parts = emulator.state.requests.filter((r) => /^UPLOAD PUT \/upload\/.+\/\d+$/.test(r)).map((r) => Number(r.split('/').at(-1)));
    expect(parts).toEqual([2, 3, 1]); // big.txt's parts 2 and 3, then other.txt's one part
    const stored = emulator.state.articles.get(article.id)?.files ?? [];
    // both completed (no longer taking parts), the stale start gone
    expect(stored.map((f) => [f.name, f.status !== 'created', f.bytes.toString()])).toEqual([
      ['big.txt', true, content],
      ['other.txt', true, 'new!'],
    ]);
  });

  it("returns figshare's computed_md5 of each uploaded file once figshare has computed it, for the job to verify", async () => {
    const article = emulator.state.addArticle(1, 'Target', null);
    const outcome = await target.write(ctx(TOKEN), `a${article.id}`, entriesFrom({ 'data.txt': 'abcdefghij' }), writeOptions());
    expect(outcome.stored?.get('data.txt')).toEqual({ hashes: { md5: md5('abcdefghij') }, size: 10 });
  });

  it('ignores duplicates, and on update replaces only differing files (new first, then the old removed)', async () => {
    const article = emulator.state.addArticle(1, 'Target', null, { 'same.txt': 'same', 'diff.txt': 'old' });
    const ignored = await target.write(ctx(TOKEN), `a${article.id}`, entriesFrom({ 'same.txt': 'same', 'diff.txt': 'new!' }), writeOptions('ignore'));
    expect(ignored).toMatchObject({ created: [], updated: [], ignored: ['same.txt', 'diff.txt'] });
    const updated = await target.write(ctx(TOKEN), `a${article.id}`, entriesFrom({ 'same.txt': 'same', 'diff.txt': 'new!' }, { withMd5: true }), writeOptions('update'));
    expect(updated).toMatchObject({ created: [], updated: ['diff.txt'], ignored: ['same.txt'] });
    const files = emulator.state.articles.get(article.id)?.files ?? [];
    expect(files.map((f) => [f.name, f.bytes.toString()])).toEqual([['same.txt', 'same'], ['diff.txt', 'new!']]);
  });

  it('makes a new private article for a top-level upload, with a distinct title when taken', async () => {
    emulator.state.addArticle(1, 'Survey', null);
    const outcome = await target.write(ctx(TOKEN), null, entriesFrom({ 'Survey/': null, 'Survey/a.csv': '1,2', 'Survey/raw/b.csv': '3' }), writeOptions());
    expect(outcome.newResource?.title).toBe('Survey (2)');
    const created = emulator.state.articles.get(Number(outcome.newResource?.id.slice(1)));
    expect(created).toMatchObject({ title: 'Survey (2)', projectId: null, isPublic: false });
    expect(created?.files.map((f) => f.name)).toEqual(['a.csv', 'raw__b.csv']);
    expect(outcome.created).toEqual(['Survey/a.csv', 'Survey/raw/b.csv']);
  });

  it('writes into a project as one article per top folder', async () => {
    const project = emulator.state.addProject(1, 'Proj');
    emulator.state.addArticle(1, 'Existing', project.id);
    const outcome = await target.write(ctx(TOKEN), `p${project.id}`, entriesFrom({ 'Existing/a.txt': 'a', 'Fresh/b.txt': 'b', 'loose.txt': 'x' }), writeOptions());
    expect(outcome.created).toEqual(['Existing/a.txt', 'Fresh/b.txt']);
    expect(outcome.fileErrors.map((e) => e.path)).toEqual(['loose.txt']);
    const titles = [...emulator.state.articles.values()].filter((a) => a.projectId === project.id).map((a) => a.title);
    expect(titles).toEqual(['Existing', 'Fresh']);
  });

  it('calls a bad token invalid or expired (figshare answers 403)', async () => {
    const error = await failure(collect(target.list(ctx('nope'))));
    expect(error.status).toBe(401);
    expect(error.message).toBe('The figshare token is invalid or expired.');
  });

  it('reports 429 when figshare throttles, and keeps to one request a second by default', async () => {
    emulator.state.addArticle(1, 'A', null);
    emulator.state.throttle.count = 5;
    const error = await failure(collect(makeTarget({ retries: 0 }).list(ctx(TOKEN), { container: null })));
    expect(error.status).toBe(429);

    await emulator.close();
    emulator = await startFigshareEmulator({ maxPerSecond: 1 });
    emulator.state.addArticle(1, 'A', null);
    const polite = createFigshareTarget(makeConfig({ dataDir: '/nonexistent', remotes: { osfApiUrl: '', githubApiUrl: '', gitlabUrl: '', zenodoUrl: '', figshareApiUrl: emulator.url } }), new MemorySecretStore(), { retries: 0 });
    const started = Date.now();
    expect(await collect(polite.list(ctx(TOKEN), { container: null }))).toHaveLength(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900); // two requests, a second apart
  });
});
