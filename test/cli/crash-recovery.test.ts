import { spawnSync } from 'node:child_process';
import { randomBytes, createHash } from 'node:crypto';
import { openAsBlob } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Job } from '../../shared/api.js';
import { startFerryProcess, type FerryProcess } from '../support/ferry-process.js';

// SIGKILL in the middle of an upload job, then a restart: the job must end (resumed, or
// failed with a reason), no temporary file may remain in the workspace, and every file
// that was there before keeps its old bytes.
const FILES = 1500;
const FILE_BYTES = 128 * 1024;

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

async function snapshot(root: string): Promise<Map<string, string>> {
  const result = new Map<string, string>();
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const full = path.join(entry.parentPath, entry.name);
    result.set(path.relative(root, full), sha(await readFile(full)));
  }
  return result;
}

async function job(server: FerryProcess, ticket: string): Promise<Job> {
  const response = await fetch(`${server.url}api_v1/jobs/${ticket}/`, { headers: { authorization: `Bearer ${server.accessKey}` } });
  expect(response.status).toBe(200);
  return (await response.json()) as Job;
}

describe('crash recovery', () => {
  let dir: string;
  const servers: FerryProcess[] = [];
  afterAll(async () => {
    for (const server of servers) if (server.child.exitCode === null) server.child.kill('SIGKILL');
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('ends an upload job killed with SIGKILL and leaves the workspace whole', { timeout: 240_000 }, async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-crash-'));
    const dataDir = path.join(dir, 'data');
    const workspace = path.join(dir, 'workspace');
    const source = path.join(dir, 'source', 'Batch');
    await mkdir(path.join(workspace, 'Batch'), { recursive: true });
    await mkdir(source, { recursive: true });
    // Files already in the destination, some with names the upload also carries.
    await writeFile(path.join(workspace, 'Batch', 'file-0001.bin'), 'old bytes, must survive\n');
    await writeFile(path.join(workspace, 'Batch', 'file-0750.bin'), 'old bytes too\n');
    await writeFile(path.join(workspace, 'notes.txt'), 'unrelated\n');
    const uploadBytes = new Map<string, string>();
    for (let i = 0; i < FILES; i++) {
      const name = `file-${String(i).padStart(4, '0')}.bin`;
      const bytes = randomBytes(FILE_BYTES);
      uploadBytes.set(path.join('Batch', name), sha(bytes));
      await writeFile(path.join(source, name), bytes);
    }
    const zipPath = path.join(dir, 'upload.zip');
    // The ZIP holds the files at its root, to be uploaded into the existing Batch folder.
    const zipped = spawnSync('zip', ['-q', '-0', '-r', zipPath, '.'], { cwd: source });
    expect(zipped.status).toBe(0);
    const before = await snapshot(workspace);

    const first = await startFerryProcess({ dataDir, workspace });
    servers.push(first);
    const listing = (await (await fetch(`${first.url}api_v1/targets/local/resources/?container=None`, { headers: { authorization: `Bearer ${first.accessKey}` } })).json()) as { id: string; title: string }[];
    const root = listing.find((resource) => resource.title === 'Batch');
    expect(root).toBeDefined();
    const form = new FormData();
    form.set('service-file', await openAsBlob(zipPath), 'upload.zip');
    const posted = await fetch(`${first.url}api_v1/targets/local/resources/${encodeURIComponent(root!.id)}/`, {
      method: 'POST',
      // exactly the ZIP's files: no provenance record (docs/provenance.md)
      headers: { 'service-destination-token': first.accessKey, 'duplicate-file-action': 'ignore', 'ferry-provenance': 'off' },
      body: form,
    });
    expect(posted.status).toBe(202);
    const { ticket_number: ticket } = (await posted.json()) as { ticket_number: string };

    let killedWhile: Job | null = null;
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      const current = await job(first, ticket);
      if (current.status === 'running' && current.progress.files_done >= 5) {
        first.child.kill('SIGKILL');
        killedWhile = current;
        break;
      }
      expect(['queued', 'running']).toContain(current.status);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(killedWhile, 'the job finished before it could be killed; raise FILES').not.toBeNull();
    expect(await first.exited).toBe('SIGKILL');
    expect(killedWhile!.progress.files_done).toBeLessThan(FILES);

    const second = await startFerryProcess({ dataDir, workspace });
    servers.push(second);
    let ended: Job | null = null;
    while (Date.now() < deadline + 60_000) {
      const current = await job(second, ticket);
      if (!['queued', 'running'].includes(current.status)) {
        ended = current;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(ended, 'the job was still running a minute after the restart').not.toBeNull();
    if (ended!.status === 'failed') expect(ended!.error).toMatch(/\w+/);
    else expect(ended!.status).toBe('succeeded');

    const after = await snapshot(workspace);
    const leftovers = [...after.keys()].filter((file) => /(^|\/)\.ferry-|\.part$/.test(file));
    expect(leftovers).toEqual([]);
    for (const [file, hash] of before) expect(after.get(file), `${file} changed`).toBe(hash);
    // Whatever the job wrote is whole: each new file has exactly the ZIP's bytes.
    for (const [file, hash] of after) {
      if (before.has(file)) continue;
      const uploaded = uploadBytes.get(file);
      expect(uploaded, `unexpected file ${file}`).toBeDefined();
      expect(hash, `${file} is not whole`).toBe(uploaded);
    }
    // file-0001 and file-0750 were there already and are ignored, not replaced.
    if (ended!.status === 'succeeded') expect(after.size).toBe(before.size + FILES - 2);

    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  });
});
