import { execFileSync } from 'node:child_process';
import { mkdir, readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeConfig } from '../../config.js';
import { fastPathOn } from '../../fast-paths.js';
import { MemorySecretStore } from '../../keychain/memory.js';
import type { Entry, Target } from '../../target.js';
import { Latency } from '../../../../test/emulators/shared/latency.js';
import { startLatencyProxy, type LatencyProxy } from '../../../../test/support/latency-proxy.js';
import type { RealWebdav } from '../../../../test/webdav/process.js';
import { REAL_WEBDAV_SERVERS, sendsDirectPuts } from '../../../../test/webdav/servers.js';
import { ctx, writeOptions } from '../../../../test/target-suite/test-entries.js';
import { createWebdavTarget, webdavId } from './index.js';
import { WEBDAV_IN_FLIGHT } from './webdav-target.js';

/**
 * `parallel-writes`: a write keeps several files in flight, and its outcome reads exactly as
 * a one-at-a-time write's would — every list in entry order, per-file failures in place, the
 * note of lost modification times in entry order, the bytes on the server the same. With the
 * fast path off (FERRY_FAST_PATHS=-parallel-writes) one file is opened at a time. The server
 * sits behind a proxy that holds each request 50 ms and counts those under way: the write
 * keeps its declared number under way (WEBDAV_IN_FLIGHT), never more.
 */
const FILES = 16;
const content = (i: number) => `file ${i}\n`.repeat(50 + i * 7);

