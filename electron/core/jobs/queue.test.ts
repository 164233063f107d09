// The queue a person drives: pause and resume, order, limits per target and in all, clear
// finished. Real job service, real files on disk; executors a test releases by hand.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StoppedWithReport } from './outcome.js';
import { createJobService, isShutdownAbort } from './service.js';
import { waitFor, waitStatus } from './test-support/wait.js';
import { emptyReport, type JobExecutionContext, type JobService, type SubmitJob } from './types.js';

let dir: string;
const services: JobService[] = [];

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-queue-'));
});

afterEach(async () => {
  for (const service of services.splice(0)) await service.close();
  await rm(dir, { recursive: true, force: true });
});

function makeService(concurrency = 1): JobService {
  const service = createJobService({ dir, concurrency, retentionMs: 3_600_000, accessKey: 'k'.repeat(64), closeTimeoutMs: 2000 });
  services.push(service);
  return service;
}

const request = (target = 'memory', source?: string): SubmitJob => ({
  kind: 'transfer',
  target,
  resource_id: null,
  source: source ? { target: source, resource_id: 'r' } : null,
  params: {},
  tokens: {},
});



/** An executor that runs until released (or its signal aborts), recording each run. */
function heldExecutor() {
  const runs: JobExecutionContext[] = [];
  const releases = new Map<string, () => void>();
  const executor = (ctx: JobExecutionContext) =>
    new Promise<ReturnType<typeof emptyReport>>((resolve, reject) => {
      runs.push(ctx);
      releases.set(ctx.job.ticket_number, () => resolve({ ...emptyReport(), resources_created: [`${ctx.job.ticket_number}:${ctx.resumed ? 'resumed' : 'first'}`] }));
      ctx.signal.addEventListener('abort', () => reject(new StoppedWithReport(ctx.signal.reason, { ...emptyReport(), resources_created: ['half.txt'] })), { once: true });
    });
  const release = (ticket: string) => releases.get(ticket)!();
  return { runs, executor, release, ran: (ticket: string) => runs.filter((ctx) => ctx.job.ticket_number === ticket) };
}

/** A started service of `concurrency` whose transfer jobs run until released. */
async function startHeld(concurrency: number) {
  const service = makeService(concurrency);
  const held = heldExecutor();
  service.register('transfer', held.executor);
  await service.start();
  return { service, held };
}

