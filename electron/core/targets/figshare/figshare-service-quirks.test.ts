// figshare as it answers (docs/targets/figshare.md): a shared project's items are readable
// only through the project's routes; downloads 302 to an S3 link signed for seconds; a
// link-only file points at another host; and a new-item upload that fails leaves no item.
import { afterEach, describe, expect, it } from 'vitest';
import { makeConfig } from '../../config.js';
import { CancelledError, FerryError } from '../../errors.js';
import { MemorySecretStore } from '../../keychain/memory.js';
import { FaultPlan } from '../../../../test/emulators/shared/faults.js';
import { startFigshareEmulator, type FigshareEmulator, type FigshareEmulatorOptions } from '../../../../test/emulators/figshare/emulator.js';
import { collect, ctx, drain, entriesFrom, writeOptions } from '../../../../test/target-suite/test-entries.js';
import { createFigshareTarget } from './index.js';

const OWNER = 'figshare-token';
const COLLABORATOR = 'figshare-other';
let emulator: FigshareEmulator;
afterEach(() => emulator?.close());

async function start(options: FigshareEmulatorOptions = {}, ratePerSecond = 1000) {
  emulator = await startFigshareEmulator({ partSize: 1024, processingReads: 0, ...options });
  const config = makeConfig({ dataDir: '/nonexistent', remotes: { ...makeConfig().remotes, figshareApiUrl: emulator.url } });
  return createFigshareTarget(config, new MemorySecretStore(), { ratePerSecond, retries: 0, downloadUrl: emulator.downloadUrl });
}

const failure = async (promise: Promise<unknown>) => (await promise.then(() => null, (e: unknown) => e)) as FerryError;


describe('figshare: a project shared with the token\'s account', () => {
  it('lists, details and reads its items through the project routes', async () => {
    const target = await start();
    const project = emulator.state.addProject(1, 'Shared', [2]);
    const article = emulator.state.addArticle(1, 'Item', project.id, { 'x.txt': 'shared bytes' });
    const mine = ctx(COLLABORATOR);

    const children = await collect(target.list(mine, { container: `p${project.id}` }));
    expect(children.map((c) => c.id)).toEqual([`p${project.id}_a${article.id}`]);
    const files = await collect(target.list(mine, { container: children[0]!.id }));
    expect(files.map((f) => f.title)).toEqual(['x.txt']);
    const detail = await target.detail(mine, children[0]!.id);
    expect(detail.container).toBe(`p${project.id}`);
    expect((await target.detail(mine, files[0]!.id)).hashes.md5).toMatch(/^[0-9a-f]{32}$/);
    const read = await drain((await target.read(mine, children[0]!.id)).entries);
    expect(read.get('Item/x.txt')?.toString()).toBe('shared bytes');
    expect((await drain((await target.read(mine, `p${project.id}`)).entries)).get('Shared/Item/x.txt')?.toString()).toBe('shared bytes');

    const owned = emulator.state.requests.filter((r) => r.includes(`/account/articles/${article.id}`));
    expect(owned).toEqual([]);
    expect(emulator.state.requests).toContain(`GET /v2/account/projects/${project.id}/articles/${article.id}`);
  });
});

