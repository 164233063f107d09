import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job, ResourceSummary } from '../../shared/api.js';
import { LocalTarget } from '../../electron/core/targets/local/local-target.js';
import { findRclone, startRcloneEngine, type RcloneEngine } from '../../electron/core/targets/rclone/index.js';
import { rcloneUnavailableReason, startS3Server, writeRcloneConfig, type S3Server } from '../rclone/servers.js';
import { startFerry, waitForJob, type Ferry } from './harness.js';

// Issue #20: a transfer INTO an rclone remote (Ferry reads the source and sends each file
// through rclone's operations/uploadfile) that is cancelled part-way goes on with
// POST /jobs/<ticket>/resume/ and sends no completed file again. Counted at the S3 server
// (s3rver, from npm), by its own event notifications: Ferry uploads each file to a temporary
// key (ObjectCreated:Put) and rclone's move puts it in place (ObjectCreated:Copy), so a file
// is complete once its final key has been copied to.

const skip = rcloneUnavailableReason();
const FILES = 120;
const FOLDERS = 4;
const CANCEL_AFTER = 40;
const md5 = (bytes: Buffer) => createHash('md5').update(bytes).digest('hex');

if (skip) {
  console.warn(`[rclone resume] not run: ${skip}`);
  describe('rclone writes resume', () => it.skip(`not run: ${skip}`, () => undefined));
} else {
  let dir: string;
  let s3: S3Server;
  let engine: RcloneEngine;
  let ferry: Ferry;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-rclone-resume-'));
    s3 = await startS3Server();
    const configPath = await writeRcloneConfig(dir, {
      store: { type: 's3', provider: 'Other', endpoint: s3.endpoint, access_key_id: s3.accessKeyId, secret_access_key: s3.secretAccessKey, force_path_style: 'true' },
    });
    // see contract.test.ts: rclone 1.60's S3 client fails on AWS_CA_BUNDLE
    const { AWS_CA_BUNDLE: _ignored, ...env } = process.env;
    engine = await startRcloneEngine({ engine: 'local', binary: findRclone()!, configPath, env });
    const remotes = await engine.targets();
    ferry = await startFerry({ targets: (config) => [new LocalTarget({ root: config.workspace }), ...remotes] });
  });

  afterAll(async () => {
    await ferry?.close();
    await engine?.stop();
    await s3?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const list = async (target: string, container: string): Promise<ResourceSummary[]> => {
    const response = await ferry.fetch(`/api_v1/targets/${target}/resources/?container=${encodeURIComponent(container)}`, { headers: ferry.bearer() });
    expect(response.status, await response.clone().text()).toBe(200);
    return (await response.json()) as ResourceSummary[];
  };
  const jobOf = async (ticket: string) => (await (await ferry.fetch(`/api_v1/jobs/${ticket}/`, { headers: ferry.bearer() })).json()) as Job;
  /** final keys (not Ferry's temporaries) copied into place so far, in order */
  const placed = () => s3.events.filter((event) => event.name === 'ObjectCreated:Copy' && !path.posix.basename(event.key).startsWith('.ferry-upload-')).map((event) => event.key);
  const uploads = () => s3.events.filter((event) => event.name === 'ObjectCreated:Put');

  describe('rclone writes resume', () => {
    it('a transfer into an S3 remote, cancelled after some files, resumes without writing a completed file again', { timeout: 180_000 }, async () => {
      const sums = new Map<string, string>();
      for (let i = 0; i < FILES; i++) {
        // one file directly in Batch: s3rver 3.7.1 lists a folder at the bucket's top only when
        // a key lies directly in it (its filesystem store does not walk below a delimiter)
        const relative = i === 0 ? 'README.bin' : `d${i % FOLDERS}/file-${String(i).padStart(3, '0')}.bin`;
        const bytes = randomBytes(1024 + ((i * 7919) % (8 * 1024)));
        sums.set(`Batch/${relative}`, md5(bytes));
        await mkdir(path.join(ferry.workspace, 'Batch', path.dirname(relative)), { recursive: true });
        await writeFile(path.join(ferry.workspace, 'Batch', relative), bytes);
      }
      const batch = (await list('local', 'None')).find((node) => node.title === 'Batch')!;
      const bucket = (await list('rclone-store', 'None')).find((node) => node.title === s3.bucket)!;
      const posted = await ferry.fetch(`/api_v1/targets/rclone-store/resources/${encodeURIComponent(bucket.id)}/`, {
        method: 'POST',
        // exactly the source's files: no provenance record beside them
        headers: ferry.bearer({ 'content-type': 'application/json', 'duplicate-file-action': 'update', 'ferry-provenance': 'off' }),
        body: JSON.stringify({ source_target_name: 'local', source_resource_id: batch.id }),
      });
      expect(posted.status, await posted.clone().text()).toBe(202);
      const ticket = ((await posted.json()) as { ticket_number: string }).ticket_number;

      const deadline = Date.now() + 60_000;
      while (placed().length < CANCEL_AFTER) {
        expect(Date.now() < deadline, `only ${placed().length} files in place after 60 s`).toBe(true);
        expect((await jobOf(ticket)).status).not.toBe('succeeded');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect((await ferry.fetch(`/api_v1/jobs/${ticket}/`, { method: 'DELETE', headers: ferry.bearer() })).status).toBeLessThan(300);
      expect((await waitForJob(ferry, ticket, 30_000)).status).toBe('cancelled');
      // what the server holds complete once the cancelled job has ended
      const completedBefore = new Set(placed());
      const eventsBefore = s3.events.length;
      expect(completedBefore.size).toBeGreaterThanOrEqual(CANCEL_AFTER);
      expect(completedBefore.size).toBeLessThan(FILES);

      const resume = await ferry.fetch(`/api_v1/jobs/${ticket}/resume/`, { method: 'POST', headers: ferry.bearer() });
      expect(resume.status, await resume.clone().text()).toBe(202);
      const job = await waitForJob(ferry, ((await resume.json()) as { ticket_number: string }).ticket_number, 120_000);
      expect(job.status, job.error ?? '').toBe('succeeded');
      expect(job.resumed?.from).toBe(ticket);
      // the journal knew every file the server holds complete (one may have been put in place
      // as the cancel came, before Ferry heard it was: that one is looked at again)
      expect(job.resumed!.files_already_done).toBeGreaterThanOrEqual(completedBefore.size - 1);
      expect(job.report?.already_done).toHaveLength(job.resumed!.files_already_done);

      // after the cancel: no completed file put in place again, and no more uploads than the files still to do (+ that one)
      const after = s3.events.slice(eventsBefore);
      expect(after.filter((event) => event.name === 'ObjectCreated:Copy' && completedBefore.has(event.key)).map((event) => event.key)).toEqual([]);
      const uploadsAfter = after.filter((event) => event.name === 'ObjectCreated:Put').length;
      expect(uploadsAfter).toBeLessThanOrEqual(FILES - completedBefore.size + 1);
      // over both runs, every file put in place exactly once
      const times = new Map<string, number>();
      for (const key of placed()) times.set(key, (times.get(key) ?? 0) + 1);
      expect(times.size).toBe(FILES);
      expect([...times].filter(([, count]) => count !== 1)).toEqual([]);

      // byte-exact, as S3 itself hashes what it holds; no temporary of Ferry's left
      const { list: stored } = await engine.client.call<{ list: { Path: string; IsDir: boolean; Hashes?: Record<string, string> }[] }>('operations/list', {
        fs: 'store:',
        remote: s3.bucket,
        opt: { recurse: true, showHash: true, hashTypes: ['md5'], filesOnly: true },
      });
      expect(stored.map((item) => item.Path.slice(s3.bucket.length + 1)).sort()).toEqual([...sums.keys()].sort());
      for (const item of stored) expect(item.Hashes?.md5, item.Path).toBe(sums.get(item.Path.slice(s3.bucket.length + 1)));
      console.log(
        `rclone resume: cancelled with ${completedBefore.size} of ${FILES} files in place; resumed with ${job.resumed!.files_already_done} already done; ` +
          `${uploadsAfter} uploads after the cancel (${uploads().length} in all)`,
      );
    });
  });
}
