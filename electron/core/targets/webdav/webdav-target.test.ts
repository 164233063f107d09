import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeConfig } from '../../config.js';
import { FerryError } from '../../errors.js';
import { MemorySecretStore } from '../../keychain/memory.js';
import type { Target } from '../../target.js';
import { apacheUnavailableReason, startApacheWebdav, type ApacheWebdav } from '../../../../test/webdav/apache-webdav.js';
import { collect, ctx, drain, entriesFrom, md5, sha1, writeOptions } from '../../../../test/target-suite/test-entries.js';
import { createWebdavTarget, hashesFromChecksums, parseWebdavToken, webdavId } from './index.js';

const unavailable = apacheUnavailableReason();
if (unavailable) console.warn(`[webdav tests skipped] no real WebDAV server: ${unavailable}`);

describe('webdav token and checksums (no server)', () => {
  it('parses the JSON token and refuses bad ones without echoing the password', () => {
    expect(parseWebdavToken('{"url":"https://cloud.example.org/remote.php/dav/files/alice","username":"alice","password":"s3cret"}')).toEqual({
      url: 'https://cloud.example.org/remote.php/dav/files/alice/', username: 'alice', password: 's3cret',
    });
    for (const bad of ['s3cret', '{"url":"ftp://x/","username":"a","password":"s3cret"}', '{"url":"https://x/"}']) {
      const error = (() => { try { parseWebdavToken(bad); } catch (e) { return e as FerryError; } return null; })();
      expect(error?.status).toBe(401);
      expect(error?.message).not.toContain('s3cret');
    }
  });

  it('reads md5 and sha1 from oc:checksums only', () => {
    const sha = sha1('x');
    const m = md5('x');
    expect(hashesFromChecksums({ checksum: `SHA1:${sha} MD5:${m} ADLER32:0123abcd` })).toEqual({ sha1: sha, md5: m });
    expect(hashesFromChecksums('')).toEqual({});
    expect(hashesFromChecksums(undefined)).toEqual({});
  });
});

