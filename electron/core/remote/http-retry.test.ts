import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { RemoteClient } from './http.js';
import { withRetryNotices } from './retry-notice.js';

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
    const response = await withRetryNotices(
      (note) => notes.push(note),
      () =>
        client(baseUrl).request('file.bin', {
          method: 'PUT',
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
    await withRetryNotices(
      (note) => notes.push(note),
      () => client(baseUrl).request('file.bin', { method: 'PUT', body: () => (opens++, Readable.from([payload])) }),
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
    expect(await withRetryNotices((note) => notes.push(note), () => api.json('thing'))).toEqual({ ok: true });
    expect(notes).toEqual(['Loopback is limiting the request rate (HTTP 429); retrying in 1 s (attempt 2 of 5).', null]);
    notes.length = 0;
    await withRetryNotices((note) => notes.push(note), () => api.json('thing'));
    expect(notes).toEqual([]);
  });

  it('sends a bare stream once: a reset is the error, in a sentence, with no retry announced', async () => {
    const baseUrl = await serve((request) => void request.socket.resetAndDestroy());
    const notes: (string | null)[] = [];
    const sent = withRetryNotices(
      (note) => notes.push(note),
      () => client(baseUrl).request('file.bin', { method: 'PUT', headers: { 'x-reset-early': '1' }, body: Readable.from([payload]) }),
    );
    await expect(sent).rejects.toThrow(/Loopback could not be reached/);
    expect(notes).toEqual([]);
  });
});
