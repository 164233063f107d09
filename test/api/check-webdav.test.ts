// Check (extension) local → WebDAV on every real WebDAV server: a transfer, then a check over
// real HTTP, by size (these servers report no checksums) and with read_bytes by reading.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Acknowledgement, CheckReport, Job } from '../../shared/api.js';
import { encodeLocalId, LocalTarget } from '../../electron/core/targets/local/index.js';
import { createWebdavTarget, webdavId } from '../../electron/core/targets/webdav/index.js';
import type { RealWebdav } from '../webdav/process.js';
import { REAL_WEBDAV_SERVERS } from '../webdav/servers.js';
import { startFerry, waitForJob, writeTree, type Ferry } from './harness.js';

const BIG = Buffer.alloc(1_500_000, 3);
const sha256 = (bytes: string | Buffer) => createHash('sha256').update(bytes).digest('hex');

for (const kind of REAL_WEBDAV_SERVERS) {
  describe.skipIf(kind.unavailable !== null)(`a check local → WebDAV against ${kind.name}`, () => {
    let server: RealWebdav;
    let ferry: Ferry;
    let davToken: string;

    beforeAll(async () => {
      server = await kind.start();
      davToken = JSON.stringify({ url: server.url, username: server.username, password: server.password });
      ferry = await startFerry({
        targets: (config, secrets) => [new LocalTarget({ root: config.workspace }), createWebdavTarget(config, secrets, { retries: 1, timeoutMs: 10_000 })],
      });
      await writeTree(ferry.workspace, { 'Survey/a.txt': 'alpha\n', 'Survey/sub/b.csv': 'x,y\n1,2\n', 'Survey/big.bin': BIG });
      await mkdir(path.join(server.dataDir, 'Inbox'));
      if (kind.ownerOfFiles) execFileSync('chown', ['-R', kind.ownerOfFiles, path.join(server.dataDir, 'Inbox')]);
      const response = await ferry.fetch(`/api_v1/targets/webdav/resources/${encodeURIComponent(webdavId('/Inbox'))}/`, {
        method: 'POST',
        body: JSON.stringify({ source_target_name: 'local', source_resource_id: encodeLocalId('Survey') }),
        headers: { 'service-source-token': ferry.key, 'service-destination-token': davToken, 'duplicate-file-action': 'ignore', 'content-type': 'application/json' },
      });
      const job = await waitForJob(ferry, ((await response.json()) as Acknowledgement).ticket_number);
      expect(job.status, job.error ?? '').toBe('succeeded');
    });
    afterAll(async () => {
      await ferry?.close();
      await server?.stop();
    });

    async function check(readBytes: boolean): Promise<{ job: Job; check: CheckReport }> {
      const response = await ferry.fetch(`/api_v1/targets/webdav/resources/${encodeURIComponent(webdavId('/Inbox/Survey'))}/check/`, {
        method: 'POST',
        body: JSON.stringify({ source_target_name: 'local', source_resource_id: encodeLocalId('Survey'), read_bytes: readBytes }),
        headers: { 'service-source-token': ferry.key, 'service-destination-token': davToken, 'content-type': 'application/json' },
      });
      expect(response.status, await response.clone().text()).toBe(202);
      const job = await waitForJob(ferry, ((await response.json()) as Acknowledgement).ticket_number, 60_000);
      return { job, check: job.report!.check! };
    }

    it('matches every file: by size without reading, by sha256 of both sides\' bytes with read_bytes', async () => {
      const bySize = await check(false);
      expect(bySize.job.status, bySize.job.error ?? '').toBe('succeeded');
      // neither side gives a hash of these files (the server keeps no checksums; the source was never hashed)
      expect(bySize.check).toEqual({
        matched: 3,
        missing: [],
        extra: [],
        different: [],
        not_comparable: [],
        compared_by: { hash: 0, size: 3 },
        algorithms: {},
        read_bytes: false,
        read: { files: 0, bytes: 0 },
      });
      const byBytes = await check(true);
      expect(byBytes.job.status, byBytes.job.error ?? '').toBe('succeeded');
      expect(byBytes.check).toMatchObject({ matched: 3, compared_by: { hash: 3, size: 0 }, algorithms: { sha256: 3 } });
      // both sides of each file were read
      expect(byBytes.check.read).toEqual({ files: 6, bytes: 2 * (6 + 8 + BIG.length) });
    });

    it('finds a file damaged on the server only by reading it, and a removed file either way', async () => {
      const onServer = path.join(server.dataDir, 'Inbox/Survey');
      await writeFile(path.join(onServer, 'a.txt'), 'ALPHA\n'); // same size, other bytes
      await rm(path.join(onServer, 'sub/b.csv'));

      const bySize = await check(false);
      expect(bySize.job.status).toBe('completed_with_errors');
      // by size the damaged file cannot be told apart, and the report says it was compared by size only
      expect(bySize.check).toMatchObject({ matched: 2, missing: ['Survey/sub/b.csv'], extra: [], different: [], compared_by: { hash: 0, size: 2 } });

      const byBytes = await check(true);
      expect(byBytes.job.status).toBe('completed_with_errors');
      expect(byBytes.check).toMatchObject({
        matched: 1,
        missing: ['Survey/sub/b.csv'],
        extra: [],
        different: [{ path: 'Survey/a.txt', by: 'hash', algorithm: 'sha256', source: sha256('alpha\n'), destination: sha256('ALPHA\n'), read: ['source', 'destination'] }],
      });
    });
  });
}
