import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeConfig } from '../../config.js';
import { MemorySecretStore } from '../../keychain/memory.js';
import type { Entry, Target } from '../../target.js';
import { FaultPlan } from '../../../../test/emulators/shared/faults.js';
import { startWebdavFaultProxy, type FaultProxy } from '../../../../test/webdav/fault-proxy.js';
import type { RealWebdav } from '../../../../test/webdav/process.js';
import { REAL_WEBDAV_SERVERS, sendsDirectPuts } from '../../../../test/webdav/servers.js';
import { fastPathOn } from '../../fast-paths.js';
import { collect, ctx, drain, writeOptions } from '../../../../test/target-suite/test-entries.js';
import { webdavId } from './index.js';
import { createWebdavTarget } from './index.js';
import { isFerryTempName } from './temp-names.js';

/**
 * "What Ferry sends": the requests of a listing, a download, an upload into a container and a
 * new top-level upload, recorded at a proxy in front of each real server and checked against
 * the Requests table of docs/targets/webdav.md — only the rows below, no name a server
 * reserves, nothing the server refuses, and one PROPFIND per folder.
 */
interface Sent {
  method: string;
  path: string;
  name: string;
  depth?: string;
  destinationName?: string;
  overwrite?: string;
  mtime?: string;
  ifNoneMatch?: string;
  status: number;
  /** when the request reached the proxy, and when the server's answer did (one count: see fault-proxy.ts) */
  arrived: number;
  answered: number;
  /** set by the test: a PUT onto the file's own name it expects (an update in place, or a server that writes PUTs atomically) */
  inPlace?: boolean;
}

/** The table's rows: method → what may be said of the request (true = allowed). */
const ROWS: Record<string, (r: Sent) => boolean> = {
  // Depth 0 (one resource) or 1 (a folder's children); never infinity, which Apache refuses (403)
  PROPFIND: (r) => r.depth === '0' || r.depth === '1',
  GET: () => true,
  // once a write, of the destination: what the server is (server-traits.ts)
  OPTIONS: (r) => r.depth === undefined,
  // to a temporary name, which is then moved into place; or onto the file itself: an update on a
  // server that gives files a stable id (oc:fileid), or any file on a server that writes PUTs
  // atomically, a new one with If-None-Match: * (see inPlace below)
  PUT: (r) => isFerryTempName(r.name) || r.inPlace === true,
  MOVE: (r) => isFerryTempName(r.name) && !isFerryTempName(r.destinationName ?? '') && (r.overwrite === 'F' || r.overwrite === 'T'),
  MKCOL: () => true,
  // Ferry deletes nothing but its own temporary files
  DELETE: (r) => isFerryTempName(r.name),
  // only a file's modification time, where X-OC-MTime was not accepted
  PROPPATCH: (r) => !isFerryTempName(r.name),
};

