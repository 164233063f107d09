import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { RemoteClient } from './http.js';
import { derivedSignal, withRetryNotices } from './retry-notice.js';

// Retries against a real loopback server: a streamed body given as a factory is opened afresh
// for each attempt, and each wait is told to the job in words, then cleared.

type Handler = (request: IncomingMessage, body: Buffer, response: ServerResponse, attempt: number) => void;

let server: Server | null = null;

afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = null;
});

async function serve(handler: Handler): Promise<string> {
  let attempt = 0;
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    const current = ++attempt;
    // the first attempt may be cut before its body is read: handle it at once
    if (current === 1 && request.headers['x-reset-early'] === '1') return handler(request, Buffer.alloc(0), response, current);
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => handler(request, Buffer.concat(chunks), response, current));
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server!.address() as AddressInfo).port}/`;
}

const client = (baseUrl: string) => new RemoteClient({ baseUrl, serviceName: 'Loopback', ratePerSecond: null, retries: 4, timeoutMs: 5000 });
const payload = Buffer.from('the bytes of one file, sent whole each time');

describe('RemoteClient retries', () => {
  it('reopens a streamed body when the connection is reset before any answer, and tells the job', async () => {
    const received: Buffer[] = [];
    const baseUrl = await serve((request, body, response, attempt) => {
      if (attempt === 1) return void request.socket.resetAndDestroy();
      received.push(body);
      response.writeHead(201).end();
    });
    let opens = 0;
    const notes: (string | null)[] = [];
    const { signal } = new AbortController();
    const response = await withRetryNotices(
      signal,
      (note) => notes.push(note),
      () =>
        client(baseUrl).request('file.bin', {
          method: 'PUT',
          signal,
          headers: { 'x-reset-early': '1' },
          body: () => (opens++, Readable.from([payload])),
        }),
    );
    expect(response.status).toBe(201);
    expect(opens).toBe(2);
    expect(Buffer.concat(received).equals(payload)).toBe(true);
    expect(notes).toHaveLength(2);
    expect(notes[0]).toMatch(/^Loopback is not answering \(the connection broke before an answer\); retrying in \d+ s \(attempt 2 of 5\)\.$/);
    expect(notes[1]).toBeNull();
  });

  it('waits what Retry-After says on a 503 to a streamed PUT, saying so, then sends the bytes again', async () => {
    const received: Buffer[] = [];
    const baseUrl = await serve((_request, body, response, attempt) => {
      if (attempt === 1) return void response.writeHead(503, { 'retry-after': '1' }).end();
      received.push(body);
      response.writeHead(201).end();
    });
    let opens = 0;
    const notes: (string | null)[] = [];
    const started = Date.now();
    const { signal } = new AbortController();
    await withRetryNotices(
      signal,
      (note) => notes.push(note),
      () => client(baseUrl).request('file.bin', { method: 'PUT', signal, body: () => (opens++, Readable.from([payload])) }),
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(opens).toBe(2);
    expect(Buffer.concat(received).equals(payload)).toBe(true);
    expect(notes).toEqual(['Loopback is not answering (HTTP 503); retrying in 1 s (attempt 2 of 5).', null]);
  });

  it('tells the job of a retried 429 to a plain request too, and nothing when none is needed', async () => {
    const baseUrl = await serve((_request, _body, response, attempt) => {
      if (attempt === 1) return void response.writeHead(429, { 'retry-after': '1' }).end();
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    const notes: (string | null)[] = [];
    const api = client(baseUrl);
    const job = new AbortController().signal;
    expect(await withRetryNotices(job, (note) => notes.push(note), () => api.json('thing', { signal: job }))).toEqual({ ok: true });
    expect(notes).toEqual(['Loopback is limiting the request rate (HTTP 429); retrying in 1 s (attempt 2 of 5).', null]);
    notes.length = 0;
    const next = new AbortController().signal;
    await withRetryNotices(next, (note) => notes.push(note), () => api.json('thing', { signal: next }));
    expect(notes).toEqual([]);
  });

  it('sends a request again at once on a new connection when a kept-alive one was closed under it, however many kept ones are', async () => {
    // a server that closes every connection at its second request, as Apache drops idle
    // kept-alive connections when its workers are busy: each kept connection is stale
    const seen = new Map<unknown, number>();
    let answered = 0;
    server = createServer((request, response) => {
      const count = (seen.get(request.socket) ?? 0) + 1;
      seen.set(request.socket, count);
      if (count > 1) return void request.socket.destroy();
      answered++;
      response.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const baseUrl = `http://127.0.0.1:${(server!.address() as AddressInfo).port}/`;
    // fewer retries than kept connections: retrying on them, every attempt would meet a closed one
    const api = new RemoteClient({ baseUrl, serviceName: 'Loopback', ratePerSecond: null, retries: 2, timeoutMs: 5000 });
    const { signal } = new AbortController();
    const warm = await Promise.all(Array.from({ length: 6 }, (_, i) => api.request(`warm-${i}`, { signal })));
    await Promise.all(warm.map((response) => response.text()));
    expect(answered).toBe(6);
    const notes: (string | null)[] = [];
    const response = await withRetryNotices(signal, (note) => notes.push(note), () => api.request('file.csv', { signal }));
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('ok');
    expect(answered).toBe(7);
    // sent again at once: no wait to tell the job of
    expect(notes).toEqual([]);
  });

  it('sends a bare stream once: a reset is the error, in a sentence, with no retry announced', async () => {
    const baseUrl = await serve((request) => void request.socket.resetAndDestroy());
    const notes: (string | null)[] = [];
    const { signal } = new AbortController();
    const sent = withRetryNotices(
      signal,
      (note) => notes.push(note),
      () => client(baseUrl).request('file.bin', { method: 'PUT', signal, headers: { 'x-reset-early': '1' }, body: Readable.from([payload]) }),
    );
    await expect(sent).rejects.toThrow(/Loopback could not be reached/);
    expect(notes).toEqual([]);
  });

  it('tells two jobs at once each of its own requests only, through a derived signal too, and a listing nobody', async () => {
    // one client, so one rate queue: a request may be sent from the other job's call stack
    const attempts = new Map<string, number>();
    const baseUrl = await serve((request, _body, response) => {
      const path = request.url!;
      const attempt = (attempts.get(path) ?? 0) + 1;
      attempts.set(path, attempt);
      if (attempt === 1 && path === '/a') return void response.writeHead(503, { 'retry-after': '1' }).end();
      if (attempt === 1 && path === '/b') return void response.writeHead(429, { 'retry-after': '1' }).end();
      if (attempt === 1 && path === '/listing') return void response.writeHead(502).end();
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ path }));
    });
    const api = new RemoteClient({ baseUrl, serviceName: 'Loopback', ratePerSecond: 4, retries: 4, timeoutMs: 5000 });
    const [a, b] = [new AbortController().signal, new AbortController().signal];
    const notesA: (string | null)[] = [];
    const notesB: (string | null)[] = [];
    const results = await Promise.all([
      withRetryNotices(a, (note) => notesA.push(note), () => api.json('a', { signal: a })),
      // job B's request stops on a deadline of its own as well, yet is still B's
      withRetryNotices(b, (note) => notesB.push(note), () => api.json('b', { signal: derivedSignal(b, AbortSignal.timeout(5000)) })),
      // a listing while both jobs run: its signal belongs to no job
      api.json('listing', { signal: new AbortController().signal }),
    ]);
    expect(results).toEqual([{ path: '/a' }, { path: '/b' }, { path: '/listing' }]);
    expect([...attempts.values()]).toEqual([2, 2, 2]);
    expect(notesA).toEqual(['Loopback is not answering (HTTP 503); retrying in 1 s (attempt 2 of 5).', null]);
    expect(notesB).toEqual(['Loopback is limiting the request rate (HTTP 429); retrying in 1 s (attempt 2 of 5).', null]);
  });
});
