import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Job, JobStatus } from '../../../shared/api.js';
import { CancelledError, FerryError, badRequest } from '../errors.js';
import { retryListener } from '../remote/retry-notice.js';
import { StoppedWithReport } from './outcome.js';
import { createJobService, type JobServiceOptions } from './service.js';
import { waitFor, waitStatus } from './test-support/wait.js';
import { emptyReport, type JobExecutionContext, type JobService, type SubmitJob } from './types.js';

const ACCESS_KEY = 'a'.repeat(64);
let dir: string;
const services: JobService[] = [];

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-jobs-'));
});

afterEach(async () => {
  for (const service of services.splice(0)) await service.close();
  await rm(dir, { recursive: true, force: true });
  vi.restoreAllMocks();
});

function makeService(overrides: Partial<JobServiceOptions> = {}): JobService {
  const service = createJobService({ dir, concurrency: 2, retentionMs: 3_600_000, accessKey: ACCESS_KEY, closeTimeoutMs: 2000, ...overrides });
  services.push(service);
  return service;
}

function request(overrides: Partial<SubmitJob> = {}): SubmitJob {
  return { kind: 'upload', target: 'memory', resource_id: null, params: { n: 1 }, tokens: { destination: 'secret-token-123' }, ...overrides };
}

/** A promise with its resolver, for executors a test releases by hand. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

const statusOf = (service: JobService, ticket: string): JobStatus | undefined => service.get(ticket)?.status;

async function stored(ticket: string) {
  return JSON.parse(await readFile(path.join(dir, `${ticket}.json`), 'utf8'));
}

describe('job service', () => {
  it('runs a job to success, with contract timestamps and the report persisted', async () => {
    const service = makeService();
    service.register('upload', async () => ({ ...emptyReport(), resources_created: ['a.txt'] }));
    await service.start();
    const job = await service.submit(request());
    expect(job.ticket_number).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(job.status).toBe('queued');
    const done = await waitStatus(service, job.ticket_number, 'succeeded');
    expect(done.created).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    expect(done.started).toMatch(/\.\d{6}Z$/);
    expect(done.finished).toMatch(/\.\d{6}Z$/);
    expect(done.report?.resources_created).toEqual(['a.txt']);
    expect(done.error).toBeNull();
    await service.close();
    const file = await stored(job.ticket_number);
    expect(file.job.status).toBe('succeeded');
    expect(file.params).toEqual({ n: 1 });
  });

  it('tells its queue listener when a job starts, and when the last running job ends with none to start', async () => {
    const told: string[] = [];
    const service = makeService({ concurrency: 1, queueListener: { busy: () => told.push('busy'), idle: () => told.push('idle') } });
    const gates = [gate(), gate()];
    let runs = 0;
    service.register('upload', async () => {
      await gates[runs++]!.opened;
      return emptyReport();
    });
    await service.start();
    const first = await service.submit(request());
    const second = await service.submit(request());
    await waitFor(() => runs === 1);
    expect(told).toEqual(['busy']);
    // the first ends while the second waits: the second starts, and the queue is not idle
    gates[0]!.open();
    await waitFor(() => runs === 2);
    expect(statusOf(service, first.ticket_number)).toBe('succeeded');
    expect(told).toEqual(['busy', 'busy']);
    gates[1]!.open();
    await waitStatus(service, second.ticket_number, 'succeeded');
    await waitFor(() => told.length === 3);
    expect(told).toEqual(['busy', 'busy', 'idle']);
  });

  it('never runs more than `concurrency` jobs at once, in FIFO order', async () => {
    const service = makeService({ concurrency: 2 });
    const gates = new Map<string, ReturnType<typeof gate>>();
    let running = 0;
    let peak = 0;
    const order: number[] = [];
    service.register('upload', async (ctx) => {
      running += 1;
      peak = Math.max(peak, running);
      order.push(ctx.params.n as number);
      const g = gate();
      gates.set(ctx.job.ticket_number, g);
      await g.opened;
      running -= 1;
      return emptyReport();
    });
    await service.start();
    const jobs: Job[] = [];
    for (let n = 0; n < 5; n++) jobs.push(await service.submit(request({ params: { n } })));
    await waitFor(() => gates.size === 2);
    expect(jobs.map((job) => statusOf(service, job.ticket_number))).toEqual(['running', 'running', 'queued', 'queued', 'queued']);
    // release whichever jobs are running, until all five have run
    while (order.length < 5 || running > 0) {
      for (const [ticket, g] of [...gates]) {
        gates.delete(ticket);
        g.open();
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    for (const job of jobs) await waitStatus(service, job.ticket_number, 'succeeded');
    expect(peak).toBe(2);
    expect(order).toEqual([0, 1, 2, 3, 4]);
  });

  it('publishes and persists progress at a bounded rate, and always the final value', async () => {
    const service = makeService({ progressIntervalMs: 100 });
    const events: Job[] = [];
    service.subscribe((job) => events.push(job));
    service.register('upload', async (ctx) => {
      ctx.progress({ files_total: 100_000, bytes_total: 100_000 });
      for (let i = 1; i <= 100_000; i++) {
        ctx.progress({ files_done: i, bytes_done: i });
        if (i % 20_000 === 0) await new Promise((resolve) => setTimeout(resolve, 60));
      }
      await new Promise((resolve) => setTimeout(resolve, 150));
      return emptyReport();
    });
    await service.start();
    const startedAt = Date.now();
    const job = await service.submit(request());
    await waitStatus(service, job.ticket_number, 'succeeded');
    const elapsed = Date.now() - startedAt;
    const progressEvents = events.filter((event) => event.status === 'running');
    // status events (queued, running, succeeded) plus at most one progress event per interval
    expect(progressEvents.length).toBeLessThanOrEqual(Math.ceil(elapsed / 100) + 2);
    expect(progressEvents.length).toBeGreaterThanOrEqual(2);
    expect(progressEvents.at(-1)!.progress).toEqual({ files_done: 100_000, files_total: 100_000, bytes_done: 100_000, bytes_total: 100_000 });
    await service.close();
    expect((await stored(job.ticket_number)).job.progress.files_done).toBe(100_000);
  });

  it('shows a request waiting to be retried in the job progress, in words, and clears it when the wait ends and when the job ends', async () => {
    const service = makeService({ progressIntervalMs: 0 });
    const waiting = gate();
    const release = gate();
    service.register('upload', async (ctx) => {
      const listener = retryListener(ctx.signal);
      const [first, second] = [{}, {}];
      listener('OSF is not answering (HTTP 503); retrying in 20 s (attempt 3 of 5).', first);
      listener('OSF is limiting the request rate (HTTP 429); retrying in 2 s (attempt 2 of 5).', second);
      listener(null, first); // another request's wait ending does not clear this one's notice
      waiting.open();
      await release.opened;
      return emptyReport();
    });
    await service.start();
    const job = await service.submit(request());
    await waiting.opened;
    expect(service.get(job.ticket_number)!.progress.note).toBe('OSF is limiting the request rate (HTTP 429); retrying in 2 s (attempt 2 of 5).');
    release.open();
    const done = await waitStatus(service, job.ticket_number, 'succeeded');
    expect(done.progress.note).toBeUndefined();
  });

  it('cancels a queued job at once and a running one through its signal; 409 once finished; 404 unknown', async () => {
    const service = makeService({ concurrency: 1 });
    let sawAbort = false;
    service.register('upload', async (ctx) => {
      await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
      sawAbort = true;
      throw new CancelledError();
    });
    await service.start();
    const spool = path.join(dir, 'queued-spool.zip');
    await writeFile(spool, 'zip');
    const running = await service.submit(request());
    const queued = await service.submit(request({ ownedFiles: [spool] }));
    await waitStatus(service, running.ticket_number, 'running');
    expect(statusOf(service, queued.ticket_number)).toBe('queued');

    const cancelledQueued = await service.cancel(queued.ticket_number);
    expect(cancelledQueued.status).toBe('cancelled');
    expect(cancelledQueued.finished).not.toBeNull();
    await expect(stat(spool)).rejects.toThrow(); // a job that will never run lets its inputs go

    const cancelledRunning = await service.cancel(running.ticket_number);
    expect(sawAbort).toBe(true);
    expect(cancelledRunning.status).toBe('cancelled');
    expect(cancelledRunning.error).toBeNull();

    await expect(service.cancel(running.ticket_number)).rejects.toMatchObject({ status: 409, code: 'conflict', message: 'The job has already finished.' });
    await expect(service.cancel('00000000-0000-4000-8000-000000000000')).rejects.toMatchObject({ status: 404, code: 'ticket_not_found' });
    await service.close();
    expect((await stored(queued.ticket_number)).job.status).toBe('cancelled');
    expect((await stored(running.ticket_number)).job.status).toBe('cancelled');
  });

  it('ends cancelled when a cancelled executor fails some other way while its signal is aborted', async () => {
    const service = makeService();
    service.register('upload', async (ctx) => {
      await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
      throw new Error('socket closed');
    });
    await service.start();
    const job = await service.submit(request());
    await waitStatus(service, job.ticket_number, 'running');
    expect((await service.cancel(job.ticket_number)).status).toBe('cancelled');
  });

  it('turns a FerryError into its message and any other error into a generic sentence without the stack', async () => {
    const service = makeService();
    const logged = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    service.register('upload', async (ctx) => {
      if (ctx.params.n === 1) throw badRequest('The ZIP holds two top-level folders.');
      throw new Error(`boom at /home/someone/secret/path with ${ctx.tokens.destination}`);
    });
    await service.start();
    const ferry = await service.submit(request({ params: { n: 1 } }));
    const other = await service.submit(request({ params: { n: 2 } }));
    expect((await waitStatus(service, ferry.ticket_number, 'failed')).error).toBe('The ZIP holds two top-level folders.');
    const failed = await waitStatus(service, other.ticket_number, 'failed');
    expect(failed.error).not.toMatch(/boom|\/home|at |secret/);
    expect(failed.error).toMatch(/unexpected error/);
    const log = logged.mock.calls.flat().join(' ');
    expect(log).toContain('boom');
    expect(log).not.toContain('secret-token-123');
  });

  it('persists only sha256 digests of tokens, and mayAccess checks them or the access key', async () => {
    const service = makeService();
    const release = gate();
    service.register('upload', async () => {
      await release.opened;
      return emptyReport();
    });
    await service.start();
    const job = await service.submit(request({ tokens: { destination: 'secret-token-123', source: 'other-secret-456' } }));
    const text = await readFile(path.join(dir, `${job.ticket_number}.json`), 'utf8');
    expect(text).not.toContain('secret-token-123');
    expect(text).not.toContain('other-secret-456');
    expect(text).not.toContain(ACCESS_KEY);
    expect(JSON.parse(text).tokenSha256).toHaveLength(2);

    expect(service.mayAccess(job.ticket_number, 'secret-token-123')).toBe(true);
    expect(service.mayAccess(job.ticket_number, 'other-secret-456')).toBe(true);
    expect(service.mayAccess(job.ticket_number, ACCESS_KEY)).toBe(true);
    expect(service.mayAccess(job.ticket_number, 'secret-token-12')).toBe(false);
    expect(service.mayAccess(job.ticket_number, '')).toBe(false);
    expect(service.mayAccess('00000000-0000-4000-8000-000000000000', 'secret-token-123')).toBe(false);
    release.open();
    await waitStatus(service, job.ticket_number, 'succeeded');
    // still answerable after a restart (digests came back from disk)
    await service.close();
    const again = makeService();
    again.register('upload', async () => emptyReport());
    await again.start();
    expect(again.mayAccess(job.ticket_number, 'secret-token-123')).toBe(true);
    expect(again.mayAccess(job.ticket_number, 'nope')).toBe(false);
  });

  it('writes job files atomically: readers never see a partial file, and a crash mid-write leaves the old one', async () => {
    const service = makeService({ progressIntervalMs: 0 });
    const release = gate();
    service.register('upload', async (ctx) => {
      for (let i = 0; i < 300; i++) {
        ctx.progress({ files_done: i, files_total: 300 });
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
      await release.opened;
      return emptyReport();
    });
    await service.start();
    const job = await service.submit(request());
    const file = path.join(dir, `${job.ticket_number}.json`);
    let reads = 0;
    while (service.get(job.ticket_number)!.progress.files_done < 299) {
      const text = await readFile(file, 'utf8');
      expect(() => JSON.parse(text)).not.toThrow();
      reads += 1;
    }
    expect(reads).toBeGreaterThan(10);
    release.open();
    await waitStatus(service, job.ticket_number, 'succeeded');
    await service.close();

    // A crash mid-write leaves a temp file beside the intact old json.
    const before = await readFile(file, 'utf8');
    const temp = path.join(dir, `.${job.ticket_number}.json.deadbeef.tmp`);
    await writeFile(temp, before.slice(0, 40));
    const again = makeService();
    again.register('upload', async () => emptyReport());
    await again.start();
    expect(again.get(job.ticket_number)?.status).toBe('succeeded');
    expect(await readFile(file, 'utf8')).toBe(before);
    await expect(stat(temp)).rejects.toThrow();
    expect((await readdir(dir)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('resumes a job that was running when the service closed, with resumed: true and no tokens', async () => {
    const first = makeService();
    const seen: JobExecutionContext[] = [];
    first.register('upload', async (ctx) => {
      seen.push(ctx);
      ctx.progress({ files_done: 1, files_total: 10 });
      await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
      throw new CancelledError();
    });
    await first.start();
    const job = await first.submit(request());
    await waitFor(() => seen.length === 1);
    expect(seen[0]!.resumed).toBe(false);
    expect(seen[0]!.tokens).toEqual({ destination: 'secret-token-123' });
    await first.close();
    expect((await stored(job.ticket_number)).job.status).toBe('running');

    const second = makeService();
    const resumed: JobExecutionContext[] = [];
    second.register('upload', async (ctx) => {
      resumed.push(ctx);
      return { ...emptyReport(), resources_created: ['x'] };
    });
    await second.start();
    const done = await waitStatus(second, job.ticket_number, 'succeeded');
    expect(resumed).toHaveLength(1);
    expect(resumed[0]!.resumed).toBe(true);
    expect(resumed[0]!.tokens).toEqual({});
    expect(resumed[0]!.params).toEqual({ n: 1 });
    expect(done.report?.resources_created).toEqual(['x']);
  });

  it('resumes a job after the process running it was killed (SIGKILL) mid-job', async () => {
    const host = fileURLToPath(new URL('./test-support/crashing-host.ts', import.meta.url));
    // tsx's loader inside this one process (its CLI would fork a grandchild that SIGKILL misses)
    const tsxLoader = new URL('../../../node_modules/tsx/dist/loader.mjs', import.meta.url).href;
    const child = spawn(process.execPath, ['--import', tsxLoader, host, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = once(child, 'exit');
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    let ticket: string;
    try {
      ticket = await waitFor(() => /^[0-9a-f-]{36}\n/.test(output) && output.trim(), 30_000);
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
    const onDisk = await stored(ticket);
    expect(onDisk.job.status).toBe('running');
    expect(onDisk.job.progress.files_done).toBe(3);

    const service = makeService();
    const seen: JobExecutionContext[] = [];
    service.register('upload', async (ctx) => {
      seen.push(ctx);
      return emptyReport();
    });
    await service.start();
    await waitStatus(service, ticket, 'succeeded');
    expect(seen.map((ctx) => [ctx.resumed, ctx.params.n, ctx.tokens])).toEqual([[true, 7, {}]]);
    expect(service.mayAccess(ticket, 'crash-token')).toBe(true);
  });

  it('fails an interrupted job with a reason when nothing can run it; never leaves it running', async () => {
    const first = makeService({ concurrency: 1 });
    first.register('upload', (ctx) => new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(new CancelledError()))));
    await first.start();
    const running = await first.submit(request());
    const waiting = await first.submit(request());
    await waitStatus(first, running.ticket_number, 'running');
    await first.close();
    expect((await stored(waiting.ticket_number)).job.status).toBe('queued');

    const second = makeService();
    second.register('transfer', async () => emptyReport());
    await second.start();
    const failed = second.get(running.ticket_number)!;
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatch(/^Ferry stopped while this job was running and it could not be resumed: /);
    expect(second.get(waiting.ticket_number)!.status).toBe('failed');
    await second.close();
    expect((await stored(running.ticket_number)).job.status).toBe('failed');
  });

  it('an executor that fails on resume (no stored token) ends failed with its message', async () => {
    const first = makeService();
    first.register('upload', (ctx) => new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(new CancelledError()))));
    await first.start();
    const job = await first.submit(request());
    await waitStatus(first, job.ticket_number, 'running');
    await first.close();
    const second = makeService();
    second.register('upload', async (ctx) => {
      if (!ctx.tokens.destination) throw new FerryError(401, 'unauthorized', 'This job could not be resumed because the token is not stored in the keychain; submit the job again.');
      return emptyReport();
    });
    await second.start();
    expect((await waitStatus(second, job.ticket_number, 'failed')).error).toMatch(/could not be resumed because/);
  });

  it('prunes finished jobs older than the retention, with their owned files, at start and periodically', async () => {
    let clock = new Date('2030-01-01T00:00:00Z');
    const spool = path.join(dir, '..', `${path.basename(dir)}-spool.zip`);
    await writeFile(spool, 'zip bytes');
    const first = makeService({ now: () => clock, retentionMs: 60_000 });
    first.register('upload', async () => emptyReport());
    await first.start();
    const old = await first.submit(request({ ownedFiles: [spool] }));
    await waitStatus(first, old.ticket_number, 'succeeded');
    await first.close();

    clock = new Date('2030-01-01T00:00:30Z');
    const second = makeService({ now: () => clock, retentionMs: 60_000, pruneIntervalMs: 20 });
    second.register('upload', async () => emptyReport());
    await second.start();
    expect(second.get(old.ticket_number)).toBeDefined(); // not old enough yet
    const recent = await second.submit(request());
    await waitStatus(second, recent.ticket_number, 'succeeded');

    clock = new Date('2030-01-01T00:01:10Z'); // old is 70 s old, recent ~40 s
    await waitFor(() => second.get(old.ticket_number) === undefined);
    expect(second.get(recent.ticket_number)).toBeDefined();
    await expect(stat(path.join(dir, `${old.ticket_number}.json`))).rejects.toThrow();
    await expect(stat(spool)).rejects.toThrow();
    await stat(path.join(dir, `${recent.ticket_number}.json`));
  });

  it('hands the executor a signal that close() aborts with a shutdown reason, not a cancel', async () => {
    const { isShutdownAbort } = await import('./service.js');
    const service = makeService();
    let shutdown: boolean | undefined;
    service.register('upload', async (ctx) => {
      await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
      shutdown = isShutdownAbort(ctx.signal);
      throw new CancelledError();
    });
    await service.start();
    const job = await service.submit(request());
    await waitStatus(service, job.ticket_number, 'running');
    await service.close();
    expect(shutdown).toBe(true);
    expect((await stored(job.ticket_number)).job.status).toBe('running');
  });
});

describe('job outcomes', () => {
  it('ends completed_with_errors (persisted, published, pruned like any end) when some files failed', async () => {
    const service = makeService();
    const seen: JobStatus[] = [];
    service.subscribe((job) => seen.push(job.status));
    service.register('upload', async () => ({
      ...emptyReport(),
      resources_created: ['D', 'D/a.txt'],
      failed_files: [{ path: 'D/b.txt', stage: 'write', error: 'The server went away.' }],
    }));
    await service.start();
    const job = await service.submit(request());
    const done = await waitStatus(service, job.ticket_number, 'completed_with_errors');
    expect(done.error).toMatch(/^1 file failed: 'D\/b.txt' \(could not be written\)/);
    expect(seen.at(-1)).toBe('completed_with_errors');
    await expect(service.cancel(job.ticket_number)).rejects.toMatchObject({ status: 409 });
    await service.close();
    expect((await stored(job.ticket_number)).job.status).toBe('completed_with_errors');
    // a restart leaves it as it is: finished, not resumed
    const again = makeService();
    let ran = 0;
    again.register('upload', async () => {
      ran++;
      return emptyReport();
    });
    await again.start();
    expect(again.get(job.ticket_number)?.status).toBe('completed_with_errors');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(ran).toBe(0);
  });

  it('ends failed when every file failed, with the report, never succeeded', async () => {
    const service = makeService();
    service.register('upload', async () => ({ ...emptyReport(), failed_files: [{ path: 'a', stage: 'fixity', error: 'x' }] }));
    await service.start();
    const done = await waitStatus(service, (await service.submit(request())).ticket_number, 'failed');
    expect(done.error).toMatch(/^Nothing arrived/);
    expect(done.report?.failed_files).toHaveLength(1);
  });

  it('a job that stopped after changing something keeps the report of what changed (failed and cancelled)', async () => {
    const service = makeService();
    const changed = { ...emptyReport(), unconfirmed: ['D/a.txt'] };
    service.register('upload', async () => {
      throw new StoppedWithReport(new FerryError(502, 'upstream_error', 'The WebDAV server closed the connection.'), changed);
    });
    service.register('transfer', async () => {
      throw new StoppedWithReport(new CancelledError(), changed);
    });
    await service.start();
    const failed = await waitStatus(service, (await service.submit(request())).ticket_number, 'failed');
    expect(failed.error).toBe('The WebDAV server closed the connection.');
    expect(failed.report?.unconfirmed).toEqual(['D/a.txt']);
    const cancelled = await waitStatus(service, (await service.submit(request({ kind: 'transfer' }))).ticket_number, 'cancelled');
    expect(cancelled.report?.unconfirmed).toEqual(['D/a.txt']);
  });

  it('a job that stopped before changing anything says so: an empty report, not null', async () => {
    const service = makeService();
    service.register('upload', async () => {
      throw badRequest('A new top-level resource needs one top-level folder in the ZIP.');
    });
    await service.start();
    const failed = await waitStatus(service, (await service.submit(request())).ticket_number, 'failed');
    expect(failed.report).toEqual(emptyReport());
  });
});

describe('retry of failed files', () => {
  it('submits a new job of the same kind with the narrowed params, retry_of set; refuses what cannot be retried', async () => {
    const service = makeService();
    const failing = { ...emptyReport(), resources_created: ['D/a'], failed_files: [{ path: 'D/b', stage: 'write' as const, error: 'x' }] };
    const seen: Record<string, unknown>[] = [];
    service.register('transfer', async ({ params }) => {
      seen.push(params);
      return failing;
    }, (_job, params, failed) => ({ ...params, only: failed }));
    service.register('upload', async () => failing);
    await service.start();
    const first = await waitStatus(service, (await service.submit(request({ kind: 'transfer' }))).ticket_number, 'completed_with_errors');
    const retried = await service.retry(first.ticket_number, { destination: 'another-token-456' });
    expect(retried).toMatchObject({ kind: 'transfer', status: 'queued', retry_of: first.ticket_number });
    await waitStatus(service, retried.ticket_number, 'completed_with_errors');
    expect(seen[1]).toEqual({ n: 1, only: ['D/b'] });
    expect(service.mayAccess(retried.ticket_number, 'another-token-456')).toBe(true);

    const upload = await waitStatus(service, (await service.submit(request())).ticket_number, 'completed_with_errors');
    await expect(service.retry(upload.ticket_number, {})).rejects.toMatchObject({ status: 405 });
    service.register('verify', () => new Promise(() => undefined));
    const running = await service.submit(request({ kind: 'verify' }));
    await expect(service.retry(running.ticket_number, {})).rejects.toMatchObject({ status: 409 });
  });
});
