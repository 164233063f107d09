// "Nothing false, nothing lost" for transfers (issue #17.1): a file whose source bytes fail
// their own check — a ZIP entry's CRC-32, a bag manifest's checksum — is not written to the
// destination (local, or a real Apache WebDAV), the rest is, and the job ends
// completed_with_errors with that file listed, never succeeded.
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Acknowledgement, Job, ResourceSummary } from '../../shared/api.js';
import { makeConfig } from '../../electron/core/config.js';
import { MemorySecretStore } from '../../electron/core/keychain/memory.js';
import { LocalTarget } from '../../electron/core/targets/local/local-target.js';
import { createOfflineTarget } from '../../electron/core/targets/offline/index.js';
import { createWebdavTarget } from '../../electron/core/targets/webdav/index.js';
import { apacheUnavailableReason, startApacheWebdav, type ApacheWebdav } from '../webdav/apache-webdav.js';
import { run, snapshotTree, startFerry, waitForJob, type Ferry } from './harness.js';

const GOOD = 'good bytes\n'.repeat(100);
const BAD = 'the bytes that will be damaged in the archive\n'.repeat(50);

/** A stored (uncompressed) ZIP of `files`, with one byte of `damaged`'s data flipped: its CRC-32 no longer matches. */
async function zipWithBadCrc(dir: string, name: string, files: Record<string, string>, damaged: string): Promise<string> {
  const source = path.join(dir, `${name}-src`);
  for (const [relative, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(source, relative)), { recursive: true });
    await writeFile(path.join(source, relative), text);
  }
  const zip = path.join(dir, `${name}.zip`);
  await run('zip', ['-q', '-0', '-X', '-r', zip, '.'], { cwd: source });
  const bytes = await readFile(zip);
  const at = bytes.indexOf(Buffer.from(files[damaged]!));
  expect(at).toBeGreaterThan(0);
  bytes[at + 10]! ^= 0x01;
  await writeFile(zip, bytes);
  return zip;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** A stored BagIt ZIP whose manifest records `Study/b.txt` as it was before one byte flipped (its CRC-32 is right). */
async function bagWithFlippedByte(dir: string): Promise<string> {
  const flipped = Buffer.from(BAD);
  flipped[10]! ^= 0x01;
  return zipFrom(dir, 'Study', {
    'bagit.txt': 'BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n',
    'bag-info.txt': 'Bagging-Date: 2026-11-24\n',
    'manifest-sha256.txt': `${sha256(GOOD)}  data/Study/a.txt\n${sha256(BAD)}  data/Study/b.txt\n`,
    'data/Study/a.txt': GOOD,
    'data/Study/b.txt': flipped.toString('latin1'),
  });
}

async function zipFrom(dir: string, name: string, files: Record<string, string>): Promise<string> {
  const source = path.join(dir, `${name}-src`);
  for (const [relative, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(source, relative)), { recursive: true });
    await writeFile(path.join(source, relative), Buffer.from(text, 'latin1'));
  }
  const zip = path.join(dir, `${name}.zip`);
  await run('zip', ['-q', '-0', '-X', '-r', zip, '.'], { cwd: source });
  return zip;
}

async function topOfLibrary(ferry: Ferry, title: string): Promise<ResourceSummary> {
  const response = await ferry.fetch('/api_v1/targets/offline/resources/?container=None', { headers: ferry.auth() });
  const found = ((await response.json()) as ResourceSummary[]).find((node) => node.title === title);
  expect(found, `${title} in the library`).toBeDefined();
  return found!;
}

async function transfer(ferry: Ferry, destination: string, sourceId: string, destinationToken: string): Promise<Job> {
  const response = await ferry.fetch(`/api_v1/targets/${destination}/resources/`, {
    method: 'POST',
    body: JSON.stringify({ source_target_name: 'offline', source_resource_id: sourceId }),
    headers: { 'service-source-token': ferry.key, 'service-destination-token': destinationToken, 'duplicate-file-action': 'update', 'content-type': 'application/json' },
  });
  expect(response.status, await response.clone().text()).toBe(202);
  return waitForJob(ferry, ((await response.json()) as Acknowledgement).ticket_number);
}

function expectOneFailedFile(job: Job, failedPath: string, algorithm: string): void {
  expect(job.status, job.error ?? '').toBe('completed_with_errors');
  expect(job.error).toMatch(/1 file failed/);
  expect(job.report!.failed_files).toEqual([expect.objectContaining({ path: failedPath, stage: 'fixity', algorithm })]);
  expect(job.report!.failed_files![0]!.expected).not.toBe(job.report!.failed_files![0]!.actual);
  expect(job.report!.failed_files![0]!.error).toMatch(/did not write it/);
  expect(job.report!.resources_created).not.toContain(failedPath);
}