for (const kind of REAL_WEBDAV_SERVERS) {
  describe.skipIf(kind.unavailable !== null)(`a parallel write to ${kind.name}`, () => {
    let server: RealWebdav;
    let proxy: LatencyProxy;
    let target: Target;
    let token: string;

    beforeAll(async () => {
      server = await kind.start();
      // a folder where the write has a file: that file's per-file failure keeps its place
      await mkdir(path.join(server.dataDir, 'Into/Run/f04.txt'), { recursive: true });
      if (kind.ownerOfFiles) execFileSync('chown', ['-R', kind.ownerOfFiles, server.dataDir]);
      proxy = await startLatencyProxy(server.url, new Latency(50));
      token = JSON.stringify({ url: proxy.url, username: server.username, password: server.password });
      target = createWebdavTarget(makeConfig({ dataDir: '/nonexistent' }), new MemorySecretStore(), { retries: 0 });
    });
    afterAll(async () => {
      await proxy?.close();
      await server?.stop();
    });

    it('keeps several files in flight, and reports them in entry order', async () => {
      let opening = 0;
      let most = 0;
      async function* entries(): AsyncIterable<Entry> {
        yield { path: 'Run', kind: 'folder', size: null, mtime: null, hashes: {}, open: () => Promise.reject(new Error('folder')) };
        for (let i = 0; i < FILES; i++) {
          const bytes = Buffer.from(content(i));
          const name = `Run/${i % 2 ? 'odd/' : ''}f${String(i).padStart(2, '0')}.txt`;
          if (i === 1) yield { path: 'Run/odd', kind: 'folder', size: null, mtime: null, hashes: {}, open: () => Promise.reject(new Error('folder')) };
          yield {
            path: name,
            kind: 'file',
            size: bytes.length,
            mtime: new Date('2021-03-04T05:06:07Z'),
            hashes: {},
            open: async () => {
              // a slow source: the next files are opened meanwhile only when several are in flight
              opening++;
              most = Math.max(most, opening);
              await new Promise((resolve) => setTimeout(resolve, 150));
              opening--;
              return Readable.from([bytes]);
            },
          };
        }
      }
      const outcome = await target.write(ctx(token), webdavId('/Into'), entries(), writeOptions());
      const written = Array.from({ length: FILES }, (_, i) => `Run/${i % 2 ? 'odd/' : ''}f${String(i).padStart(2, '0')}.txt`);
      const created = written.filter((p) => p !== 'Run/f04.txt');
      expect(outcome.created).toEqual(created);
      expect(outcome.fileErrors).toEqual([{ path: 'Run/f04.txt', error: expect.stringMatching(/exists on the server as a folder/) }]);
      if (fastPathOn('parallel-writes')) expect(most).toBeGreaterThan(1);
      else expect(most).toBe(1);
      expect(most).toBeLessThanOrEqual(WEBDAV_IN_FLIGHT.files);
      expect(proxy.latency.mostUnderWay).toBeLessThanOrEqual(fastPathOn('parallel-writes') ? WEBDAV_IN_FLIGHT.files : 1);
      for (const [i, p] of written.entries()) if (p !== 'Run/f04.txt') expect(await readFile(path.join(server.dataDir, 'Into', p), 'utf8')).toBe(content(i));
      expect((await readdir(path.join(server.dataDir, 'Into/Run'))).filter((n) => n.startsWith('.ferry-'))).toEqual([]);
      if (kind.keepsMtime === 'no') {
        // the note names files in entry order (the first five, then a count)
        expect(outcome.notes).toEqual([expect.stringContaining(`: ${created.slice(0, 5).map((p) => `'${p}'`).join(', ')} and ${created.length - 5} more.`)]);
      }
    });

    it('makes a folder while the files before it are under way, not when its first file comes up', async () => {
      const names = ['A', 'B'].flatMap((folder) => Array.from({ length: 20 }, (_, i) => `Ahead/${folder}/f${String(i).padStart(2, '0')}.txt`));
      async function* entries(): AsyncIterable<Entry> {
        for (const name of names) yield { path: name, kind: 'file', size: 2, mtime: null, hashes: {}, open: async () => Readable.from([Buffer.from('ab')]) };
      }
      proxy.latency.reset();
      const outcome = await target.write(ctx(token), webdavId('/Into'), entries(), writeOptions());
      expect(outcome.created).toEqual(names);
      const arrived = (pattern: RegExp) => proxy.latency.arrivals.findIndex((request) => pattern.test(request));
      const folderB = arrived(/^MKCOL \S*\/Ahead\/B\/?$/);
      expect(folderB).toBeGreaterThan(0);
      if (fastPathOn('parallel-writes')) {
        // made twice the files in flight ahead of its first file: while A's files still go up
        expect(folderB).toBeLessThan(arrived(/^PUT \S*\/Ahead\/A\/\S*f15\.txt$/));
      } else expect(folderB).toBeGreaterThan(arrived(/^PUT \S*\/Ahead\/A\/\S*f19\.txt$/));
    });

    it('keeps its declared number of requests under way, never more', async () => {
      async function* entries(): AsyncIterable<Entry> {
        for (let i = 0; i < 40; i++) {
          const bytes = Buffer.from(content(i));
          yield { path: `Many/f${String(i).padStart(2, '0')}.txt`, kind: 'file', size: bytes.length, mtime: null, hashes: {}, open: async () => Readable.from([bytes]) };
        }
      }
      proxy.latency.reset();
      const outcome = await target.write(ctx(token), webdavId('/Into'), entries(), writeOptions());
      expect(outcome.created).toHaveLength(40);
      expect(outcome.fileErrors).toEqual([]);
      // each file a PUT and a MOVE, or one PUT where the server writes PUTs atomically; the folder a listing and a MKCOL
      expect(proxy.latency.requests).toBeGreaterThanOrEqual(40 * (sendsDirectPuts(kind) ? 1 : 2) + 2);
      expect(proxy.latency.mostUnderWay).toBe(fastPathOn('parallel-writes') ? WEBDAV_IN_FLIGHT.files : 1);
      // connections are kept for the next request (each PUT's and MOVE's answer read to its
      // end, remote/answer-body.ts): 2,002 connections for 2,049 requests before, on the bench;
      // the write's one OPTIONS among them
      expect(proxy.latency.connections).toBeLessThanOrEqual(WEBDAV_IN_FLIGHT.files + 4);
    });
  });
}
