// Jobs over real HTTP: who may see a job, the list, cancel, and the Server-Sent Events
// stream. A tiny in-file remote-style target (its own tokens) whose writes wait, so a
// job can be watched while it runs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Acknowledgement, Job } from '../../shared/api.js';
import { FerryError } from '../../electron/core/errors.js';
import { fullActions, type Entry, type Target } from '../../electron/core/target.js';
import { LocalTarget } from '../../electron/core/targets/local/index.js';
import { expectApiError, run, startFerry, uploadForm, waitForJob, writeTree, type Ferry } from './harness.js';

/** Accepts tokens starting with "tok-"; a write holds until released or cancelled. */
function vaultTarget(state: VaultState): Target {
  const root = { kind: 'container' as const, kind_name: 'folder' as const, id: 'vault', container: null, title: 'Vault' };
  return {
    info: { name: 'vault', readable_name: 'Vault', supported_actions: fullActions(true), supported_hash_algorithms: ['md5'], credential: 'remote' },
    async *list(ctx) {
      if (!ctx.token.startsWith('tok-')) throw new FerryError(401, 'unauthorized', 'The Vault token is invalid or expired.');
      yield root;
    },
    async detail(ctx, id) {
      if (!ctx.token.startsWith('tok-')) throw new FerryError(401, 'unauthorized', 'The Vault token is invalid or expired.');
      if (id !== 'vault') throw new FerryError(404, 'resource_not_found', 'No such vault.');
      return { ...root, date_created: null, date_modified: null, hashes: {}, extra: {} };
    },
    read: async () => {
      throw new Error('not used');
    },
    async write(ctx, _container, entries: AsyncIterable<Entry>, options) {
      const created: string[] = [];
      for await (const entry of entries) {
        if (entry.kind === 'file') for await (const _chunk of await entry.open());
        created.push(entry.path);
      }
      await new Promise<void>((resolve, reject) => {
        state.release = () => {
          state.release = null;
          resolve();
        };
        options.signal.addEventListener('abort', () => {
          state.release = null;
          reject(options.signal.reason ?? new Error('aborted'));
        });
      });
      state.written.push(...created);
      return { created, updated: [], ignored: [], fileErrors: [] };
    },
  };
}

interface VaultState {
  release: (() => void) | null;
  written: string[];
}

let ferry: Ferry;
const vault: VaultState = { release: null, written: [] };

/** Lets the one waiting write finish (waits for it to be waiting). */
async function releaseVault(): Promise<void> {
  for (let i = 0; i < 500 && !vault.release; i++) await new Promise((resolve) => setTimeout(resolve, 20));
  if (!vault.release) throw new Error('no write is waiting');
  vault.release();
}
let zip: Buffer;
beforeAll(async () => {
  ferry = await startFerry({ targets: (config) => [new LocalTarget({ root: config.workspace }), vaultTarget(vault)] });
  await writeTree(ferry.root, { 'src/a.txt': 'a\n' });
  await run('zip', ['-q', '-r', '../job.zip', '.'], { cwd: `${ferry.root}/src` });
  zip = await import('node:fs/promises').then((fs) => fs.readFile(`${ferry.root}/job.zip`));
});
afterAll(async () => ferry?.close());

async function startJob(token: string): Promise<string> {
  const response = await ferry.fetch('/api_v1/targets/vault/resources/vault/', {
    method: 'POST',
    body: uploadForm(zip),
    // no provenance record: its second write would wait for a second release (docs/provenance.md)
    headers: { 'service-destination-token': token, 'duplicate-file-action': 'ignore', 'ferry-provenance': 'off' },
  });
  expect(response.status, await response.clone().text()).toBe(202);
  return ((await response.json()) as Acknowledgement).ticket_number;
}

async function getJob(ticket: string, headers: Record<string, string>): Promise<Response> {
  return ferry.fetch(`/api_v1/jobs/${ticket}/`, { headers });
}

async function untilStatus(ticket: string, status: Job['status']): Promise<Job> {
  for (let i = 0; i < 500; i++) {
    const job = (await (await getJob(ticket, ferry.bearer())).json()) as Job;
    if (job.status === status) return job;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`job never ${status}`);
}

