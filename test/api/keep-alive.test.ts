// Issue #17.8: a client polling a job over Node's fetch (undici's keep-alive pool) must never
// see its pooled connection closed under it ("other side closed"): not during a long transfer
// or a long upload, and not when the client was busy as its keep-alive time ran out. A client
// may reuse a connection until the Keep-Alive timeout the server told it (undici stops 1-2 s
// before, on a coarse timer, later when its event loop is busy); the server must keep the
// connection open well past that.
import net from 'node:net';
import { open, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Acknowledgement, Job, ResourceSummary } from '../../shared/api.js';
import { isFinishedStatus } from '../../shared/api.js';
import { LocalTarget } from '../../electron/core/targets/local/index.js';
import { findByPath, renamed, run, startFerry, type Ferry } from './harness.js';

const BIG = 192 * 1024 * 1024;
let ferry: Ferry;
let otherRoot: string;

beforeAll(async () => {
  ferry = await startFerry({
    targets: (config) => {
      otherRoot = path.join(path.dirname(config.workspace), 'other');
      return [new LocalTarget({ root: config.workspace }), renamed(new LocalTarget({ root: otherRoot }), 'other', 'Other folder')];
    },
  });
  await mkdir(path.join(ferry.workspace, 'Big'), { recursive: true });
  await mkdir(otherRoot, { recursive: true });
  await writeSparse(path.join(ferry.workspace, 'Big/large.bin'), BIG);
});
afterAll(async () => ferry?.close());

async function writeSparse(file: string, size: number): Promise<void> {
  const handle = await open(file, 'w');
  // a few non-zero bytes so the hash work is real; the rest reads as zeros
  await handle.write(Buffer.from('ferry keep-alive'), 0, 16, size - 16);
  await handle.close();
}

/** Polls `ticket` with the shared fetch pool until it ends; returns every request error seen. */
async function pollUntilFinished(ticket: string): Promise<{ job: Job; errors: string[]; polls: number }> {
  const errors: string[] = [];
  let polls = 0;
  for (;;) {
    try {
      polls++;
      const response = await fetch(new URL(`/api_v1/jobs/${ticket}/`, ferry.url), { headers: ferry.bearer() });
      const job = (await response.json()) as Job;
      if (isFinishedStatus(job.status)) return { job, errors, polls };
    } catch (error) {
      errors.push(String((error as Error & { cause?: Error }).cause?.message ?? error));
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Two GETs on one connection, the second `gapMs` after the first answer; what the server said, and whether it answered the second. */
async function reuseAfter(url: string, gapMs: (advertisedSeconds: number) => number): Promise<{ advertised: number; second: string }> {
  const { hostname, port } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  socket.setEncoding('latin1');
  let received = '';
  let closed = false;
  socket.on('data', (chunk: string) => (received += chunk));
  socket.on('close', () => (closed = true));
  const request = `GET /api_v1/targets/ HTTP/1.1\r\nHost: ${hostname}:${port}\r\n\r\n`;
  const answered = async () => {
    for (let i = 0; i < 500 && !closed; i++) {
      const head = received.indexOf('\r\n\r\n');
      const length = /content-length: (\d+)/i.exec(received)?.[1];
      if (head >= 0 && length !== undefined && received.length >= head + 4 + Number(length)) return received;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return closed ? `closed by the server${received ? ` after ${JSON.stringify(received.slice(0, 40))}` : ''}` : received;
  };
  socket.write(request);
  const first = await answered();
  const advertised = Number(/keep-alive: timeout=(\d+)/i.exec(first)?.[1]);
  expect(advertised, first).toBeGreaterThan(0);
  received = '';
  await new Promise((resolve) => setTimeout(resolve, gapMs(advertised)));
  if (!closed) socket.write(request);
  const second = await answered();
  socket.destroy();
  return { advertised, second };
}

describe('the Keep-Alive timeout a client is told', () => {
  it('is well short of the time the server keeps an idle connection: a reuse 2 s past it is answered', async () => {
    // a short keep-alive, so the test does not wait for the 72 s default
    const short = await startFerry({ server: { keepAliveTimeoutMs: 6000 } });
    try {
      const { advertised, second } = await reuseAfter(short.url, (told) => told * 1000 + 2000);
      expect(second, `told timeout=${advertised}`).toMatch(/^HTTP\/1\.1 200 /);
      expect(advertised).toBeLessThanOrEqual(2);
    } finally {
      await short.close();
    }
  });
});

describe('a pooled keep-alive connection polling a job', () => {
  it('is never dropped during a long transfer', async () => {
    const list = (await (await fetch(new URL('/api_v1/targets/local/resources/', ferry.url), { headers: ferry.auth() })).json()) as ResourceSummary[];
    const big = findByPath(list, 'Big')!;
    const response = await fetch(new URL('/api_v1/targets/other/resources/', ferry.url), {
      method: 'POST',
      body: JSON.stringify({ source_target_name: 'local', source_resource_id: big.id }),
      headers: ferry.auth({ 'duplicate-file-action': 'update', 'content-type': 'application/json' }),
    });
    expect(response.status).toBe(202);
    const { ticket_number } = (await response.json()) as Acknowledgement;
    const { job, errors, polls } = await pollUntilFinished(ticket_number);
    expect(job.status, job.error ?? '').toBe('succeeded');
    expect(polls).toBeGreaterThan(5);
    expect(errors).toEqual([]);
  });

  it('is never dropped during a long upload', async () => {
    const zip = path.join(ferry.root, 'big.zip');
    await run('zip', ['-q', '-0', '-r', zip, 'Big'], { cwd: ferry.workspace });
    const form = new FormData();
    const { openAsBlob } = await import('node:fs');
    form.set('service-file', await openAsBlob(zip), 'big.zip');
    const response = await fetch(new URL('/api_v1/targets/other/resources/', ferry.url), {
      method: 'POST',
      headers: ferry.auth({ 'duplicate-file-action': 'update' }),
      body: form,
    });
    expect(response.status, await response.clone().text()).toBe(202);
    const { ticket_number } = (await response.json()) as Acknowledgement;
    const { job, errors } = await pollUntilFinished(ticket_number);
    expect(job.status, job.error ?? '').toBe('succeeded');
    expect(errors).toEqual([]);
  });
});
