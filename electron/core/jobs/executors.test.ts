import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import yazl from 'yazl';
import { isFinishedStatus, type DuplicateFileAction, type Job } from '../../../shared/api.js';
import { MemorySecretStore } from '../keychain/memory.js';
import { tokenAccount } from '../keychain/port.js';
import { DEFAULT_LIMITS } from '../limits.js';
import { TargetRegistry } from '../registry.js';
import { encodeLocalId } from '../targets/local/ids.js';
import { LocalTarget } from '../targets/local/local-target.js';
import { registerTransferExecutors } from './executors.js';
import { createJobService } from './service.js';
import { MemoryTarget } from './test-support/memory-target.js';
import type { JobService } from './types.js';

const ACCESS_KEY = 'b'.repeat(64);
let dir: string;
const services: JobService[] = [];

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-executors-'));
});

afterEach(async () => {
  for (const service of services.splice(0)) await service.close();
  await rm(dir, { recursive: true, force: true });
});

interface Setup {
  jobs: JobService;
  registry: TargetRegistry;
  secrets: MemorySecretStore;
}

async function setup(targets: MemoryTarget[], secrets = new MemorySecretStore()): Promise<Setup> {
  const registry = new TargetRegistry();
  for (const target of targets) registry.register(target);
  const jobs = createJobService({ dir: path.join(dir, 'jobs'), concurrency: 2, retentionMs: 3_600_000, accessKey: ACCESS_KEY });
  services.push(jobs);
  registerTransferExecutors(jobs, { targets: registry, secrets, limits: DEFAULT_LIMITS, accessKey: ACCESS_KEY });
  await jobs.start();
  return { jobs, registry, secrets };
}

