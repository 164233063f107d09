import { execFileSync } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeConfig } from '../../config.js';
import { MemorySecretStore } from '../../keychain/memory.js';
import type { Entry } from '../../target.js';
import type { RealWebdav } from '../../../../test/webdav/process.js';
import { REAL_WEBDAV_SERVERS } from '../../../../test/webdav/servers.js';
import { ctx, entriesFrom, withPlanOf } from '../../../../test/target-suite/test-entries.js';
import { createWebdavTarget } from './index.js';

// A new top-level upload that fails after its folder was made leaves nothing behind: the
// folder (and what went into it) is deleted again, on every real server.

const file = (entryPath: string, text: string): Entry => ({ path: entryPath, kind: 'file', size: text.length, mtime: null, hashes: {}, open: async () => Readable.from([Buffer.from(text)]) });
const folder = (entryPath: string): Entry => ({ path: entryPath, kind: 'folder', size: null, mtime: null, hashes: {}, open: () => Promise.reject(new Error('folder')) });

for (const kind of REAL_WEBDAV_SERVERS) {
  describe.skipIf(kind.unavailable !== null)(`a failed new top-level upload to ${kind.name}`, () => {
    let server: RealWebdav;
    beforeAll(async () => {
      server = await kind.start();
      if (kind.ownerOfFiles) execFileSync('chown', ['-R', kind.ownerOfFiles, server.dataDir]);
    });
    afterAll(async () => server?.stop());

    it('deletes the folder it made, with what went into it', async () => {
      const target = createWebdavTarget(makeConfig({ dataDir: '/nonexistent' }), new MemorySecretStore(), { retries: 0 });
      const token = JSON.stringify({ url: server.url, username: server.username, password: server.password });
      // more files than the writer reads ahead of its pipeline (twice the files it keeps in
      // flight), so the folder is made and files are written before the source fails
      const names = Array.from({ length: 40 }, (_, i) => `Study/f${String(i).padStart(2, '0')}.txt`);
      async function* entries(): AsyncGenerator<Entry> {
        yield folder('Study');
        for (const name of names) yield file(name, 'a');
        // a hard failure of the job itself (not one file's): the source is gone
        throw new Error('the source disk went away');
      }
      // planned first, as a job does, so the target streams the failing source
      const options = await withPlanOf(target, null, entriesFrom({ 'Study/': null, ...Object.fromEntries(names.map((name) => [name, 'a'])) }));
      const error = (await target.write(ctx(token), null, entries(), options).catch((e: unknown) => e)) as Error;
      expect(error.message).toMatch(/The new folder 'Study' was removed again, so nothing is left behind\.$/);
      expect((await readdir(server.dataDir)).filter((name) => name.startsWith('Study'))).toEqual([]);
    });
  });
}