describe.skipIf(unavailable !== null)('webdav target against Apache mod_dav', () => {
  let server: ApacheWebdav;
  let target: Target;
  let token: string;

  beforeAll(async () => {
    server = await startApacheWebdav();
    token = JSON.stringify({ url: server.url, username: server.username, password: server.password });
    target = createWebdavTarget(makeConfig({ dataDir: '/nonexistent' }), new MemorySecretStore(), { retries: 1 });
    // Data made on the server's disk directly, as another client would have left it.
    await writeFile(path.join(server.dataDir, 'top.txt'), 'top');
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('describes itself honestly', () => {
    expect(target.info).toMatchObject({ name: 'webdav', readable_name: 'WebDAV', supported_hash_algorithms: ['md5', 'sha1'], credential: 'remote' });
  });

  it('creates a new top-level folder from an upload, then lists, details and reads it back', async () => {
    const big = Buffer.alloc(500_000, 9);
    const outcome = await target.write(ctx(token), null, entriesFrom({ 'Study/': null, 'Study/a.txt': 'alpha', 'Study/raw/': null, 'Study/raw/big.bin': big, 'Study/raw/deep/c.txt': 'sea' }, { withSize: false }), writeOptions());
    expect(outcome).toMatchObject({ created: ['Study/a.txt', 'Study/raw/big.bin', 'Study/raw/deep/c.txt'], fileErrors: [], newResource: { title: 'Study', id: webdavId('/Study') } });
    expect((await readFile(path.join(server.dataDir, 'Study/raw/big.bin'))).equals(big)).toBe(true);

    const again = await target.write(ctx(token), null, entriesFrom({ 'Study/x.txt': 'x' }), writeOptions());
    expect(again.newResource?.title).toBe('Study (2)');

    const top = await collect(target.list(ctx(token), { container: null }));
    expect(top.map((n) => [n.title, n.kind, n.container])).toEqual([['Study', 'container', null], ['Study (2)', 'container', null], ['top.txt', 'item', null]]);
    const all = await collect(target.list(ctx(token)));
    expect(all.map((n) => n.title)).toEqual(['Study', 'a.txt', 'raw', 'big.bin', 'deep', 'c.txt', 'Study (2)', 'x.txt', 'top.txt']);
    expect(all.find((n) => n.title === 'c.txt')?.container).toBe(webdavId('/Study/raw/deep'));
    for (const node of all) expect(node.id).not.toContain('.');

    const file = await target.detail(ctx(token), webdavId('/Study/a.txt'));
    expect(file).toMatchObject({ kind: 'item', title: 'a.txt', hashes: {}, extra: { size: 5, materialized_path: '/Study/a.txt', provider: 'webdav' } });
    expect(file.date_modified).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000000Z$/);

    const read = await target.read(ctx(token), webdavId('/Study'));
    const files = await drain(read.entries);
    expect([...files.keys()]).toEqual(['Study', 'Study/a.txt', 'Study/raw', 'Study/raw/big.bin', 'Study/raw/deep', 'Study/raw/deep/c.txt']);
    expect(files.get('Study/raw/big.bin')?.equals(big)).toBe(true);
    // no temp names left behind
    expect(all.some((n) => n.title.includes('.ferry-'))).toBe(false);
  });

  it('honours ignore and update (replacing only differing bytes, compared by download)', async () => {
    const folder = webdavId('/Study');
    const ignored = await target.write(ctx(token), folder, entriesFrom({ 'a.txt': 'changed', 'new.txt': 'n' }), writeOptions('ignore'));
    expect(ignored).toMatchObject({ created: ['new.txt'], ignored: ['a.txt'], updated: [] });
    expect(await readFile(path.join(server.dataDir, 'Study/a.txt'), 'utf8')).toBe('alpha');
    const updated = await target.write(ctx(token), folder, entriesFrom({ 'a.txt': 'changed', 'new.txt': 'n' }), writeOptions('update'));
    expect(updated).toMatchObject({ created: [], updated: ['a.txt'], ignored: ['new.txt'] });
    expect(await readFile(path.join(server.dataDir, 'Study/a.txt'), 'utf8')).toBe('changed');
  });

  it('reports hashes the server stores as oc:checksums (a dead property on Apache)', async () => {
    const sha = sha1('alpha2');
    const m = md5('alpha2');
    await target.write(ctx(token), webdavId('/Study'), entriesFrom({ 'sum.txt': 'alpha2' }), writeOptions());
    const auth = `Basic ${Buffer.from(`${server.username}:${server.password}`).toString('base64')}`;
    const response = await fetch(`${server.url}Study/sum.txt`, {
      method: 'PROPPATCH',
      headers: { authorization: auth, 'content-type': 'application/xml' },
      body: `<?xml version="1.0"?><d:propertyupdate xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:set><d:prop><oc:checksums><oc:checksum>SHA1:${sha} MD5:${m} ADLER32:0a0b0c0d</oc:checksum></oc:checksums></d:prop></d:set></d:propertyupdate>`,
    });
    expect(response.status).toBe(207);
    expect((await target.detail(ctx(token), webdavId('/Study/sum.txt'))).hashes).toEqual({ md5: m, sha1: sha });
    // update with the same bytes: decided by the stored MD5, no download needed
    const same = await target.write(ctx(token), webdavId('/Study'), entriesFrom({ 'sum.txt': 'alpha2' }, { withMd5: true }), writeOptions('update'));
    expect(same.ignored).toEqual(['sum.txt']);
  });

  it('reads a single file as one entry', async () => {
    const read = await target.read(ctx(token), webdavId('/top.txt'));
    expect([...(await drain(read.entries)).entries()]).toEqual([['top.txt', Buffer.from('top')]]);
  });

  it('answers 404 for a missing path and 401 for a wrong password', async () => {
    const missing = await target.detail(ctx(token), webdavId('/nope')).catch((e: unknown) => e as FerryError);
    expect(missing).toBeInstanceOf(FerryError);
    expect((missing as FerryError).status).toBe(404);
    const badToken = JSON.stringify({ url: server.url, username: server.username, password: 'wrong' });
    const denied = await collect(target.list(ctx(badToken))).catch((e: unknown) => e as FerryError);
    expect((denied as FerryError).status).toBe(401);
    expect((denied as FerryError).message).toMatch(/token is invalid or expired/);
    expect((denied as FerryError).message).not.toContain('wrong');
  });

  it('refuses to write into a file', async () => {
    const error = await target.write(ctx(token), webdavId('/top.txt'), entriesFrom({ 'x.txt': 'x' }), writeOptions()).catch((e: unknown) => e as FerryError);
    expect((error as FerryError).status).toBe(400);
  });
});