async function finished(jobs: JobService, ticket: string): Promise<Job> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const job = jobs.get(ticket)!;
    if (isFinishedStatus(job.status)) return job;
    if (Date.now() > deadline) throw new Error(`job still ${job.status}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

function transfer(fields: { from: string; id: string; to: string; containerId: string | null; action?: DuplicateFileAction; tokens?: Record<string, string> }) {
  return {
    kind: 'transfer' as const,
    target: fields.to,
    resource_id: fields.containerId,
    source: { target: fields.from, resource_id: fields.id },
    params: { source: { target: fields.from, resourceId: fields.id }, containerId: fields.containerId, duplicateAction: fields.action ?? 'ignore' },
    tokens: fields.tokens ?? { source: 'src-token', destination: 'dst-token' },
  };
}

describe('transfer executor', () => {
  it('with newer or rename, a destination that copies by itself is only asked when nothing is left out or renamed', async () => {
    const source = new MemoryTarget({ name: 'src', token: 'src-token', files: { 'Data/a.txt': 'new a' } });
    const destination = new MemoryTarget({ name: 'dst', token: 'dst-token', folders: ['Inbox', 'Clean'], files: { 'Inbox/Data/a.txt': 'old a' } });
    const asked: string[] = [];
    // a copyFrom that reports without copying: the test only sees whether it was asked, and with what
    Object.assign(destination, {
      copyFrom: (_ctx: unknown, _source: unknown, _id: string, containerId: string, options: { duplicateAction: string }) => {
        asked.push(`${MemoryTarget.pathOf(containerId)}:${options.duplicateAction}`);
        return Promise.resolve({ created: ['Data/a.txt'], updated: [], ignored: [], fileErrors: [] });
      },
    });
    const { jobs } = await setup([source, destination]);
    const data = { from: 'src', id: MemoryTarget.idOf('Data'), to: 'dst' };
    const renamed = await finished(jobs, (await jobs.submit(transfer({ ...data, containerId: MemoryTarget.idOf('Inbox'), action: 'rename' }))).ticket_number);
    expect(renamed.status, renamed.error ?? '').toBe('succeeded');
    expect(asked).toEqual([]);
    expect(destination.text('Inbox/Data/a.txt')).toBe('old a');
    expect(destination.text('Inbox/Data/a (2).txt')).toBe('new a');
    expect(renamed.report!.resources_created).toContain('Data/a (2).txt');
    // into a folder where nothing is there yet, the whole copy is the destination's; nothing is to be replaced, so 'ignore'
    const copied = await finished(jobs, (await jobs.submit(transfer({ ...data, containerId: MemoryTarget.idOf('Clean'), action: 'newer' }))).ticket_number);
    expect(copied.status, copied.error ?? '').toBe('succeeded');
    expect(asked).toEqual(['Clean:ignore']);
  });

  it('streams a folder from one target into another folder, with progress and a report', async () => {
    const source = new MemoryTarget({ name: 'src', token: 'src-token', files: { 'Data/a.txt': 'alpha', 'Data/sub/b.txt': 'beta!' } });
    const destination = new MemoryTarget({ name: 'dst', token: 'dst-token', folders: ['Inbox'], files: { 'Inbox/Data/a.txt': 'alpha' } });
    const { jobs } = await setup([source, destination]);
    const job = await jobs.submit(transfer({ from: 'src', id: MemoryTarget.idOf('Data'), to: 'dst', containerId: MemoryTarget.idOf('Inbox') }));
    const done = await finished(jobs, job.ticket_number);
    expect(done.error).toBeNull();
    expect(done.status).toBe('succeeded');
    expect(destination.text('Inbox/Data/sub/b.txt')).toBe('beta!');
    expect(done.report).toEqual({
      resources_created: ['Data/sub', 'Data/sub/b.txt'],
      resources_updated: [],
      resources_ignored: ['Data/a.txt'],
      failed_fixity: [],
      file_errors: [],
      failed_files: [],
      written_checks: [{ path: 'Data/sub/b.txt', result: 'verified', detail: "Memory (dst)'s md5 and sha256 and size of the stored file matched the bytes sent." }],
      new_resource: null,
    });
    expect(done.progress).toEqual({ files_done: 2, files_total: 2, bytes_done: 10, bytes_total: 10 });
    expect(done.source).toEqual({ target: 'src', resource_id: MemoryTarget.idOf('Data') });
  });

  it("verifies each written file against the destination's record: a wrong recorded hash makes that file failed, with a sentence", async () => {
    const source = new MemoryTarget({ name: 'src', files: { 'Data/a.txt': 'alpha', 'Data/b.txt': 'beta!' } });
    const destination = new MemoryTarget({ name: 'dst', folders: ['Inbox'], misrecord: ['Data/b.txt'] });
    const { jobs } = await setup([source, destination]);
    const job = await jobs.submit(transfer({ from: 'src', id: MemoryTarget.idOf('Data'), to: 'dst', containerId: MemoryTarget.idOf('Inbox') }));
    const done = await finished(jobs, job.ticket_number);
    expect(done.status).toBe('completed_with_errors');
    expect(done.report?.resources_created).toEqual(['Data', 'Data/a.txt']);
    const md5 = createHash('md5').update('beta!').digest('hex');
    const sentence = `'Data/b.txt' was written, but Memory (dst) records md5 ${'0'.repeat(32)} for it where the bytes Ferry sent have ${md5}; it is counted as failed. Upload it again.`;
    expect(done.report?.failed_files).toEqual([{ path: 'Data/b.txt', stage: 'verify', error: sentence, algorithm: 'md5', expected: md5, actual: '0'.repeat(32) }]);
    expect(done.report?.written_checks?.map((check) => [check.path, check.result])).toEqual([
      ['Data/a.txt', 'verified'],
      ['Data/b.txt', 'failed'],
    ]);
    expect(done.error).toContain("'Data/b.txt' (does not match its checksum)");

    // one file, and it fails its check: the job failed, never succeeded
    const lone = new MemoryTarget({ name: 'dst2', folders: ['Inbox'], misrecord: ['Data/a.txt'] });
    const single = new MemoryTarget({ name: 'src2', files: { 'Data/a.txt': 'alpha' } });
    const second = await setup([single, lone]);
    const failed = await finished(second.jobs, (await second.jobs.submit(transfer({ from: 'src2', id: MemoryTarget.idOf('Data'), to: 'dst2', containerId: MemoryTarget.idOf('Inbox') }))).ticket_number);
    expect(failed.status).toBe('failed');
  });

  it('creates a new top-level resource from a folder, and refuses a single file at the top level', async () => {
    const source = new MemoryTarget({ name: 'src', files: { 'Data/a.txt': 'alpha', 'loose.txt': 'x' } });
    const destination = new MemoryTarget({ name: 'dst', folders: ['Data'] });
    const { jobs } = await setup([source, destination]);
    const folder = await finished(jobs, (await jobs.submit(transfer({ from: 'src', id: MemoryTarget.idOf('Data'), to: 'dst', containerId: null }))).ticket_number);
    expect(folder.status).toBe('succeeded');
    expect(folder.report?.new_resource).toEqual({ id: MemoryTarget.idOf('Data (2)'), title: 'Data (2)' });
    expect(destination.text('Data (2)/a.txt')).toBe('alpha');

    const file = await finished(jobs, (await jobs.submit(transfer({ from: 'src', id: MemoryTarget.idOf('loose.txt'), to: 'dst', containerId: null }))).ticket_number);
    expect(file.status).toBe('failed');
    expect(file.error).toMatch(/^A new top-level resource needs one top-level folder; "loose\.txt" is a file\./);
  });

  it('does not write a file whose bytes flipped on the way, and ends completed_with_errors', async () => {
    const source = new MemoryTarget({ name: 'src', files: { 'Data/a.txt': 'alpha', 'Data/b.txt': 'bravo' }, corrupt: ['Data/b.txt'] });
    const destination = new MemoryTarget({ name: 'dst', folders: ['In'] });
    const { jobs } = await setup([source, destination]);
    const done = await finished(jobs, (await jobs.submit(transfer({ from: 'src', id: MemoryTarget.idOf('Data'), to: 'dst', containerId: MemoryTarget.idOf('In') }))).ticket_number);
    // the damaged file is not written; the other arrives: completed_with_errors, never succeeded
    expect(done.status).toBe('completed_with_errors');
    expect(done.report?.failed_fixity.map((failure) => [failure.path, failure.algorithm])).toEqual([
      ['Data/b.txt', 'md5'],
      ['Data/b.txt', 'sha256'],
    ]);
    expect(done.report?.failed_files).toEqual([expect.objectContaining({ path: 'Data/b.txt', stage: 'fixity', algorithm: 'md5' })]);
    expect(destination.text('In/Data/b.txt')).toBeUndefined();
    expect(destination.text('In/Data/a.txt')).toBe('alpha');
  });

  it('fails with the target\'s own message when a token is refused', async () => {
    const source = new MemoryTarget({ name: 'src', token: 'right' });
    source.putFile('Data/a.txt', Buffer.from('a'));
    const destination = new MemoryTarget({ name: 'dst', folders: ['In'] });
    const { jobs } = await setup([source, destination]);
    const done = await finished(jobs, (await jobs.submit(transfer({ from: 'src', id: MemoryTarget.idOf('Data'), to: 'dst', containerId: MemoryTarget.idOf('In'), tokens: { source: 'wrong', destination: 'd' } }))).ticket_number);
    expect(done.status).toBe('failed');
    expect(done.error).toBe('The Memory (src) token is invalid or expired.');
  });

  it('cancels a running transfer: the writer sees the abort and the job ends cancelled', async () => {
    const source = new MemoryTarget({ name: 'src', files: { 'Data/a.txt': 'alpha', 'Data/b.txt': 'bravo' } });
    let release!: () => void;
    const blocked = new Promise<void>((resolve) => (release = resolve));
    const destination = new MemoryTarget({ name: 'dst', folders: ['In'], beforeWriteFile: (file) => (file === 'Data/b.txt' ? blocked : undefined) });
    const { jobs } = await setup([source, destination]);
    const job = await jobs.submit(transfer({ from: 'src', id: MemoryTarget.idOf('Data'), to: 'dst', containerId: MemoryTarget.idOf('In') }));
    while (destination.text('In/Data/a.txt') === undefined) await new Promise((resolve) => setTimeout(resolve, 5));
    const cancelling = jobs.cancel(job.ticket_number);
    release();
    expect((await cancelling).status).toBe('cancelled');
    expect(destination.text('In/Data/b.txt')).toBeUndefined();
  });

  it('on resume, takes the access key for access-key targets and the keychain token for remote ones', async () => {
    const source = new MemoryTarget({ name: 'src', credential: 'access-key', token: ACCESS_KEY, files: { 'Data/a.txt': 'alpha' } });
    let release!: () => void;
    const blocked = new Promise<void>((resolve) => (release = resolve));
    let blocking = true;
    const destination = new MemoryTarget({
      name: 'dst',
      token: 'kept-token',
      folders: ['In'],
      beforeWriteFile: () => (blocking ? blocked : undefined),
    });
    const secrets = new MemorySecretStore();
    await secrets.set(tokenAccount('dst'), 'kept-token');
    const first = await setup([source, destination], secrets);
    const job = await first.jobs.submit(transfer({ from: 'src', id: MemoryTarget.idOf('Data'), to: 'dst', containerId: MemoryTarget.idOf('In'), tokens: { source: ACCESS_KEY, destination: 'kept-token' } }));
    while (first.jobs.get(job.ticket_number)!.status !== 'running' || destination.writes === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const closing = first.jobs.close();
    release();
    await closing;
    blocking = false;

    const tokensBefore = source.tokensSeen.length;
    const second = await setup([source, destination], secrets);
    const done = await finished(second.jobs, job.ticket_number);
    expect(done.error).toBeNull();
    expect(done.status).toBe('succeeded');
    expect(destination.text('In/Data/a.txt')).toBe('alpha');
    // read, and detail for the provenance record's identifier: the access key each time
    expect(new Set(source.tokensSeen.slice(tokensBefore))).toEqual(new Set([ACCESS_KEY]));
    expect(destination.tokensSeen.at(-1)).toBe('kept-token');
  });

  it('on resume without a stored token, fails saying the job must be submitted again', async () => {
    const source = new MemoryTarget({ name: 'src', files: { 'Data/a.txt': 'alpha' } });
    let release!: () => void;
    const blocked = new Promise<void>((resolve) => (release = resolve));
    const destination = new MemoryTarget({ name: 'dst', folders: ['In'], beforeWriteFile: () => blocked });
    const first = await setup([source, destination]);
    const job = await first.jobs.submit(transfer({ from: 'src', id: MemoryTarget.idOf('Data'), to: 'dst', containerId: MemoryTarget.idOf('In') }));
    while (destination.writes === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const closing = first.jobs.close();
    release();
    await closing;
    const second = createJobService({ dir: path.join(dir, 'jobs'), concurrency: 1, retentionMs: 3_600_000, accessKey: ACCESS_KEY });
    services.push(second);
    const registry = new TargetRegistry();
    registry.register(source);
    registry.register(new MemoryTarget({ name: 'dst', folders: ['In'] }));
    registerTransferExecutors(second, { targets: registry, secrets: new MemorySecretStore(), limits: DEFAULT_LIMITS, accessKey: ACCESS_KEY });
    await second.start();
    const done = await finished(second, job.ticket_number);
    expect(done.status).toBe('failed');
    expect(done.error).toBe('This job could not go on by itself after Ferry restarted because the Memory (src) token is not stored in the keychain; resume it with the token; the files it completed are not sent again.');
  });
});

/** Writes a ZIP with yazl: `files` maps entry names to contents (a trailing '/' makes a folder). */
async function makeZip(file: string, files: Record<string, string>): Promise<void> {
  const zip = new yazl.ZipFile();
  for (const [name, content] of Object.entries(files)) {
    if (name.endsWith('/')) zip.addEmptyDirectory(name);
    else zip.addBuffer(Buffer.from(content), name);
  }
  zip.end();
  const out = createWriteStream(file);
  zip.outputStream.pipe(out);
  await once(out, 'close');
}

function upload(fields: { to: string; containerId: string | null; spoolPath: string; action?: 'ignore' | 'update' }) {
  return {
    kind: 'upload' as const,
    target: fields.to,
    resource_id: fields.containerId,
    params: { spoolPath: fields.spoolPath, containerId: fields.containerId, duplicateAction: fields.action ?? 'update' },
    tokens: { destination: 'dst-token' },
    ownedFiles: [fields.spoolPath],
  };
}

describe('upload executor', () => {
  it('writes a plain ZIP into a folder, reports, and removes the spool once finished', async () => {
    const destination = new MemoryTarget({ name: 'dst', folders: ['In'], files: { 'In/Data/a.txt': 'old' } });
    const { jobs } = await setup([destination]);
    const spool = path.join(dir, 'spool-1.zip');
    await makeZip(spool, { 'Data/': '', 'Data/a.txt': 'alpha', 'Data/sub/b.txt': 'beta!' });
    const done = await finished(jobs, (await jobs.submit(upload({ to: 'dst', containerId: MemoryTarget.idOf('In'), spoolPath: spool }))).ticket_number);
    expect(done.error).toBeNull();
    expect(done.status).toBe('succeeded');
    expect(destination.text('In/Data/a.txt')).toBe('alpha');
    expect(destination.text('In/Data/sub/b.txt')).toBe('beta!');
    expect(done.report?.resources_updated).toEqual(['Data/a.txt']);
    expect(done.report?.resources_created).toContain('Data/sub/b.txt');
    expect(done.progress).toMatchObject({ files_done: 2, files_total: 2, bytes_done: 10, bytes_total: 10 });
    await expect(stat(spool)).rejects.toThrow();
  });

  it('creates a new top-level resource from a ZIP with one top folder', async () => {
    const destination = new MemoryTarget({ name: 'dst' });
    const { jobs } = await setup([destination]);
    const spool = path.join(dir, 'spool-2.zip');
    await makeZip(spool, { 'Project/readme.md': '# hi' });
    const done = await finished(jobs, (await jobs.submit(upload({ to: 'dst', containerId: null, spoolPath: spool }))).ticket_number);
    expect(done.error).toBeNull();
    expect(done.report?.new_resource).toEqual({ id: MemoryTarget.idOf('Project'), title: 'Project' });
    expect(destination.text('Project/readme.md')).toBe('# hi');
  });

  it('uploads a zipped BagIt bag as a new top-level resource, its manifest hashes checked in flight', async () => {
    const destination = new MemoryTarget({ name: 'dst' });
    const { jobs } = await setup([destination]);
    const spool = path.join(dir, 'spool-bag.zip');
    const content = 'measured values\n';
    const digest = createHash('sha256').update(content).digest('hex');
    await makeZip(spool, {
      'bag/bagit.txt': 'BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n',
      'bag/manifest-sha256.txt': `${digest}  data/Survey/values.csv\n`,
      'bag/data/Survey/values.csv': content,
    });
    const done = await finished(jobs, (await jobs.submit(upload({ to: 'dst', containerId: null, spoolPath: spool }))).ticket_number);
    expect(done.error).toBeNull();
    expect(done.status).toBe('succeeded');
    expect(done.report?.new_resource?.title).toBe('Survey');
    expect(done.report?.failed_fixity).toEqual([]);
    expect(destination.text('Survey/values.csv')).toBe(content);
    expect(destination.text('bag/bagit.txt')).toBeUndefined();
  });

  it('refuses a top-level upload with two top-level folders, writing nothing, and removes the spool', async () => {
    const destination = new MemoryTarget({ name: 'dst' });
    const { jobs } = await setup([destination]);
    const spool = path.join(dir, 'spool-3.zip');
    await makeZip(spool, { 'One/a.txt': 'a', 'Two/b.txt': 'b' });
    const done = await finished(jobs, (await jobs.submit(upload({ to: 'dst', containerId: null, spoolPath: spool }))).ticket_number);
    expect(done.status).toBe('failed');
    expect(done.error).toMatch(/^A new top-level resource needs exactly one top-level folder; found 2 \("One", "Two"\)/);
    expect(destination.writes).toBe(0);
    await expect(stat(spool)).rejects.toThrow();
  });

  it('fails with the reader\'s message for something that is not a ZIP', async () => {
    const destination = new MemoryTarget({ name: 'dst', folders: ['In'] });
    const { jobs } = await setup([destination]);
    const spool = path.join(dir, 'spool-4.zip');
    const { writeFile } = await import('node:fs/promises');
    await writeFile(spool, 'this is not a zip file at all');
    const done = await finished(jobs, (await jobs.submit(upload({ to: 'dst', containerId: MemoryTarget.idOf('In'), spoolPath: spool }))).ticket_number);
    expect(done.status).toBe('failed');
    expect(done.error).toBeTruthy();
    expect(done.error).not.toContain(dir);
    expect(destination.writes).toBe(0);
  });

  it('fails with a clear sentence when the spooled ZIP has gone missing', async () => {
    const destination = new MemoryTarget({ name: 'dst', folders: ['In'] });
    const { jobs } = await setup([destination]);
    const done = await finished(jobs, (await jobs.submit(upload({ to: 'dst', containerId: MemoryTarget.idOf('In'), spoolPath: path.join(dir, 'gone.zip') }))).ticket_number);
    expect(done.status).toBe('failed');
    expect(done.error).toBe('The uploaded ZIP for this job is no longer on disk; upload it again.');
  });

  it('keeps the spool until the final state is on disk, so a crash before that still finds it', async () => {
    // A SIGKILL right after the write finished but before the job file says so: the next
    // start resumes the job, which needs the spool (else it fails a job that had succeeded).
    const destination = new MemoryTarget({ name: 'dst', folders: ['In'] });
    const registry = new TargetRegistry();
    registry.register(destination);
    const jobs = createJobService({ dir: path.join(dir, 'jobs'), concurrency: 1, retentionMs: 3_600_000, accessKey: ACCESS_KEY });
    services.push(jobs);
    const spool = path.join(dir, 'spool-crash.zip');
    let spoolWhenExecutorReturned: boolean | null = null;
    const watching: JobService = Object.create(jobs, {
      register: {
        value: (kind: Parameters<JobService['register']>[0], executor: Parameters<JobService['register']>[1]) =>
          jobs.register(kind, async (ctx) => {
            try {
              return await executor(ctx);
            } finally {
              spoolWhenExecutorReturned = await stat(spool).then(() => true, () => false);
            }
          }),
      },
    });
    registerTransferExecutors(watching, { targets: registry, secrets: new MemorySecretStore(), limits: DEFAULT_LIMITS, accessKey: ACCESS_KEY });
    await jobs.start();
    await makeZip(spool, { 'Data/a.txt': 'alpha' });
    const ticket = (await jobs.submit(upload({ to: 'dst', containerId: MemoryTarget.idOf('In'), spoolPath: spool }))).ticket_number;
    const done = await finished(jobs, ticket);
    expect(done.status).toBe('succeeded');
    expect(spoolWhenExecutorReturned).toBe(true);
    // once the service reports the end, it is on disk and the spool is gone
    const stored = JSON.parse(await readFile(path.join(dir, 'jobs', `${ticket}.json`), 'utf8')) as { job: Job };
    expect(stored.job.status).toBe('succeeded');
    await expect(stat(spool)).rejects.toThrow();
  });

  it('keeps the spool when Ferry stops mid-upload and finishes the upload on the next start', async () => {
    let release!: () => void;
    let blocking = true;
    const blocked = new Promise<void>((resolve) => (release = resolve));
    const destination = new MemoryTarget({ name: 'dst', folders: ['In'], beforeWriteFile: () => (blocking ? blocked : undefined) });
    const secrets = new MemorySecretStore();
    await secrets.set(tokenAccount('dst'), 'dst-token');
    const first = await setup([destination], secrets);
    const spool = path.join(dir, 'spool-5.zip');
    await makeZip(spool, { 'Data/a.txt': 'alpha' });
    const job = await first.jobs.submit(upload({ to: 'dst', containerId: MemoryTarget.idOf('In'), spoolPath: spool }));
    while (destination.writes === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const closing = first.jobs.close();
    release();
    await closing;
    blocking = false;
    await stat(spool); // still there for the resumed run

    const second = await setup([destination], secrets);
    const done = await finished(second.jobs, job.ticket_number);
    expect(done.error).toBeNull();
    expect(done.status).toBe('succeeded');
    expect(destination.text('In/Data/a.txt')).toBe('alpha');
    await expect(stat(spool)).rejects.toThrow();
  });
});

describe('upload executor, bag into a staging target (local): checked in the pass that writes it', () => {
  const sha = (text: string) => createHash('sha256').update(text).digest('hex');
  const bag = (payload: Record<string, string>, lie: string | null = null) => ({
    'bag/bagit.txt': 'BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n',
    'bag/manifest-sha256.txt': Object.entries(payload).map(([file, content]) => `${file === lie ? sha('something else') : sha(content)}  data/${file}\n`).join(''),
    ...Object.fromEntries(Object.entries(payload).map(([file, content]) => [`bag/data/${file}`, content])),
  });

  async function localSetup(): Promise<{ jobs: JobService; root: string; inbox: string }> {
    const root = path.join(dir, 'workspace');
    await mkdir(path.join(root, 'In', 'Data'), { recursive: true });
    await writeFile(path.join(root, 'In', 'Data', 'kept.txt'), 'kept, not what the bag says');
    const local = new LocalTarget({ root });
    const registry = new TargetRegistry();
    registry.register(local);
    const jobs = createJobService({ dir: path.join(dir, 'jobs'), concurrency: 1, retentionMs: 3_600_000, accessKey: ACCESS_KEY });
    services.push(jobs);
    registerTransferExecutors(jobs, { targets: registry, secrets: new MemorySecretStore(), limits: DEFAULT_LIMITS, accessKey: ACCESS_KEY });
    await jobs.start();
    return { jobs, root, inbox: encodeLocalId('In') };
  }

  const tree = async (root: string) => ((await readdir(root, { recursive: true })) as string[]).sort();

  it('writes a good bag and reports it as before', async () => {
    const { jobs, root, inbox } = await localSetup();
    const spool = path.join(dir, 'good.zip');
    await makeZip(spool, bag({ 'Data/a.txt': 'alpha', 'Data/sub/b.txt': 'beta', 'Data/kept.txt': 'new bytes' }));
    const done = await finished(jobs, (await jobs.submit({ ...upload({ to: 'local', containerId: inbox, spoolPath: spool, action: 'ignore' }), tokens: { destination: ACCESS_KEY } })).ticket_number);
    expect(done.error).toBeNull();
    expect(done.report).toMatchObject({ resources_ignored: ['Data/kept.txt'], failed_fixity: [], file_errors: [] });
    expect(done.report?.resources_created).toEqual(['Data/a.txt', 'Data/sub', 'Data/sub/b.txt']);
    expect(await readFile(path.join(root, 'In', 'Data', 'sub', 'b.txt'), 'utf8')).toBe('beta');
    expect(await readFile(path.join(root, 'In', 'Data', 'kept.txt'), 'utf8')).toBe('kept, not what the bag says');
    expect((await tree(root)).filter((name) => name.includes('.ferry-'))).toEqual([]);
  });

  it('fails a bag whose bytes do not match, having written nothing — also when the bad file is one the writer ignores', async () => {
    for (const lie of ['Data/sub/b.txt', 'Data/kept.txt']) {
      const { jobs, root, inbox } = await localSetup();
      const before = await tree(root);
      const spool = path.join(dir, `bad-${lie.length}.zip`);
      await makeZip(spool, bag({ 'Data/a.txt': 'alpha', 'Data/sub/b.txt': 'beta', 'Data/kept.txt': 'new bytes' }, lie));
      const done = await finished(jobs, (await jobs.submit({ ...upload({ to: 'local', containerId: inbox, spoolPath: spool, action: 'ignore' }), tokens: { destination: ACCESS_KEY } })).ticket_number);
      expect(done.status).toBe('failed');
      expect(done.error).toBe(`The uploaded bag is not valid, so nothing was written: data/${lie} does not match its sha256 checksum in manifest-sha256.txt.`);
      expect(await tree(root)).toEqual(before);
      await rm(root, { recursive: true, force: true });
      await rm(path.join(dir, 'jobs'), { recursive: true, force: true });
    }
  });

  it('refuses a bag whose stored bytes were damaged inside the ZIP (its manifests catch it; the CRC-32 is not read twice), writing nothing', async () => {
    // one file read whole (small) and one streamed (over 1 MiB), each damaged in its own run
    const big = Buffer.alloc(1536 * 1024, 'big and stored ');
    const payload = { 'Data/small.txt': Buffer.from('small and stored'), 'Data/big.bin': big };
    for (const damaged of Object.keys(payload)) {
      const { jobs, root, inbox } = await localSetup();
      const before = await tree(root);
      const zip = new yazl.ZipFile();
      zip.addBuffer(Buffer.from('BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n'), 'bag/bagit.txt');
      zip.addBuffer(Buffer.from(Object.entries(payload).map(([file, bytes]) => `${createHash('sha256').update(bytes).digest('hex')}  data/${file}\n`).join('')), 'bag/manifest-sha256.txt');
      for (const [file, bytes] of Object.entries(payload)) zip.addBuffer(bytes, `bag/data/${file}`, { compress: false });
      zip.end();
      const chunks: Buffer[] = [];
      for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
      const bytes = Buffer.concat(chunks);
      // a byte in the middle of the entry's stored data: same size, CRC-32 and sha256 now wrong
      const name = Buffer.from(`bag/data/${damaged}`);
      const at = bytes.indexOf(name) + name.length + 8;
      bytes[at] = bytes[at]! ^ 0xff;
      const spool = path.join(dir, `damaged-${damaged.length}.zip`);
      await writeFile(spool, bytes);
      const done = await finished(jobs, (await jobs.submit({ ...upload({ to: 'local', containerId: inbox, spoolPath: spool, action: 'update' }), tokens: { destination: ACCESS_KEY } })).ticket_number);
      expect(done.status).toBe('failed');
      expect(done.error).toBe(`The uploaded bag is not valid, so nothing was written: data/${damaged} does not match its sha256 checksum in manifest-sha256.txt.`);
      expect(await tree(root)).toEqual(before);
      await rm(root, { recursive: true, force: true });
      await rm(path.join(dir, 'jobs'), { recursive: true, force: true });
    }
  });
});