describe('a transfer out of the offline library to the local target', () => {
  let ferry: Ferry;
  beforeAll(async () => {
    ferry = await startFerry({ targets: (config) => [new LocalTarget({ root: config.workspace }), createOfflineTarget(config)] });
    await mkdir(path.join(ferry.dataDir, 'library'), { recursive: true });
    await mkdir(ferry.workspace, { recursive: true });
  });
  afterAll(async () => ferry?.close());

  it('does not write a file whose CRC-32 fails; the rest arrives; the job is completed_with_errors', async () => {
    await zipWithBadCrc(path.join(ferry.dataDir, 'library'), 'Damaged', { 'Damaged/good.txt': GOOD, 'Damaged/bad.txt': BAD }, 'Damaged/bad.txt');
    const archive = await topOfLibrary(ferry, 'Damaged');
    const job = await transfer(ferry, 'local', archive.id, ferry.key);
    expectOneFailedFile(job, 'Damaged/Damaged/bad.txt', 'crc32');
    const tree = await snapshotTree(ferry.workspace);
    expect(Object.keys(tree).sort()).toEqual(['Damaged', 'Damaged/Damaged', 'Damaged/Damaged/good.txt']);
    expect(await readFile(path.join(ferry.workspace, 'Damaged/Damaged/good.txt'), 'utf8')).toBe(GOOD);
  });

  it('does not write a kept bag\'s file with a flipped byte (its manifest checksum fails)', async () => {
    await bagWithFlippedByte(path.join(ferry.dataDir, 'library'));
    const archive = await topOfLibrary(ferry, 'Study');
    const job = await transfer(ferry, 'local', archive.id, ferry.key);
    expectOneFailedFile(job, 'Study/b.txt', 'sha256');
    expect(await readFile(path.join(ferry.workspace, 'Study/a.txt'), 'utf8')).toBe(GOOD);
    expect((await readdir(path.join(ferry.workspace, 'Study'))).sort()).toEqual(['a.txt']);
  });

  it('a job all of whose files fail its checks is failed, and its report says nothing was written', async () => {
    await zipWithBadCrc(path.join(ferry.dataDir, 'library'), 'Lost', { 'Lost/only.txt': BAD }, 'Lost/only.txt');
    const archive = await topOfLibrary(ferry, 'Lost');
    const job = await transfer(ferry, 'local', archive.id, ferry.key);
    expect(job.status, job.error ?? '').toBe('failed');
    expect(job.error).toMatch(/^Nothing arrived/);
    expect(job.report!.failed_files!.map((file) => file.path)).toEqual(['Lost/Lost/only.txt']);
    expect(await readdir(path.join(ferry.workspace, 'Lost/Lost'))).toEqual([]);
  });
});

