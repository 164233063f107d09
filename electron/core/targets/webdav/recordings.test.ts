import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeConfig } from '../../config.js';
import { MemorySecretStore } from '../../keychain/memory.js';
import { collect, ctx } from '../../../../test/target-suite/test-entries.js';
import { createWebdavTarget, webdavId } from './index.js';

/**
 * Real PROPFIND bodies (shared/reference/recordings/webdav, origins in its README) replayed
 * to the target: what Ferry makes of Nextcloud's and ownCloud's own answers.
 */
const RECORDINGS = path.resolve('../shared/reference/recordings/webdav');
const missing = existsSync(RECORDINGS) ? null : `${RECORDINGS} is not beside the checkout`;
if (missing) console.warn(`[webdav recordings] not run: ${missing}`);

describe.skipIf(missing !== null)('webdav target on recorded PROPFIND answers', () => {
  let server: http.Server;
  let origin = '';
  /** request path → recording answered to a PROPFIND of it */
  const replies: Record<string, string> = {
    '/remote.php/dav/files/user1/New%20folder/': 'nextcloud-2025-propfind-folder.207.xml',
    '/owncloud/remote.php/webdav/': 'owncloud-2016-propfind-root-depth1.207.xml',
    '/owncloud/remote.php/webdav/Documents/dissertation.aux': 'owncloud-2016-propfind-file-depth0.207.xml',
    '/files/': 'propfind-href-html-entities.207.xml',
  };
  const token = (base: string) => JSON.stringify({ url: `${origin}${base}`, username: 'u', password: 'p' });
  const target = createWebdavTarget(makeConfig({ dataDir: '/nonexistent' }), new MemorySecretStore(), { retries: 0 });

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      // matched as decoded paths, with or without the trailing slash
      const key = (p: string) => decodeURIComponent(p).replace(/\/+$/, '');
      const name = req.method === 'PROPFIND' ? Object.entries(replies).find(([p]) => key(p) === key(req.url ?? ''))?.[1] : undefined;
      req.resume();
      if (!name) {
        res.writeHead(404).end();
        return;
      }
      void readFile(path.join(RECORDINGS, name)).then((body) => res.writeHead(207, { 'content-type': 'application/xml; charset=utf-8' }).end(body));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("lists a Nextcloud folder's children (the folder itself, and its 404 propstat, left out)", async () => {
    const nodes = await collect(target.list(ctx(token('/remote.php/dav/files/user1/')), { container: webdavId('/New folder') }));
    expect(nodes).toEqual([]);
  });

  it('lists an ownCloud account root, folders as containers', async () => {
    const nodes = await collect(target.list(ctx(token('/owncloud/remote.php/webdav/')), { container: null }));
    expect(nodes.map((n) => [n.title, n.kind, n.id])).toEqual([
      ['Documents', 'container', webdavId('/Documents')],
      ['Photos', 'container', webdavId('/Photos')],
    ]);
  });

  it("details an ownCloud file without taking its getetag for a hash", async () => {
    const detail = await target.detail(ctx(token('/owncloud/remote.php/webdav/')), webdavId('/Documents/dissertation.aux'));
    expect(detail).toMatchObject({ kind: 'item', title: 'dissertation.aux', hashes: {}, date_modified: '2016-07-10T23:28:31.000000Z', extra: { size: 3011 } });
  });

  it('keeps a file literally named "&amp;.md" (percent- and entity-encoded href) as it is named', async () => {
    const nodes = await collect(target.list(ctx(token('/files/')), { container: null }));
    expect(nodes.map((n) => n.title)).toEqual(['&amp;.md']);
    expect(nodes[0]?.id).toBe(webdavId('/&amp;.md'));
  });
});