describe('job queue', () => {
  it('pauses a running job, keeps what it did for the resumed run, and resumes it first', async () => {
    const { service, held } = await startHeld(1);
    const a = await service.submit(request());
    const b = await service.submit(request());
    await waitFor(() => held.ran(a.ticket_number).length === 1);
    const shutdownLike: boolean[] = [];
    held.runs[0]!.signal.addEventListener('abort', () => shutdownLike.push(isShutdownAbort(held.runs[0]!.signal)));

    const paused = await service.pause(a.ticket_number);
    expect(paused.status).toBe('paused');
    expect(paused.finished).toBeNull();
    expect(shutdownLike).toEqual([true]); // executors keep their spool and journals as on a stop
    expect((JSON.parse(await readFile(path.join(dir, `${a.ticket_number}.json`), 'utf8')) as { job: { status: string } }).job.status).toBe('paused');

    // the room it left goes to the next job
    await waitFor(() => held.ran(b.ticket_number).length === 1);
    expect(service.queueState().waiting).toEqual([]);
    held.release(b.ticket_number);
    await waitStatus(service, b.ticket_number, 'succeeded');

    const resumed = await service.resume(a.ticket_number);
    expect(['queued', 'running']).toContain(resumed.status);
    await waitFor(() => held.ran(a.ticket_number).length === 2);
    expect(held.ran(a.ticket_number)[1]!.resumed).toBe(true);
    held.release(a.ticket_number);
    const done = await waitStatus(service, a.ticket_number, 'succeeded');
    expect(done.report?.resources_created).toEqual([`${a.ticket_number}:resumed`]);
  });

  it('a paused job cancelled ends cancelled with what it had changed, and survives a restart paused', async () => {
    const { service: first, held: held } = await startHeld(1);
    const job = await first.submit(request());
    await waitFor(() => held.runs.length === 1);
    await first.pause(job.ticket_number);
    await first.close();

    const { service: second, held: again } = await startHeld(1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(second.get(job.ticket_number)?.status).toBe('paused');
    expect(again.runs).toHaveLength(0); // paused stays paused across a restart
    const cancelled = await second.cancel(job.ticket_number);
    expect(cancelled.status).toBe('cancelled');
    expect(cancelled.report?.resources_created).toEqual(['half.txt']);
  });

  it('a waiting job paused leaves the queue; pausing or resuming a finished job is refused', async () => {
    const { service, held } = await startHeld(1);
    const a = await service.submit(request());
    const b = await service.submit(request());
    await waitFor(() => held.runs.length === 1);
    expect((await service.pause(b.ticket_number)).status).toBe('paused');
    expect(service.queueState().waiting).toEqual([]);
    held.release(a.ticket_number);
    await waitStatus(service, a.ticket_number, 'succeeded');
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(held.ran(b.ticket_number)).toHaveLength(0);
    await expect(service.pause(a.ticket_number)).rejects.toMatchObject({ status: 409 });
    await expect(service.resume(a.ticket_number)).rejects.toMatchObject({ status: 409 });
    await service.resume(b.ticket_number);
    await waitFor(() => held.ran(b.ticket_number).length === 1);
    expect(held.ran(b.ticket_number)[0]!.resumed).toBe(false); // it never ran: nothing to resume
  });

  it('moves waiting jobs, and runs them in the new order', async () => {
    const { service, held } = await startHeld(1);
    const running = await service.submit(request());
    const [a, b, c] = [await service.submit(request()), await service.submit(request()), await service.submit(request())];
    await waitFor(() => held.runs.length === 1);
    expect(service.queueState().waiting).toEqual([a.ticket_number, b.ticket_number, c.ticket_number]);
    expect((await service.move(c.ticket_number, 'first')).waiting).toEqual([c.ticket_number, a.ticket_number, b.ticket_number]);
    expect((await service.move(a.ticket_number, 'down')).waiting).toEqual([c.ticket_number, b.ticket_number, a.ticket_number]);
    expect((await service.move(a.ticket_number, 'down')).waiting).toEqual([c.ticket_number, b.ticket_number, a.ticket_number]);
    expect((await service.move(b.ticket_number, 'up')).waiting).toEqual([b.ticket_number, c.ticket_number, a.ticket_number]);
    await expect(service.move(running.ticket_number, 'last')).rejects.toMatchObject({ status: 409 });

    for (const expected of [running, b, c, a]) {
      await waitFor(() => held.ran(expected.ticket_number).length === 1);
      held.release(expected.ticket_number);
    }
    expect(held.runs.map((ctx) => ctx.job.ticket_number)).toEqual([running, b, c, a].map((job) => job.ticket_number));
  });

  it('keeps to a per-target limit while other targets run, and a raised limit starts what waits', async () => {
    const { service, held } = await startHeld(3);
    await service.configureQueue({ per_target: { webdav: 1 } });
    const first = await service.submit(request('webdav', 'local'));
    const second = await service.submit(request('osf', 'webdav')); // touches webdav as its source
    const other = await service.submit(request('osf', 'local'));
    await waitFor(() => held.ran(other.ticket_number).length === 1);
    expect(held.ran(first.ticket_number)).toHaveLength(1);
    expect(held.ran(second.ticket_number)).toHaveLength(0);
    expect(service.queueState().waiting).toEqual([second.ticket_number]);
    await service.configureQueue({ per_target: { webdav: 2 } });
    await waitFor(() => held.ran(second.ticket_number).length === 1);
  });

  it('a lower concurrency lets running jobs finish and starts no more; settings are saved', async () => {
    const { service, held } = await startHeld(2);
    const jobs = [await service.submit(request()), await service.submit(request()), await service.submit(request())];
    await waitFor(() => held.runs.length === 2);
    await service.configureQueue({ concurrency: 1, bandwidth_limit: 1_048_576 });
    held.release(jobs[0]!.ticket_number);
    await waitStatus(service, jobs[0]!.ticket_number, 'succeeded');
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(held.runs).toHaveLength(2); // one still running, so the third waits
    held.release(jobs[1]!.ticket_number);
    await waitFor(() => held.runs.length === 3);
    expect(held.runs[2]!.bandwidth.limit).toBe(1_048_576);
    await service.close();

    const reopened = makeService(4);
    reopened.register('transfer', held.executor);
    await reopened.start();
    expect(reopened.queueState().settings).toEqual({ concurrency: 1, per_target: {}, bandwidth_limit: 1_048_576 });
  });

  it('refuses settings a person could not mean, with a sentence, and changes nothing', async () => {
    const service = makeService(2);
    await service.start();
    await expect(service.configureQueue({ concurrency: 0 })).rejects.toThrow(/from 1 to 16/);
    await expect(service.configureQueue({ bandwidth_limit: 10 })).rejects.toThrow(/at least 1024/);
    await expect(service.configureQueue({ per_target: { osf: 2.5 } })).rejects.toThrow(/whole number/);
    expect(service.queueState().settings).toEqual({ concurrency: 2, per_target: {}, bandwidth_limit: null });
  });

  it('clears finished jobs and their files, and nothing else', async () => {
    const { service, held } = await startHeld(1);
    const done = await service.submit(request());
    const running = await service.submit(request());
    await waitFor(() => held.runs.length === 1);
    held.release(done.ticket_number);
    await waitStatus(service, done.ticket_number, 'succeeded');
    await waitFor(() => held.runs.length === 2);
    expect(await service.clearFinished()).toBe(1);
    expect(service.get(done.ticket_number)).toBeUndefined();
    expect(service.get(running.ticket_number)?.status).toBe('running');
    await expect(readFile(path.join(dir, `${done.ticket_number}.json`))).rejects.toThrow();
  });
});