/** A name Nextcloud (FilenameValidator defaults), ownCloud 10 or a stock Apache refuses. */
function reserved(name: string): boolean {
  const lower = name.toLowerCase();
  return name.trim() === '' || name.trim() !== name || Buffer.byteLength(name) > 250 || lower.startsWith('.ht') || /\.(part|filepart)$/.test(lower) || /[\\/<>:"|?*]/.test(name) || [...name].some((c) => c.charCodeAt(0) < 32);
}

const lastSegment = (p: string) => decodeURIComponent(p.replace(/\/+$/, '').split('/').pop() ?? '');

function entries(files: Record<string, string | null>): AsyncIterable<Entry> {
  return (async function* () {
    for (const [p, content] of Object.entries(files)) {
      if (content === null) yield { path: p, kind: 'folder', size: null, mtime: null, hashes: {}, open: () => Promise.reject(new Error('folder')) };
      else yield { path: p, kind: 'file', size: Buffer.byteLength(content), mtime: new Date('2022-02-02T02:02:02Z'), hashes: {}, open: async () => Readable.from([Buffer.from(content)]) };
    }
  })();
}

for (const kind of REAL_WEBDAV_SERVERS) {
  describe.skipIf(kind.unavailable !== null)(`what Ferry sends to ${kind.name}`, () => {
    let server: RealWebdav;
    let proxy: FaultProxy;
    let target: Target;
    let token: string;
    let sent: Sent[] = [];

    beforeAll(async () => {
      server = await kind.start();
      await mkdir(path.join(server.dataDir, 'Project/data'), { recursive: true });
      await writeFile(path.join(server.dataDir, 'Project/readme.txt'), 'read me');
      await writeFile(path.join(server.dataDir, 'Project/data/one.csv'), 'a,b\n1,2\n');
      if (kind.ownerOfFiles) execFileSync('chown', ['-R', kind.ownerOfFiles, server.dataDir]);
      proxy = await startWebdavFaultProxy(server.url, new FaultPlan(), {
        onExchange: ({ method, path: p, headers, status, arrived, answered }) => {
          const destination = typeof headers.destination === 'string' ? new URL(headers.destination).pathname : undefined;
          sent.push({
            method,
            path: p,
            name: lastSegment(new URL(p, 'http://x').pathname),
            depth: headers.depth as string | undefined,
            destinationName: destination ? lastSegment(destination) : undefined,
            overwrite: headers.overwrite as string | undefined,
            mtime: headers['x-oc-mtime'] as string | undefined,
            ifNoneMatch: headers['if-none-match'] as string | undefined,
            status,
            arrived,
            answered,
          });
        },
      });
      token = JSON.stringify({ url: proxy.url, username: server.username, password: server.password });
      target = createWebdavTarget(makeConfig({ dataDir: '/nonexistent' }), new MemorySecretStore(), { retries: 0 });
    });
    afterAll(async () => {
      await proxy?.close();
      await server?.stop();
    });

    const direct = sendsDirectPuts(kind);
    const check = (what: string) => {
      for (const r of sent) {
        if (direct && r.method === 'PUT' && !isFerryTempName(r.name)) r.inPlace = true;
        const row = ROWS[r.method];
        expect(row, `${what}: ${r.method} ${r.path} is in no row of the table`).toBeDefined();
        expect(row!(r), `${what}: ${r.method} ${r.path} (depth ${r.depth}, overwrite ${r.overwrite}) breaks its row`).toBe(true);
        for (const name of [r.name, r.destinationName].filter((n): n is string => !!n)) expect(reserved(name), `${what}: '${name}' is a reserved name`).toBe(false);
        // every request is one the server takes; a PROPPATCH's refusal sits inside its 207
        expect(r.status, `${what}: ${r.method} ${r.path} was refused`).toBeLessThan(400);
      }
      return sent.map((r) => `${r.method}${r.depth !== undefined ? ` ${r.depth}` : ''}`);
    };

    it('a listing: one PROPFIND Depth 1 per folder', async () => {
      sent = [];
      const nodes = await collect(target.list(ctx(token)));
      expect(nodes.map((n) => n.title)).toEqual(['Project', 'data', 'one.csv', 'readme.txt']);
      expect(check('listing')).toEqual(['PROPFIND 1', 'PROPFIND 1', 'PROPFIND 1']);
    });

    it('a download: PROPFIND Depth 0 of the resource, Depth 1 per folder, one GET per file', async () => {
      sent = [];
      const read = await target.read(ctx(token), webdavId('/Project'));
      await drain(read.entries);
      expect(check('download')).toEqual(['PROPFIND 0', 'PROPFIND 1', 'PROPFIND 1', 'GET', 'GET']);
    });

    it(direct ? 'an upload into a container: each existing folder listed once, the container too, one PUT onto each new name with If-None-Match: *' : 'an upload into a container: each existing folder listed once, the container too, PUT to a temp name then MOVE', async () => {
      sent = [];
      const outcome = await target.write(ctx(token), webdavId('/Project'), entries({ 'data': null, 'data/two.csv': 'c,d\n', 'data/three.csv': 'e,f\n', 'new': null, 'new/x.txt': 'x' }), writeOptions());
      expect(outcome.fileErrors).toEqual([]);
      const requests = check('upload into a container');
      const propfinds = requests.filter((r) => r.startsWith('PROPFIND'));
      // the container with its children (Depth 1: its own entry says it is a folder), data's children (Depth 1);
      // 'new' was made by this write; then once per folder written to, for the server's record of what it stored (verify after write)
      expect(propfinds).toEqual(['PROPFIND 1', 'PROPFIND 1', 'PROPFIND 1', 'PROPFIND 1']);
      expect([...outcome.stored!].map(([path, record]) => [path, 'size' in record ? record.size : record.unverifiable])).toEqual([
        ['data/two.csv', 4],
        ['data/three.csv', 4],
        ['new/x.txt', 1],
      ]);
      expect(requests.filter((r) => r === 'OPTIONS')).toHaveLength(fastPathOn('direct-puts') ? 1 : 0);
      expect(requests.filter((r) => r === 'PUT')).toHaveLength(3);
      expect(requests.filter((r) => r === 'MOVE')).toHaveLength(direct ? 0 : 3);
      expect(requests.filter((r) => r === 'MKCOL')).toHaveLength(1);
      for (const put of sent.filter((r) => r.method === 'PUT')) {
        expect(put.mtime).toBe(String(Date.parse('2022-02-02T02:02:02Z') / 1000));
        expect(isFerryTempName(put.name)).toBe(!direct);
        // a new name, so nothing there may be replaced: the precondition on the PUT itself, or the MOVE's Overwrite: F
        expect(put.ifNoneMatch).toBe(direct ? '*' : undefined);
      }
      for (const move of sent.filter((r) => r.method === 'MOVE')) expect(move.overwrite).toBe('F');
      // PROPPATCH at most once per write: a server that refuses it is not asked again
      // (none where the server is known to refuse it: mod_dav_fs, server-traits.ts)
      expect(requests.filter((r) => r === 'PROPPATCH').length).toBe(kind.keepsMtime === 'x-oc-mtime' || direct ? 0 : 1);
    });

    const fileIds = kind.name.includes('Nextcloud');
    const inPlace = fileIds || direct;
    it(inPlace ? 'an update on a server with file ids, or one that writes PUTs atomically: one PUT onto the file, without If-None-Match' : 'an update: a changed file PUT to a temp name and MOVEd over it with Overwrite: T', async () => {
      sent = [];
      const outcome = await target.write(ctx(token), webdavId('/Project'), entries({ 'readme.txt': 'read me, again' }), writeOptions('update'));
      expect(outcome.updated).toEqual(['readme.txt']);
      for (const r of sent) if (r.method === 'PUT' && r.name === 'readme.txt') r.inPlace = inPlace;
      check('update');
      if (inPlace) {
        expect(sent.filter((r) => r.method === 'PUT').map((r) => [r.name, r.ifNoneMatch])).toEqual([['readme.txt', undefined]]);
        expect(sent.filter((r) => r.method === 'MOVE')).toEqual([]);
      } else {
        expect(sent.filter((r) => r.method === 'MOVE').map((r) => r.overwrite)).toEqual(['T']);
      }
    });

    it(direct ? 'a new top-level upload: the top level once, MKCOL, the files under way before one look at the first file by PUT and MOVE, the rest PUT' : 'a new top-level upload: the top level once, MKCOL, PUT and MOVE', async () => {
      sent = [];
      // more files than the write keeps in flight (8), so that some start after the look's answer
      const more = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`Project/c${i}.txt`, `c${i}`]));
      const outcome = await target.write(ctx(token), null, entries({ 'Project': null, 'Project/a.txt': 'a', 'Project/sub/b.txt': 'b', ...more }), writeOptions());
      expect(outcome.newResource?.title).toBe('Project (2)');
      expect(outcome.created).toHaveLength(12);
      const requests = check('new top-level upload');
      // the top level, then each folder written to once (verify after write); on mod_dav_fs, whose
      // top level showed no file of its own, one look at the first file written (server-traits.ts)
      expect(requests.filter((r) => r === 'PROPFIND 1')).toHaveLength(3);
      expect(requests.filter((r) => r === 'PROPFIND 0')).toHaveLength(direct ? 1 : 0);
      expect(requests.filter((r) => r === 'MKCOL')).toHaveLength(2);
      expect(requests.filter((r) => r === 'PUT')).toHaveLength(12);
      const puts = sent.filter((r) => r.method === 'PUT');
      const moves = requests.filter((r) => r === 'MOVE').length;
      expect(puts.filter((r) => isFerryTempName(r.name))).toHaveLength(moves);
      if (direct) {
        // the files under way until the look answered went by temp name and MOVE (at most the 8
        // in flight: a place frees only once its file's time is settled, after the answer);
        // every file started after it, onto its own name
        expect(moves).toBeGreaterThanOrEqual(1);
        expect(moves).toBeLessThanOrEqual(8);
      } else {
        expect(moves).toBe(12);
      }
    });

    it(fastPathOn('early-listings') ? "each folder's record read once, after its last file, while the next folders' files are written" : "each folder's record read once, after its last file", async () => {
      sent = [];
      const folders = ['A', 'B', 'C'];
      const files = Object.fromEntries(folders.flatMap((folder) => [[folder, null], ...Array.from({ length: 10 }, (_, i) => [`${folder}/f${i}.txt`, `${folder}${i}`])]));
      const outcome = await target.write(ctx(token), webdavId('/Project'), entries(files), writeOptions());
      expect(outcome.created).toHaveLength(30);
      expect([...outcome.stored!.values()].map((record) => ('size' in record ? record.size : record.unverifiable))).toEqual(Array(30).fill(2));
      check('folders written one after another');
      const decoded = (p: string) => decodeURIComponent(new URL(p, 'http://x').pathname).replace(/\/+$/, '');
      // a temporary name (PUT, then MOVE) is in the folder of the file it becomes
      const folderOf = (r: Sent) => path.posix.dirname(decoded(r.path));
      const writesTo = (folder: string) => sent.filter((r) => ['PUT', 'MOVE', 'PROPPATCH'].includes(r.method) && folderOf(r).endsWith(`/Project/${folder}`));
      const listingsOf = (folder: string) => sent.filter((r) => r.method === 'PROPFIND' && r.depth === '1' && decoded(r.path).endsWith(`/Project/${folder}`));
      for (const folder of folders) {
        const [listing, ...more] = listingsOf(folder);
        expect(more, `${folder} listed more than once`).toEqual([]);
        // the listing reached the server only after it had done every request that put a file of the folder in place
        const lastWrite = Math.max(...writesTo(folder).map((r) => r.answered));
        expect(listing!.arrived, `${folder} listed before its last file was in place`).toBeGreaterThan(lastWrite);
      }
      if (fastPathOn('early-listings')) {
        // A's record was asked while C's files were still being written
        expect(listingsOf('A')[0]!.arrived).toBeLessThan(Math.max(...writesTo('C').map((r) => r.answered)));
      }
    });
  });
}