describe('GET /api_v1/jobs/<ticket>/', () => {
  it('shows the Job, field for field, to the token that started it and to the access key only', async () => {
    const ticket = await startJob('tok-alice');
    const running = await untilStatus(ticket, 'running');
    for (const headers of [{ 'service-destination-token': 'tok-alice' }, { 'service-source-token': 'tok-alice' }, ferry.bearer()]) {
      const response = await getJob(ticket, headers);
      expect(response.status).toBe(200);
      const job = (await response.json()) as Job;
      expect(job.ticket_number).toBe(ticket);
    }
    expect(running).toMatchObject({ ticket_number: ticket, kind: 'upload', status: 'running', target: 'vault', resource_id: 'vault', finished: null, report: null, error: null });
    for (const key of ['ticket_number', 'kind', 'status', 'target', 'resource_id', 'created', 'started', 'finished', 'progress', 'report', 'error']) {
      expect(running, key).toHaveProperty(key);
    }
    expect(Object.keys(running.progress).sort()).toEqual(['bytes_done', 'bytes_total', 'files_done', 'files_total']);
    expect(running.created).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);

    await expectApiError(await getJob(ticket, {}), 401, 'unauthorized');
    await expectApiError(await getJob(ticket, { 'service-destination-token': 'tok-mallory' }), 403, 'forbidden');
    await expectApiError(await getJob(ticket, { authorization: 'Bearer wrong' }), 403, 'forbidden');

    await releaseVault();
    const done = await waitForJob(ferry, ticket);
    expect(done.status).toBe('succeeded');
    expect(done.report).toMatchObject({ resources_created: ['a.txt'], resources_updated: [], resources_ignored: [], failed_fixity: [] });
    expect(done.finished).not.toBeNull();
  });

  it('404 ticket_not_found for an unknown ticket (GET and DELETE)', async () => {
    await expectApiError(await getJob('00000000-0000-4000-8000-000000000000', ferry.bearer()), 404, 'ticket_not_found');
    await expectApiError(await ferry.fetch('/api_v1/jobs/nope', { method: 'DELETE', headers: ferry.bearer() }), 404, 'ticket_not_found');
  });
});

describe('DELETE /api_v1/jobs/<ticket>/', () => {
  it('cancels a running job (200 Job), then 409 once finished', async () => {
    const ticket = await startJob('tok-bob');
    await untilStatus(ticket, 'running');
    await expectApiError(await ferry.fetch(`/api_v1/jobs/${ticket}/`, { method: 'DELETE', headers: { 'service-destination-token': 'tok-eve' } }), 403, 'forbidden');
    const response = await ferry.fetch(`/api_v1/jobs/${ticket}`, { method: 'DELETE', headers: { 'service-destination-token': 'tok-bob' } });
    expect(response.status).toBe(200);
    const job = (await response.json()) as Job;
    expect(job.ticket_number).toBe(ticket);
    const final = await waitForJob(ferry, ticket);
    expect(final.status).toBe('cancelled');
    await expectApiError(await ferry.fetch(`/api_v1/jobs/${ticket}/`, { method: 'DELETE', headers: ferry.bearer() }), 409, 'conflict');
  });
});

describe('GET /api_v1/jobs/ and /api_v1/jobs/events/ (access key)', () => {
  it('lists jobs newest first, for the access key only', async () => {
    await expectApiError(await ferry.fetch('/api_v1/jobs/'), 401, 'unauthorized');
    await expectApiError(await ferry.fetch('/api_v1/jobs/', { headers: { 'service-destination-token': 'tok-alice' } }), 401, 'unauthorized');
    const jobs = (await (await ferry.fetch('/api_v1/jobs', { headers: ferry.bearer() })).json()) as Job[];
    expect(jobs.length).toBeGreaterThanOrEqual(2);
    const created = jobs.map((job) => job.created);
    expect([...created].sort().reverse()).toEqual(created);
  });

  it('streams job changes as Server-Sent Events', async () => {
    await expectApiError(await ferry.fetch('/api_v1/jobs/events/'), 401, 'unauthorized');
    const controller = new AbortController();
    const response = await ferry.fetch('/api_v1/jobs/events/', { headers: ferry.bearer(), signal: controller.signal });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    const events: Job[] = [];
    const ticket = await startJob('tok-carol');
    const seen = async (predicate: (job: Job) => boolean) => {
      const deadline = Date.now() + 10_000;
      while (!events.some(predicate)) {
        if (Date.now() > deadline) throw new Error(`no such event in ${text}`);
        const { value, done } = await reader.read();
        if (done) throw new Error('stream ended');
        text += value;
        for (const block of text.split('\n\n').slice(events.length ? 0 : 0)) {
          const match = /^event: job\ndata: (.+)$/m.exec(block);
          if (match) {
            const job = JSON.parse(match[1]!) as Job;
            if (!events.some((seenJob) => JSON.stringify(seenJob) === JSON.stringify(job))) events.push(job);
          }
        }
      }
    };
    await seen((job) => job.ticket_number === ticket && job.status === 'running');
    await releaseVault();
    await seen((job) => job.ticket_number === ticket && job.status === 'succeeded');
    controller.abort();
    // the subscription goes away with the connection
    await new Promise((resolve) => setTimeout(resolve, 100));
  });
});

