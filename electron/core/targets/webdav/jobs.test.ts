import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isFinishedStatus, type Job } from '../../../../shared/api.js';
import { makeConfig } from '../../config.js';
import { createCore, type FerryCore } from '../../ferry-core.js';
import { MemorySecretStore } from '../../keychain/memory.js';
import { encodeLocalId, LocalTarget } from '../local/index.js';
import { FaultPlan } from '../../../../test/emulators/shared/faults.js';
import { startWebdavFaultProxy } from '../../../../test/webdav/fault-proxy.js';
import type { RealWebdav } from '../../../../test/webdav/process.js';
import { REAL_WEBDAV_SERVERS } from '../../../../test/webdav/servers.js';
import { createWebdavTarget, webdavId } from './index.js';

/**
 * Whole jobs (local folder → WebDAV) through Ferry's job runner: what the job report says of
 * modification times, and of a file whose upload was cut off.
 */
const WHEN = new Date('2020-06-07T08:09:10.000Z');

for (const kind of REAL_WEBDAV_SERVERS) {
  describe.skipIf(kind.unavailable !== null)(`WebDAV jobs against ${kind.name}`, () => {
    let server: RealWebdav;
    let core: FerryCore;
    let root: string;

    beforeAll(async () => {
      server = await kind.start();
      root = await mkdtemp(path.join(os.tmpdir(), 'ferry-webdav-jobs-'));
      const config = makeConfig({ dataDir: path.join(root, 'data'), workspace: path.join(root, 'workspace'), jobConcurrency: 1 });
      core = await createCore(config, {
        secrets: new MemorySecretStore(),
        targets: (c) => [new LocalTarget({ root: c.workspace }), createWebdavTarget(c, new MemorySecretStore(), { retries: 1, timeoutMs: 10_000 })],
      });
      const source = path.join(config.workspace, 'Measurements');
      await mkdir(source, { recursive: true });
      await writeFile(path.join(source, 'a.csv'), 'x,y\n1,2\n');
      await writeFile(path.join(source, 'big.bin'), Buffer.alloc(3_000_000, 5));
      for (const name of ['a.csv', 'big.bin']) await utimes(path.join(source, name), WHEN, WHEN);
    });
    afterAll(async () => {
      await core?.close();
      await server?.stop();
      if (root) await rm(root, { recursive: true, force: true });
    });

    async function upload(into: string, url = server.url): Promise<Job> {
      await mkdir(path.join(server.dataDir, into));
      if (kind.ownerOfFiles) execFileSync('chown', ['-R', kind.ownerOfFiles, path.join(server.dataDir, into)]);
      const submitted = await core.jobs.submit({
        kind: 'transfer',
        target: 'webdav',
        resource_id: webdavId(`/${into}`),
        source: { target: 'local', resource_id: encodeLocalId('Measurements') },
        params: { source: { target: 'local', resourceId: encodeLocalId('Measurements') }, containerId: webdavId(`/${into}`), duplicateAction: 'update' },
        tokens: { source: core.accessKey, destination: JSON.stringify({ url, username: server.username, password: server.password }) },
      });
      for (;;) {
        const job = core.jobs.get(submitted.ticket_number)!;
        if (isFinishedStatus(job.status)) return job;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    }

    it('keeps the files\' modification times, or says in the job report which files lost them', async () => {
      const job = await upload('Kept');
      expect(job.status).toBe('succeeded');
      expect(job.report?.resources_created.sort()).toEqual(['Measurements/a.csv', 'Measurements/big.bin']);
      const onServer = (await stat(path.join(server.dataDir, 'Kept/Measurements/a.csv'))).mtime;
      if (kind.keepsMtime === 'x-oc-mtime') {
        expect(onServer.toISOString()).toBe(WHEN.toISOString());
        expect(job.report?.notes).toBeUndefined();
      } else {
        expect(onServer.getTime()).not.toBe(WHEN.getTime());
        expect(job.report?.notes).toEqual([expect.stringMatching(/does not let clients set modification times.*2 files carry the time of the upload instead of their own/)]);
      }
    });

    it('a file whose upload is cut off is reported failed, not created, and leaves nothing of Ferry\'s behind', async () => {
      const proxy = await startWebdavFaultProxy(server.url, new FaultPlan(), { cutPutsAfterBytes: 1_000_000 });
      try {
        const job = await upload('Cut', proxy.url);
        // one file arrived and one did not: not a success (docs/api.md "Job outcomes")
        expect(job.status).toBe('completed_with_errors');
        expect(job.report?.resources_created).toEqual(['Measurements/a.csv']);
        expect(job.report?.file_errors.map((e) => e.path)).toEqual(['Measurements/big.bin']);
        expect(job.report?.file_errors[0]?.error).toMatch(/WebDAV server/);
        // nothing of Ferry's temporaries: the file that arrived and the job's provenance record
        expect((await readdir(path.join(server.dataDir, 'Cut/Measurements'))).sort()).toEqual(['a.csv', 'ferry-provenance.json']);
      } finally {
        await proxy.close();
      }
    });
  });
}