describe('figshare: downloads', () => {
  it('follow the S3 link before it expires, though figshare allows one request a second', async () => {
    // the link lives 0.6 s; the 1-a-second queue would hold the S3 hop for about 1 s
    const target = await start({ signedUrlSeconds: 0.6 }, 1);
    const article = emulator.state.addArticle(1, 'Item', null, { 'a.txt': 'aaa' });
    const files = await drain((await target.read(ctx(OWNER), `a${article.id}`)).entries);
    expect(files.get('Item/a.txt')?.toString()).toBe('aaa');
    const s3 = emulator.state.exchanges.filter((e) => e.host === 's3');
    expect(s3).toHaveLength(1);
    expect(s3[0]!.credential).toBe(false);
  });

  it('a 403 from S3 is not "token invalid": a fresh link is fetched, then the failure names the storage host', async () => {
    const target = await start({ faults: new FaultPlan().add({ kind: 'status', server: 'upload', path: '/s3/', status: 403 }) });
    const article = emulator.state.addArticle(1, 'Item', null, { 'a.txt': 'aaa' });
    const id = `f${article.id}_${article.files[0]!.id}`;
    expect((await drain((await target.read(ctx(OWNER), id)).entries)).get('a.txt')?.toString()).toBe('aaa');

    await emulator.close();
    const always = await start({ faults: new FaultPlan().add({ kind: 'status', server: 'upload', path: '/s3/', status: 403, times: Infinity }) });
    const other = emulator.state.addArticle(1, 'Item', null, { 'b.txt': 'bbb' });
    const error = await failure(drain((await always.read(ctx(OWNER), `f${other.id}_${other.files[0]!.id}`)).entries));
    expect(error).toBeInstanceOf(FerryError);
    expect(error.status).toBe(502);
    expect(error.message).toContain(new URL(emulator.uploadUrl).host);
    expect(error.message).not.toMatch(/token/i);
  });

  it('never send the token to the host a link-only file points at', async () => {
    const target = await start();
    const article = emulator.state.addArticle(1, 'Item', null);
    const link = emulator.state.addLinkFile(article, 'elsewhere.csv', `${emulator.elsewhereUrl}/data/elsewhere.csv`);
    const error = await failure(drain((await target.read(ctx(OWNER), `f${article.id}_${link.id}`)).entries));
    expect(error.status).toBe(404);
    expect(error.message).toMatch(/only a link to a page elsewhere \(127\.0\.0\.1:\d+\)/);
    expect(emulator.state.exchanges.filter((e) => e.host === 'elsewhere' && e.credential)).toEqual([]);
  });
});

describe('figshare: a 403 from the API', () => {
  it('with a valid token is that file\'s refusal, and the job carries on', async () => {
    const target = await start({ faults: new FaultPlan().add({ kind: 'status', server: 'api', method: 'POST', path: /\/files$/, status: 403 }) });
    const article = emulator.state.addArticle(1, 'Item', null);
    const outcome = await target.write(ctx(OWNER), `a${article.id}`, entriesFrom({ 'a.txt': 'a', 'b.txt': 'b' }), writeOptions('ignore'));
    expect(outcome.created).toEqual(['b.txt']);
    expect(outcome.fileErrors).toEqual([{ path: 'a.txt', error: expect.stringMatching(/refused this request \(HTTP 403\) although the token is valid/) }]);
  });

  it('with a rejected token says so and ends the job', async () => {
    const target = await start();
    const article = emulator.state.addArticle(1, 'Item', null);
    const error = await failure(target.write(ctx('revoked-token'), `a${article.id}`, entriesFrom({ 'a.txt': 'a' }), writeOptions('ignore')));
    expect(error.status).toBe(401);
    expect(error.message).toBe('The figshare token is invalid or expired.');
  });
});

describe('figshare: a new-item upload that fails', () => {
  /** An upload cancelled while its first file is being read: the item exists by then. */
  const cancelled = (target: Awaited<ReturnType<typeof start>>) => {
    const controller = new AbortController();
    const entries = (async function* () {
      yield* entriesFrom({ 'Set/': null });
      for await (const entry of entriesFrom({ 'Set/a.txt': 'a' })) {
        yield { ...entry, open: () => (controller.abort(), entry.open()) };
      }
    })();
    return failure(target.write({ token: OWNER, signal: controller.signal }, null, entries, { ...writeOptions('ignore'), signal: controller.signal }));
  };

  it('deletes the item it made, and says so', async () => {
    const target = await start();
    const error = await cancelled(target);
    expect(error).toBeInstanceOf(CancelledError);
    expect(error.message).toMatch(/The new figshare item 'Set' \(id \d+\) was removed again, so nothing is left behind\./);
    expect([...emulator.state.articles.values()]).toEqual([]);
  });

  it('names the item and where to delete it when deleting fails too', async () => {
    const target = await start({ faults: new FaultPlan().add({ kind: 'status', server: 'api', method: 'DELETE', status: 500, times: Infinity }) });
    const error = await cancelled(target);
    const left = [...emulator.state.articles.values()];
    expect(left).toHaveLength(1);
    expect(error.message).toContain(`The new figshare item 'Set' (id ${left[0]!.id}) was left behind and could not be removed`);
    expect(error.message).toContain(`https://figshare.com/account/articles/${left[0]!.id}`);
  });
});