describe('POST /api_v1/jobs/<ticket>/retry/', () => {
  let ferry: Ferry;
  beforeAll(async () => {
    ferry = await startFerry({ targets: (config) => [new LocalTarget({ root: config.workspace }), createOfflineTarget(config)] });
    await mkdir(path.join(ferry.dataDir, 'library'), { recursive: true });
    await mkdir(ferry.workspace, { recursive: true });
  });
  afterAll(async () => ferry?.close());

  const retry = (ticket: string, headers: Record<string, string>) => ferry.fetch(`/api_v1/jobs/${ticket}/retry/`, { method: 'POST', headers });

  it('runs the failed files again, into the resource the first run made, and nothing else', async () => {
    const library = path.join(ferry.dataDir, 'library');
    const zip = await zipWithBadCrc(library, 'Redo', { 'Redo/good.txt': GOOD, 'Redo/bad.txt': BAD }, 'Redo/bad.txt');
    const archive = await topOfLibrary(ferry, 'Redo');
    const first = await transfer(ferry, 'local', archive.id, ferry.key);
    expect(first.status).toBe('completed_with_errors');
    expect(first.report!.new_resource!.title).toBe('Redo');
    await writeFile(path.join(ferry.workspace, 'Redo/Redo/good.txt'), 'changed since, must stay');

    // still damaged: the retry fails that one file again, and touches nothing else
    const answer = await retry(first.ticket_number, { 'service-source-token': ferry.key, 'service-destination-token': ferry.key });
    expect(answer.status, await answer.clone().text()).toBe(202);
    const ack = (await answer.json()) as Acknowledgement;
    expect(answer.headers.get('location')).toBe(`/api_v1/jobs/${ack.ticket_number}/`);
    const second = await waitForJob(ferry, ack.ticket_number);
    expect(second).toMatchObject({ kind: 'transfer', status: 'failed', retry_of: first.ticket_number });
    expect(second.report!.failed_files!.map((file) => file.path)).toEqual(['Redo/Redo/bad.txt']);

    // repaired: the retry of the retry writes it where the first run would have, nothing else
    await rm(zip);
    await zipFrom(library, 'Redo', { 'Redo/good.txt': GOOD, 'Redo/bad.txt': BAD });
    const third = await waitForJob(ferry, ((await (await retry(second.ticket_number, ferry.bearer())).json()) as Acknowledgement).ticket_number);
    expect(third.status, third.error ?? '').toBe('succeeded');
    expect(third.report!.resources_created).toEqual(['Redo/bad.txt']);
    expect(await readFile(path.join(ferry.workspace, 'Redo/Redo/bad.txt'), 'utf8')).toBe(BAD);
    expect(await readFile(path.join(ferry.workspace, 'Redo/Redo/good.txt'), 'utf8')).toBe('changed since, must stay');
    expect(await readdir(ferry.workspace)).toEqual(['Redo']);
  });

  it('verifies an archive again (a target verifies whole archives)', async () => {
    await zipWithBadCrc(path.join(ferry.dataDir, 'library'), 'Check', { 'Check/good.txt': GOOD, 'Check/bad.txt': BAD }, 'Check/bad.txt');
    const archive = await topOfLibrary(ferry, 'Check');
    const verifying = await ferry.fetch(`/api_v1/targets/offline/resources/${archive.id}/verify/`, { method: 'POST', headers: ferry.auth() });
    const verified = await waitForJob(ferry, ((await verifying.json()) as Acknowledgement).ticket_number);
    expect(verified.status).toBe('completed_with_errors');
    expect(verified.report!.failed_files).toEqual([expect.objectContaining({ path: 'Check/bad.txt', stage: 'verify', algorithm: 'crc32' })]);
    const again = await retry(verified.ticket_number, ferry.bearer());
    expect(again.status, await again.clone().text()).toBe(202);
    const second = await waitForJob(ferry, ((await again.json()) as Acknowledgement).ticket_number);
    expect(second).toMatchObject({ kind: 'verify', status: 'completed_with_errors', retry_of: verified.ticket_number });
  });

  it('refuses what cannot be retried, with the token rule of job access', async () => {
    await zipFrom(path.join(ferry.dataDir, 'library'), 'Fine', { 'Fine/a.txt': GOOD });
    const done = await transfer(ferry, 'local', (await topOfLibrary(ferry, 'Fine')).id, ferry.key);
    expect(done.status).toBe('succeeded');
    const nothing = await retry(done.ticket_number, ferry.bearer());
    expect(nothing.status).toBe(409);
    expect(await nothing.json()).toMatchObject({ code: 'retry_nothing', error: expect.stringMatching(/no failed files/) });
    expect((await retry(done.ticket_number, {})).status).toBe(401);
    expect((await retry(done.ticket_number, { 'service-destination-token': 'someone else' })).status).toBe(403);
    expect((await retry('00000000-0000-4000-8000-000000000000', ferry.bearer())).status).toBe(404);
  });
});

const noApache = apacheUnavailableReason();
if (noApache) console.warn(`[damaged-source to WebDAV] not run: ${noApache}`);

describe.skipIf(noApache !== null)('a transfer out of the offline library to a real WebDAV server', () => {
  let ferry: Ferry;
  let dav: ApacheWebdav;
  let token: string;
  beforeAll(async () => {
    dav = await startApacheWebdav();
    if (process.getuid?.() === 0) execFileSync('chown', ['-R', 'nobody', dav.dataDir]);
    token = JSON.stringify({ url: dav.url, username: dav.username, password: dav.password });
    ferry = await startFerry({
      targets: (config) => [
        new LocalTarget({ root: config.workspace }),
        createOfflineTarget(config),
        createWebdavTarget(makeConfig({ dataDir: config.dataDir }), new MemorySecretStore(), { retries: 0 }),
      ],
    });
    await mkdir(path.join(ferry.dataDir, 'library'), { recursive: true });
  });
  afterAll(async () => {
    await ferry?.close();
    await dav?.stop();
  });

  it('does not put a file whose CRC-32 fails, leaves no temporary, and is completed_with_errors', async () => {
    await zipWithBadCrc(path.join(ferry.dataDir, 'library'), 'Damaged', { 'Damaged/good.txt': GOOD, 'Damaged/bad.txt': BAD }, 'Damaged/bad.txt');
    const archive = await topOfLibrary(ferry, 'Damaged');
    const job = await transfer(ferry, 'webdav', archive.id, token);
    expectOneFailedFile(job, 'Damaged/Damaged/bad.txt', 'crc32');
    const served = await snapshotTree(dav.dataDir);
    expect(Object.keys(served).filter((name) => name.startsWith('Damaged')).sort()).toEqual(['Damaged', 'Damaged/Damaged', 'Damaged/Damaged/good.txt']);
  });

  it('does not put a kept bag\'s file with a flipped byte', async () => {
    await bagWithFlippedByte(path.join(ferry.dataDir, 'library'));
    const archive = await topOfLibrary(ferry, 'Study');
    const job = await transfer(ferry, 'webdav', archive.id, token);
    expectOneFailedFile(job, 'Study/b.txt', 'sha256');
    expect((await readdir(path.join(dav.dataDir, 'Study'))).sort()).toEqual(['a.txt']);
  });
});
