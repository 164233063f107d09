import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job, ResourceSummary } from '../../shared/api.js';
import { findRclone, startRcloneEngine, type RcloneEngine } from '../../electron/core/targets/rclone/index.js';
import { rcloneUnavailableReason, writeRcloneConfig } from '../rclone/servers.js';
import { startFerry, waitForJob, type Ferry } from './harness.js';

// A transfer between two remotes of one rclone engine is rclone's own job: Ferry reads and
// sends no byte of it (every object read and upload through the engine is refused here), yet
// reports progress, created/updated/ignored files from listings, rclone's per-file errors,
// and a cancel that really stops rclone's job. Real rclone rcd, two local-backend remotes.

const skip = rcloneUnavailableReason();

if (skip) {
  console.warn(`[rclone server-side copy] not run: ${skip}`);
  describe('rclone server-side copy', () => it.skip(`not run: ${skip}`, () => undefined));
} else {
  let dir: string;
  let left: string;
  let right: string;
  let engine: RcloneEngine;
  let ferry: Ferry;
  const commands: string[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-rclone-copy-'));
    left = path.join(dir, 'left');
    right = path.join(dir, 'right');
    await mkdir(path.join(right, 'Into'), { recursive: true });
    await mkdir(left);
    const configPath = await writeRcloneConfig(dir, { left: { type: 'alias', remote: left }, right: { type: 'alias', remote: right } });
    engine = await startRcloneEngine({ engine: 'local', binary: findRclone()!, configPath });
    // bytes through Ferry are refused: a transfer that falls back to read-and-write fails
    const client = engine.client;
    const call = client.call.bind(client);
    client.call = ((command: string, params: Record<string, unknown>, signal?: AbortSignal) => {
      commands.push(command);
      return call(command, params, signal);
    }) as typeof client.call;
    client.openObject = () => Promise.reject(new Error('a server-side copy read bytes through Ferry'));
    client.uploadFile = () => Promise.reject(new Error('a server-side copy sent bytes through Ferry'));
    const remotes = await engine.targets();
    ferry = await startFerry({ targets: () => remotes });
  });

  afterAll(async () => {
    await ferry?.close();
    await engine?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const list = async (target: string, container?: string): Promise<ResourceSummary[]> => {
    const query = container === undefined ? '' : `?container=${encodeURIComponent(container)}`;
    const response = await ferry.fetch(`/api_v1/targets/${target}/resources/${query}`, { headers: ferry.bearer() });
    expect(response.status, await response.clone().text()).toBe(200);
    return (await response.json()) as ResourceSummary[];
  };
  const idOf = async (target: string, title: string) => (await list(target, 'None')).find((node) => node.title === title)!.id;

  const submit = async (containerId: string | null, sourceId: string, duplicate: 'ignore' | 'update'): Promise<string> => {
    const response = await ferry.fetch(`/api_v1/targets/rclone-right/resources/${containerId ? `${encodeURIComponent(containerId)}/` : ''}`, {
      method: 'POST',
      headers: ferry.bearer({ 'content-type': 'application/json', 'duplicate-file-action': duplicate }),
      body: JSON.stringify({ source_target_name: 'rclone-left', source_resource_id: sourceId }),
    });
    expect(response.status, await response.clone().text()).toBe(202);
    return ((await response.json()) as { ticket_number: string }).ticket_number;
  };
  const transfer = async (containerId: string | null, sourceId: string, duplicate: 'ignore' | 'update' = 'update'): Promise<Job> =>
    waitForJob(ferry, await submit(containerId, sourceId, duplicate), 60_000);

  describe('rclone server-side copy', () => {
    it('copies a folder remote → remote as one rclone job, with progress and a report from the listings', async () => {
      await mkdir(path.join(left, 'Run 1', 'raw'), { recursive: true });
      await mkdir(path.join(left, 'Run 1', 'empty'));
      await writeFile(path.join(left, 'Run 1', 'a.txt'), 'alpha\n');
      await writeFile(path.join(left, 'Run 1', 'raw', 'frame #1.bin'), Buffer.alloc(300_000, 7));
      commands.length = 0;
      const job = await transfer(null, await idOf('rclone-left', 'Run 1'));
      expect(job.status, job.error ?? '').toBe('succeeded');
      expect(commands).toContain('sync/copy');
      expect(commands).toContain('job/status');
      expect(job.progress).toEqual({ files_done: 2, files_total: 2, bytes_done: 300_006, bytes_total: 300_006 });
      expect(job.report?.resources_created).toEqual(['Run 1', 'Run 1/a.txt', 'Run 1/empty', 'Run 1/raw', 'Run 1/raw/frame #1.bin']);
      expect(job.report?.new_resource?.title).toBe('Run 1');
      expect(await readFile(path.join(right, 'Run 1', 'raw', 'frame #1.bin'))).toEqual(Buffer.alloc(300_000, 7));

      // a second copy of the same folder at the top level gets a name of its own
      const again = await transfer(null, await idOf('rclone-left', 'Run 1'));
      expect(again.report?.new_resource?.title).toBe('Run 1-2');
    });

    it('ignore leaves existing files alone; update replaces only what differs', async () => {
      await mkdir(path.join(left, 'Run 2'), { recursive: true });
      await writeFile(path.join(left, 'Run 2', 'same.txt'), 'same\n');
      await writeFile(path.join(left, 'Run 2', 'changed.txt'), 'new words\n');
      await mkdir(path.join(right, 'Into', 'Run 2'), { recursive: true });
      await writeFile(path.join(right, 'Into', 'Run 2', 'same.txt'), 'same\n');
      await writeFile(path.join(right, 'Into', 'Run 2', 'changed.txt'), 'old\n');
      const into = await idOf('rclone-right', 'Into');
      const source = await idOf('rclone-left', 'Run 2');

      const ignored = await transfer(into, source, 'ignore');
      expect(ignored.status, ignored.error ?? '').toBe('succeeded');
      expect(ignored.report?.resources_ignored).toEqual(['Run 2/changed.txt', 'Run 2/same.txt']);
      expect(await readFile(path.join(right, 'Into', 'Run 2', 'changed.txt'), 'utf8')).toBe('old\n');

      const updated = await transfer(into, source, 'update');
      expect(updated.status, updated.error ?? '').toBe('succeeded');
      expect(updated.report?.resources_updated).toEqual(['Run 2/changed.txt']);
      expect(updated.report?.resources_ignored).toEqual(['Run 2/same.txt']);
      expect(await readFile(path.join(right, 'Into', 'Run 2', 'changed.txt'), 'utf8')).toBe('new words\n');
    });

    it('a file rclone could not copy is a per-file error in rclone\'s words, with no path of this machine', async () => {
      await mkdir(path.join(left, 'Run 3'), { recursive: true });
      await writeFile(path.join(left, 'Run 3', 'fine.txt'), 'fine\n');
      await writeFile(path.join(left, 'Run 3', 'blocked'), 'a file where the destination has a folder\n');
      await mkdir(path.join(right, 'Into', 'Run 3', 'blocked', 'inside'), { recursive: true });
      const job = await transfer(await idOf('rclone-right', 'Into'), await idOf('rclone-left', 'Run 3'));
      // one file failed, the other arrived: not a success
      expect(job.status).toBe('completed_with_errors');
      expect(job.report?.failed_files?.map((failure) => failure.path)).toEqual(['Run 3/blocked']);
      expect(job.report?.resources_created).toEqual(['Run 3/fine.txt']);
      expect(job.report?.file_errors.map((failure) => failure.path)).toEqual(['Run 3/blocked']);
      expect(job.report?.file_errors[0]?.error).toBe('Not copied: rclone said: open right:Into/Run 3/blocked: is a directory');
      expect(JSON.stringify(job.report)).not.toContain(dir);
    });

    it('cancelling the Ferry job stops rclone\'s job before the job says cancelled', async () => {
      await mkdir(path.join(left, 'Big'), { recursive: true });
      await writeFile(path.join(left, 'Big', 'slow.bin'), Buffer.alloc(8 * 1024 * 1024, 1));
      await engine.client.call('core/bwlimit', { rate: '512k' });
      try {
        const ticket = await submit(await idOf('rclone-right', 'Into'), await idOf('rclone-left', 'Big'), 'update');
        let job: Job;
        do {
          await new Promise((resolve) => setTimeout(resolve, 50));
          job = (await (await ferry.fetch(`/api_v1/jobs/${ticket}/`, { headers: ferry.bearer() })).json()) as Job;
        } while (job.progress.bytes_done === 0 && job.status !== 'failed');
        expect(job.progress.bytes_total).toBe(8 * 1024 * 1024);
        const cancel = await ferry.fetch(`/api_v1/jobs/${ticket}/`, { method: 'DELETE', headers: ferry.bearer() });
        expect(cancel.status).toBeLessThan(300);
        const ended = await waitForJob(ferry, ticket, 30_000);
        expect(ended.status).toBe('cancelled');
        // every rclone job has finished: nothing is still writing
        const { jobids } = await engine.client.call<{ jobids: number[] }>('job/list', {});
        for (const jobid of jobids) expect((await engine.client.call<{ finished: boolean }>('job/status', { jobid })).finished).toBe(true);
        expect(commands).toContain('job/stop');
        const after = await readdir(path.join(right, 'Into', 'Big')).catch(() => []);
        const sizes = await Promise.all(after.map(async (name) => (await readFile(path.join(right, 'Into', 'Big', name))).length));
        expect(sizes.every((size) => size < 8 * 1024 * 1024)).toBe(true);
      } finally {
        await engine.client.call('core/bwlimit', { rate: 'off' });
      }
    });
  });
}