describe('the queue: pause, resume, order and settings', () => {
  const json = (body: unknown) => ({ body: JSON.stringify(body), headers: { ...ferry.bearer(), 'content-type': 'application/json' } });

  it('pauses a running job for the token that started it, resumes it as a resumed run, and it completes', async () => {
    const ticket = await startJob('tok-dave');
    await untilStatus(ticket, 'running');
    await expectApiError(await ferry.fetch(`/api_v1/jobs/${ticket}/pause/`, { method: 'POST', headers: { 'service-destination-token': 'tok-eve' } }), 403, 'forbidden');
    const pause = await ferry.fetch(`/api_v1/jobs/${ticket}/pause/`, { method: 'POST', headers: { 'service-destination-token': 'tok-dave' } });
    expect(pause.status).toBe(200);
    expect(((await pause.json()) as Job).status).toBe('paused');
    const resume = await ferry.fetch(`/api_v1/jobs/${ticket}/resume/`, { method: 'POST', headers: { 'service-destination-token': 'tok-dave' } });
    expect(resume.status).toBe(202);
    expect(((await resume.json()) as { ticket_number: string }).ticket_number).toBe(ticket); // the paused job itself goes on
    await untilStatus(ticket, 'running');
    await releaseVault();
    expect((await waitForJob(ferry, ticket)).status).toBe('succeeded');
    await expectApiError(await ferry.fetch(`/api_v1/jobs/${ticket}/pause/`, { method: 'POST', headers: ferry.bearer() }), 409, 'conflict');
  });

  it('reads and changes the queue settings with the access key only, refusing bad values with a sentence', async () => {
    await expectApiError(await ferry.fetch('/api_v1/queue/'), 401, 'unauthorized');
    const before = await (await ferry.fetch('/api_v1/queue/', { headers: ferry.bearer() })).json();
    expect(before).toMatchObject({ settings: { per_target: {}, bandwidth_limit: null }, waiting: [] });
    const bad = await ferry.fetch('/api_v1/queue/', { method: 'PUT', ...json({ concurrency: 99 }) });
    await expectApiError(bad, 400, 'bad_request');
    const changed = await ferry.fetch('/api_v1/queue/', { method: 'PUT', ...json({ concurrency: 1, per_target: { vault: 1 }, bandwidth_limit: 1_048_576 }) });
    expect(changed.status).toBe(200);
    expect(await changed.json()).toEqual({ settings: { concurrency: 1, per_target: { vault: 1 }, bandwidth_limit: 1_048_576 }, waiting: [] });

    // with one job at a time, a second waits, and can be moved and cleared around
    const first = await startJob('tok-erin');
    await untilStatus(first, 'running');
    const second = await startJob('tok-erin');
    const third = await startJob('tok-erin');
    const moved = await ferry.fetch(`/api_v1/jobs/${third}/move/`, { method: 'POST', ...json({ to: 'first' }) });
    expect(moved.status).toBe(200);
    expect(((await moved.json()) as { waiting: string[] }).waiting).toEqual([third, second]);
    await expectApiError(await ferry.fetch(`/api_v1/jobs/${first}/move/`, { method: 'POST', ...json({ to: 'last' }) }), 409, 'conflict');
    await expectApiError(await ferry.fetch(`/api_v1/jobs/${third}/move/`, { method: 'POST', ...json({ to: 'sideways' }) }), 400, 'bad_request');
    for (let i = 0; i < 3; i++) await releaseVault();
    for (const ticket of [first, second, third]) expect((await waitForJob(ferry, ticket)).status).toBe('succeeded');

    const cleared = await ferry.fetch('/api_v1/jobs/', { method: 'DELETE', headers: ferry.bearer() });
    expect(cleared.status).toBe(200);
    expect(((await cleared.json()) as { removed: number }).removed).toBeGreaterThanOrEqual(3);
    await expectApiError(await getJob(first, ferry.bearer()), 404, 'ticket_not_found');
    await ferry.fetch('/api_v1/queue/', { method: 'PUT', ...json({ concurrency: 2, per_target: {}, bandwidth_limit: null }) });
  });
});
