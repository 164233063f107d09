import { execFileSync } from 'node:child_process';
import { mkdir, readdir, readFile, stat, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeConfig } from '../../config.js';
import { CancelledError, FerryError } from '../../errors.js';
import { MemorySecretStore } from '../../keychain/memory.js';
import type { Entry, Target } from '../../target.js';
import { FaultPlan } from '../../../../test/emulators/shared/faults.js';
import { startWebdavFaultProxy } from '../../../../test/webdav/fault-proxy.js';
import type { RealWebdav } from '../../../../test/webdav/process.js';
import { REAL_WEBDAV_SERVERS, sendsDirectPuts } from '../../../../test/webdav/servers.js';
import { collect, ctx, drain, entriesFrom, md5, sha1, withPlanOf, writeOptions } from '../../../../test/target-suite/test-entries.js';
import { sabreReason } from './dav-errors.js';
import { createWebdavTarget, hashesFromChecksums, parseWebdavToken, webdavId } from './index.js';
import { MAX_NAME_BYTES, isAbandoned, isFerryTempName, tempNameFor } from './temp-names.js';

/** Nextcloud's default rules (FilenameValidator) and ownCloud 10's regex, as a name check. */
function reservedByNextcloudOrOwncloud(name: string): string | null {
  const lower = name.toLowerCase();
  if (name.trim() === '' || name.trim() === '.' || name.trim() === '..') return 'empty or dot';
  if (Buffer.byteLength(name) > 250) return 'longer than 250 bytes';
  if (lower === '.htaccess' || lower.startsWith('.ht')) return '.htaccess / .ht*';
  if (/\.(part|filepart)$/.test(lower)) return '.part / .filepart';
  if (/[\\/<>:"|?*]/.test(name) || [...name].some((c) => c.charCodeAt(0) < 32)) return 'forbidden character';
  if (name !== name.trim() || name.endsWith('.')) return 'leading/trailing space or trailing dot';
  return null;
}

describe('webdav token, checksums, temp names and error bodies (no server)', () => {
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

  it('makes temporary names no server reserves, ending with the destination name, within 250 bytes', () => {
    for (const name of ['a.txt', 'data.csv', 'archive.tar.gz', 'CON', 'x', `${'é'.repeat(200)}.bin`, `${'a'.repeat(300)}.txt`, 'notes.txt.bak']) {
      const temp = tempNameFor(name);
      expect(reservedByNextcloudOrOwncloud(temp), temp).toBeNull();
      expect(Buffer.byteLength(temp)).toBeLessThanOrEqual(MAX_NAME_BYTES);
      expect(isFerryTempName(temp)).toBe(true);
      expect(temp.endsWith(name.length > 200 ? name.slice(-100) : name)).toBe(true);
    }
    expect(isFerryTempName('.ferry-notes.txt')).toBe(false);
    expect(isFerryTempName('a.txt')).toBe(false);
  });

  it('sweeps only temp names older than an hour whose bytes stopped changing ten minutes ago', () => {
    const now = Date.UTC(2026, 0, 1, 12);
    const old = tempNameFor('a.txt', now - 2 * 3600_000);
    expect(isAbandoned(old, new Date(now - 20 * 60_000), now)).toBe(true);
    expect(isAbandoned(old, new Date(now - 60_000), now)).toBe(false); // still being written
    expect(isAbandoned(tempNameFor('a.txt', now - 60_000), new Date(now - 86400_000), now)).toBe(false); // began a minute ago
    expect(isAbandoned('a.txt', new Date(0), now)).toBe(false);
    // the name earlier versions left behind (issue #17.3): no stamp, so by its bytes' age alone
    expect(isFerryTempName('.raw.bin.ferry-0123456789ab.part')).toBe(true);
    expect(isAbandoned('.raw.bin.ferry-0123456789ab.part', new Date(now - 2 * 3600_000), now)).toBe(true);
    expect(isAbandoned('.raw.bin.ferry-0123456789ab.part', new Date(now - 60_000), now)).toBe(false);
    expect(isFerryTempName('raw.part')).toBe(false);
  });

  it("passes on the sentence of a Sabre error body (Nextcloud's InvalidPath)", () => {
    const body = `<?xml version="1.0" encoding="utf-8"?>
<d:error xmlns:d="DAV:" xmlns:s="http://sabredav.org/ns" xmlns:o="http://owncloud.org/ns">
  <s:exception>OCA\\DAV\\Connector\\Sabre\\Exception\\InvalidPath</s:exception>
  <s:message>&quot;.part&quot; is a forbidden file type.</s:message>
  <o:retry xmlns:o="o:">false</o:retry>
  <o:reason xmlns:o="o:">&quot;.part&quot; is a forbidden file type.</o:reason>
</d:error>`;
    expect(sabreReason(body)).toBe('".part" is a forbidden file type.');
    expect(sabreReason('<html><body><h1>Forbidden</h1></body></html>')).toBeNull();
  });
});

/** Every file below `dir` named as a Ferry temp file, today's or the earlier '.<name>.ferry-<hex>.part'. */
async function ferryTempsOn(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const item of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (isFerryTempName(item.name) || /\.ferry-|\.part$/.test(item.name)) found.push(path.join(item.parentPath, item.name));
  }
  return found;
}

/** A file of `size` bytes whose stream sends `before` bytes, calls `then()`, and sends nothing more. */
function stallingEntry(name: string, size: number, before: number, then: () => void): Entry {
  return {
    path: name,
    kind: 'file',
    size,
    mtime: null,
    hashes: {},
    open: async () => {
      let sent = 0;
      return new Readable({
        read() {
          if (sent >= before) {
            then();
            return;
          }
          const chunk = Buffer.alloc(Math.min(64 * 1024, before - sent), 7);
          sent += chunk.length;
          this.push(chunk);
        },
      });
    },
  };
}

async function* one(entry: Entry): AsyncIterable<Entry> {
  yield entry;
}

for (const kind of REAL_WEBDAV_SERVERS) {
  describe.skipIf(kind.unavailable !== null)(`webdav target against ${kind.name}`, () => {
    let server: RealWebdav;
    let target: Target;
    let token: string;
    /** the request that puts a file's bytes in place: its one PUT on mod_dav_fs, else the MOVE after a PUT to a temp name */
    const finishing = sendsDirectPuts(kind) ? 'PUT' : 'MOVE';
    const own = (p: string) => {
      if (kind.ownerOfFiles) execFileSync('chown', ['-R', kind.ownerOfFiles, p]);
    };

    beforeAll(async () => {
      server = await kind.start();
      token = JSON.stringify({ url: server.url, username: server.username, password: server.password });
      target = createWebdavTarget(makeConfig({ dataDir: '/nonexistent' }), new MemorySecretStore(), { retries: 1, timeoutMs: 10_000 });
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
      expect(file).toMatchObject({ kind: 'item', title: 'a.txt', extra: { size: 5, materialized_path: '/Study/a.txt', provider: 'webdav' } });
      expect(file.date_modified).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000000Z$/);

      const read = await target.read(ctx(token), webdavId('/Study'));
      const files = await drain(read.entries);
      expect([...files.keys()]).toEqual(['Study', 'Study/a.txt', 'Study/raw', 'Study/raw/big.bin', 'Study/raw/deep', 'Study/raw/deep/c.txt']);
      expect(files.get('Study/raw/big.bin')?.equals(big)).toBe(true);
      expect(await ferryTempsOn(server.dataDir)).toEqual([]);
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

    it("an update keeps the file's id where the server has one (oc:fileid): its shares and versions hang on it", async () => {
      await mkdir(path.join(server.dataDir, 'Upd'));
      own(path.join(server.dataDir, 'Upd'));
      await target.write(ctx(token), webdavId('/Upd'), entriesFrom({ 'v.txt': 'version one' }), writeOptions());
      const before = (await target.detail(ctx(token), webdavId('/Upd/v.txt'))).extra.file_id;
      const outcome = await target.write(ctx(token), webdavId('/Upd'), entriesFrom({ 'v.txt': 'version two!' }), writeOptions('update'));
      expect(outcome).toMatchObject({ updated: ['v.txt'], fileErrors: [] });
      expect(await readFile(path.join(server.dataDir, 'Upd/v.txt'), 'utf8')).toBe('version two!');
      const after = (await target.detail(ctx(token), webdavId('/Upd/v.txt'))).extra.file_id;
      if (kind.name.includes('Nextcloud')) expect(before).not.toBeNull();
      expect(after).toBe(before);
      expect(await ferryTempsOn(path.join(server.dataDir, 'Upd'))).toEqual([]);
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

    it(`keeps modification times where the server lets it (${kind.keepsMtime}), and otherwise says which files lost theirs`, async () => {
      const when = new Date('2021-03-04T05:06:07.000Z');
      const entries = async function* (): AsyncIterable<Entry> {
        for (const name of ['m1.txt', 'm2.txt']) yield { path: name, kind: 'file', size: 2, mtime: when, hashes: {}, open: async () => Readable.from([Buffer.from('mm')]) };
      };
      const outcome = await target.write(ctx(token), webdavId('/Study'), entries(), writeOptions());
      expect(outcome.created).toEqual(['m1.txt', 'm2.txt']);
      expect(outcome.fileErrors).toEqual([]);
      const onDisk = (await stat(path.join(server.dataDir, 'Study/m1.txt'))).mtime;
      if (kind.keepsMtime === 'x-oc-mtime') {
        expect(onDisk.toISOString()).toBe(when.toISOString());
        expect((await target.detail(ctx(token), webdavId('/Study/m1.txt'))).date_modified).toBe('2021-03-04T05:06:07.000000Z');
        expect(outcome.notes ?? []).toEqual([]);
      } else {
        expect(onDisk.getTime()).not.toBe(when.getTime());
        expect(outcome.notes).toHaveLength(1);
        expect(outcome.notes?.[0]).toMatch(/does not let clients set modification times.*2 files carry the time of the upload instead of their own: 'm1.txt', 'm2.txt'/);
      }
    });

    it('uploads a file dated 1970 (a time Nextcloud refuses in X-OC-MTime) without sending it, and reports the time as not kept', async () => {
      await mkdir(path.join(server.dataDir, 'Epoch'));
      own(path.join(server.dataDir, 'Epoch'));
      const entry: Entry = { path: 'epoch.txt', kind: 'file', size: 1, mtime: new Date(5000), hashes: {}, open: async () => Readable.from([Buffer.from('e')]) };
      const outcome = await target.write(ctx(token), webdavId('/Epoch'), one(entry), writeOptions());
      expect(outcome).toMatchObject({ created: ['epoch.txt'], fileErrors: [] });
      expect(outcome.notes?.[0]).toMatch(/1 file carries the time of the upload instead of its own: 'epoch.txt'/);
    });

    it('hides Ferry temp names from listings and sweeps abandoned ones at the next write into their folder', async () => {
      const dir = path.join(server.dataDir, 'Sweep');
      await mkdir(dir);
      const abandoned = tempNameFor('big.bin', Date.now() - 3 * 3600_000);
      // as an earlier version left it; never on a server with Nextcloud's rules, which refused every such PUT
      const legacy = kind.name.includes('Nextcloud') ? null : '.raw.bin.ferry-0123456789ab.part';
      const fresh = tempNameFor('other.bin');
      const hoursAgo = new Date(Date.now() - 2 * 3600_000);
      for (const name of [abandoned, legacy]) {
        if (!name) continue;
        await writeFile(path.join(dir, name), Buffer.alloc(1000));
        await utimes(path.join(dir, name), hoursAgo, hoursAgo);
      }
      await writeFile(path.join(dir, fresh), Buffer.alloc(10));
      own(dir);
      expect((await collect(target.list(ctx(token), { container: webdavId('/Sweep') }))).map((n) => n.title)).toEqual([]);
      await target.write(ctx(token), webdavId('/Sweep'), entriesFrom({ 'new.txt': 'n' }), writeOptions());
      // the abandoned ones are gone; one a running upload may own is left alone
      expect((await readdir(dir)).sort()).toEqual([fresh, 'new.txt'].sort());
    });

    if (kind.name.includes('Nextcloud')) {
      it('uploads into a server with Nextcloud rules, and passes on its sentence for a name it refuses', async () => {
        // Ferry refuses these names up front (WebdavTarget.namingRules; the contract suite's
        // write rules): planned as for a server whose refusals Ferry does not know (an admin's
        // own forbidden_filename_* settings), they reach the server, which answers per file
        const files = { 'ok.txt': 'fine', 'download.part': 'x', '.htaccess': 'y' };
        const unknownRules = await withPlanOf({ info: target.info }, webdavId('/Study'), entriesFrom(files));
        const outcome = await target.write(ctx(token), webdavId('/Study'), entriesFrom(files), unknownRules);
        expect(outcome.created).toEqual(['ok.txt']);
        expect(outcome.fileErrors).toEqual([
          { path: 'download.part', error: `The WebDAV server refused '/Study/download.part': ".part" is a forbidden file type.` },
          { path: '.htaccess', error: `The WebDAV server refused '/Study/.htaccess': ".htaccess" is a forbidden file or folder name.` },
        ]);
        expect(await ferryTempsOn(path.join(server.dataDir, 'Study'))).toEqual([]);
      });
    }

    it('leaves nothing of its own on the server when a job is cancelled mid-upload', async () => {
      await mkdir(path.join(server.dataDir, 'Cancel'));
      own(path.join(server.dataDir, 'Cancel'));
      const controller = new AbortController();
      const entry = stallingEntry('big.bin', 8_000_000, 2_000_000, () => setTimeout(() => controller.abort(), 300));
      const error = await target
        .write({ token, signal: controller.signal }, webdavId('/Cancel'), one(entry), { ...writeOptions(), signal: controller.signal })
        .then(() => null, (e: unknown) => e);
      expect(error).toBeInstanceOf(CancelledError);
      expect(await ferryTempsOn(path.join(server.dataDir, 'Cancel'))).toEqual([]);
      expect(await readdir(path.join(server.dataDir, 'Cancel'))).not.toContain('big.bin');
    });

    it('leaves nothing of its own on the server, and reports the file failed, when the connection is cut mid-upload', async () => {
      await mkdir(path.join(server.dataDir, 'Cut'));
      own(path.join(server.dataDir, 'Cut'));
      const proxy = await startWebdavFaultProxy(server.url, new FaultPlan(), { cutPutsAfterBytes: 1_000_000 });
      try {
        const viaProxy = JSON.stringify({ url: proxy.url, username: server.username, password: server.password });
        const big = Buffer.alloc(4_000_000, 3);
        const outcome = await target.write(ctx(viaProxy), webdavId('/Cut'), entriesFrom({ 'big.bin': big, 'small.txt': 's' }), writeOptions());
        expect(outcome.created).toEqual(['small.txt']);
        expect(outcome.fileErrors.map((f) => f.path)).toEqual(['big.bin']);
        expect(outcome.fileErrors[0]?.error).toMatch(/WebDAV server/);
        expect(await ferryTempsOn(path.join(server.dataDir, 'Cut'))).toEqual([]);
        expect(await readdir(path.join(server.dataDir, 'Cut'))).toEqual(['small.txt']);
      } finally {
        await proxy.close();
      }
    });

    it('leaves a file that appeared at its name during the upload as it is, and reports the upload failed', async () => {
      await mkdir(path.join(server.dataDir, 'Race'));
      own(path.join(server.dataDir, 'Race'));
      const theirs = path.join(server.dataDir, 'Race', 'a.txt');
      // listed empty at the write's start; another client's file lands there before the bytes go
      const entry: Entry = {
        path: 'a.txt',
        kind: 'file',
        size: 5,
        mtime: null,
        hashes: {},
        open: async () => {
          await writeFile(theirs, 'their file');
          own(theirs);
          return Readable.from([Buffer.from('alpha')]);
        },
      };
      const outcome = await target.write(ctx(token), webdavId('/Race'), one(entry), writeOptions());
      expect(outcome.created).toEqual([]);
      expect(outcome.fileErrors).toEqual([{ path: 'a.txt', error: "'a.txt' appeared on the server during the upload; it was left as it is." }]);
      expect(await readFile(theirs, 'utf8')).toBe('their file');
      expect(await ferryTempsOn(path.join(server.dataDir, 'Race'))).toEqual([]);
    });

    it('counts a file as written when the answer to its upload was lost after it landed', async () => {
      await mkdir(path.join(server.dataDir, 'Lost'));
      own(path.join(server.dataDir, 'Lost'));
      let lost = 0;
      // the first request that puts a.txt's bytes in place lands, and its answer is lost
      const proxy = await startWebdavFaultProxy(server.url, new FaultPlan(), { loseAnswer: (method) => method === finishing && lost++ === 0 });
      try {
        const viaProxy = JSON.stringify({ url: proxy.url, username: server.username, password: server.password });
        const outcome = await target.write(ctx(viaProxy), webdavId('/Lost'), entriesFrom({ 'a.txt': 'alpha' }), writeOptions());
        // a PUT is tried again (and refused, 412: the name is taken, by its own bytes); a MOVE is not, its landing is looked for
        expect(lost).toBe(sendsDirectPuts(kind) ? 2 : 1);
        expect(outcome.fileErrors).toEqual([]);
        expect(outcome.created).toEqual(['a.txt']);
        expect(await readFile(path.join(server.dataDir, 'Lost', 'a.txt'), 'utf8')).toBe('alpha');
        expect(await ferryTempsOn(path.join(server.dataDir, 'Lost'))).toEqual([]);
      } finally {
        await proxy.close();
      }
    });

    it(finishing === 'PUT' ? 'writes each file with one PUT onto its name, and reports a file whose PUT fails, leaving nothing there' : 'deletes its temp file when the MOVE into place fails, and reports the file failed', async () => {
      const folder = `No${finishing === 'PUT' ? 'Put' : 'Move'}`;
      await mkdir(path.join(server.dataDir, folder));
      own(path.join(server.dataDir, folder));
      const plan = new FaultPlan().add({ kind: 'status', method: finishing, status: 503, times: Infinity });
      const proxy = await startWebdavFaultProxy(server.url, plan);
      try {
        const viaProxy = JSON.stringify({ url: proxy.url, username: server.username, password: server.password });
        const outcome = await target.write(ctx(viaProxy), webdavId(`/${folder}`), entriesFrom({ 'a.txt': 'alpha' }), writeOptions());
        expect(outcome.created).toEqual([]);
        expect(outcome.fileErrors).toEqual([{ path: 'a.txt', error: 'The WebDAV server failed with HTTP 503.' }]);
        expect(await readdir(path.join(server.dataDir, folder))).toEqual([]);
      } finally {
        await proxy.close();
      }
    });

    it.skipIf(!sendsDirectPuts(kind))('keeps the temp name and MOVE where mod_dav_fs is loaded but does not store the files (no file shows its own property)', async () => {
      // as an Apache whose location is another repository (mod_dav_svn, davrods) answers, with mod_dav_fs loaded beside it:
      // the same OPTIONS, and no mod_dav_fs property on any file
      await mkdir(path.join(server.dataDir, 'Other'));
      await writeFile(path.join(server.dataDir, 'Other', 'there.txt'), 'already there');
      own(path.join(server.dataDir, 'Other'));
      const sent: string[] = [];
      const proxy = await startWebdavFaultProxy(server.url, new FaultPlan(), {
        rewriteAnswer: { method: 'PROPFIND', rewrite: (body) => body.replace(/<(\w+):executable[^>]*>[TF]<\/\1:executable>/g, '') },
        onExchange: ({ method, path: p }) => sent.push(`${method} ${decodeURIComponent(p).split('/').pop()}`),
      });
      try {
        const viaProxy = JSON.stringify({ url: proxy.url, username: server.username, password: server.password });
        const outcome = await target.write(ctx(viaProxy), webdavId('/Other'), entriesFrom({ 'a.txt': 'alpha', 'b.txt': 'beta' }), writeOptions());
        expect(outcome.created).toEqual(['a.txt', 'b.txt']);
        expect(sent.filter((r) => r.startsWith('MOVE'))).toHaveLength(2);
        expect(sent.filter((r) => r.startsWith('PUT')).every((r) => isFerryTempName(r.slice(4)))).toBe(true);
      } finally {
        await proxy.close();
      }
    });

    it.skipIf(!sendsDirectPuts(kind))('learns from the first file it wrote that mod_dav_fs stores the folder, and sends the rest as one PUT each', async () => {
      await mkdir(path.join(server.dataDir, 'Fresh'));
      own(path.join(server.dataDir, 'Fresh'));
      const sent: string[] = [];
      const proxy = await startWebdavFaultProxy(server.url, new FaultPlan(), { onExchange: ({ method, path: p }) => sent.push(`${method} ${decodeURIComponent(p).split('/').pop()}`) });
      try {
        const viaProxy = JSON.stringify({ url: proxy.url, username: server.username, password: server.password });
        const files = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`f${String(i).padStart(2, '0')}.txt`, `file ${i}`]));
        const writer = createWebdavTarget(makeConfig({ dataDir: '/nonexistent' }), new MemorySecretStore(), { retries: 1, timeoutMs: 10_000 });
        const outcome = await writer.write(ctx(viaProxy), webdavId('/Fresh'), entriesFrom(files), writeOptions());
        expect(outcome.created).toEqual(Object.keys(files));
        // an empty folder shows nothing: the first file goes alone to a temp name, then one look
        // at it, and the rest straight onto their names
        const moves = sent.filter((r) => r.startsWith('MOVE')).length;
        expect(moves).toBeGreaterThanOrEqual(1);
        expect(moves).toBeLessThan(12);
        expect(sent.filter((r) => r.startsWith('PUT') && !isFerryTempName(r.slice(4)))).toHaveLength(12 - moves);
        for (const [name, text] of Object.entries(files)) expect(await readFile(path.join(server.dataDir, 'Fresh', name), 'utf8')).toBe(text);
      } finally {
        await proxy.close();
      }
    });

    it.skipIf(!sendsDirectPuts(kind))('starts a write into a folder an earlier write found mod_dav_fs storing already knowing it (as the provenance record is written)', async () => {
      const sent: string[] = [];
      const proxy = await startWebdavFaultProxy(server.url, new FaultPlan(), { onExchange: ({ method, headers }) => sent.push(`${method}${headers.depth !== undefined ? ` ${headers.depth}` : ''}`) });
      try {
        const viaProxy = JSON.stringify({ url: proxy.url, username: server.username, password: server.password });
        const writer = createWebdavTarget(makeConfig({ dataDir: '/nonexistent' }), new MemorySecretStore(), { retries: 1, timeoutMs: 10_000 });
        // files only in subfolders: the new folder's own listing will show none
        const first = await writer.write(ctx(viaProxy), null, entriesFrom({ 'Known/a/x.txt': 'x', 'Known/b/y.txt': 'y' }), writeOptions());
        expect(first.fileErrors).toEqual([]);
        sent.length = 0;
        const second = await writer.write(ctx(viaProxy), first.newResource!.id, entriesFrom({ 'z.txt': 'z' }), writeOptions());
        expect(second.created).toEqual(['z.txt']);
        // the container listed (its entries: two folders), one PUT onto the name, its verification; no look, no MOVE
        expect(sent.sort()).toEqual(['OPTIONS', 'PROPFIND 1', 'PROPFIND 1', 'PUT']);
      } finally {
        await proxy.close();
      }
    });

  });
}

// Apache stores any dead property a client sets; rclone and Sabre's plain FS tree store none.
describe.skipIf(REAL_WEBDAV_SERVERS[0]?.unavailable !== null)('webdav oc:checksums (Apache mod_dav keeps them as a dead property)', () => {
  let server: RealWebdav;
  let target: Target;
  let token: string;
  beforeAll(async () => {
    server = await REAL_WEBDAV_SERVERS[0]!.start();
    token = JSON.stringify({ url: server.url, username: server.username, password: server.password });
    target = createWebdavTarget(makeConfig({ dataDir: '/nonexistent' }), new MemorySecretStore(), { retries: 1 });
    await mkdir(path.join(server.dataDir, 'Study'));
    if (REAL_WEBDAV_SERVERS[0]!.ownerOfFiles) execFileSync('chown', ['-R', REAL_WEBDAV_SERVERS[0]!.ownerOfFiles, server.dataDir]);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('reports hashes the server stores as oc:checksums, and decides an update by the stored MD5', async () => {
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
    const same = await target.write(ctx(token), webdavId('/Study'), entriesFrom({ 'sum.txt': 'alpha2' }, { withMd5: true }), writeOptions('update'));
    expect(same.ignored).toEqual(['sum.txt']);
  });
});
