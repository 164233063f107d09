import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Readable } from 'node:stream';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it, vi } from 'vitest';

// A request without a body and its answer, against a real loopback server, with the fast path
// `direct-requests` (node:http, the answer's body a Node stream: node-answer.ts) and without it
// (ky and fetch): the same bytes, the same sentences for a stalled or broken body, the same
// retries, and a slow reader never taken for a stalled server.

let server: Server | null = null;
/** what the server saw of each request */
let seen: { method: string; url: string; headers: IncomingMessage['headers'] }[] = [];

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = null;
  seen = [];
  vi.unstubAllEnvs();
  vi.resetModules();
});

async function serve(handler: (request: IncomingMessage, response: ServerResponse) => void): Promise<string> {
  server = createServer((request, response) => {
    seen.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers });
    handler(request, response);
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server!.address() as AddressInfo).port}/`;
}

/** RemoteClient as it is with FERRY_FAST_PATHS set to `setting` (read once per process) */
async function clientWith(setting: string, baseUrl: string, timeoutMs = 300) {
  vi.resetModules();
  vi.stubEnv('FERRY_FAST_PATHS', setting);
  const [{ RemoteClient }, { bodyStream }] = await Promise.all([import('./http.js'), import('./node-answer.js')]);
  return { client: new RemoteClient({ baseUrl, serviceName: 'Loopback', ratePerSecond: null, retries: 2, timeoutMs }), bodyStream };
}

async function readAll(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const WAYS = [
  ['over node:http', ''],
  ['through ky and fetch', '-direct-requests'],
] as const;

describe.each(WAYS)('a request without a body, %s', (_way, setting) => {
  it('downloads every byte of a large answer, as a GET with no body', async () => {
    const bytes = randomBytes(3 * 1024 * 1024 + 17);
    const baseUrl = await serve((_request, response) => response.writeHead(200, { 'content-length': String(bytes.length) }).end(bytes));
    const { client } = await clientWith(setting, baseUrl);
    const { response, body } = await client.stream('data/file.bin', { token: 'secret-token-1234' });
    expect(response.status).toBe(200);
    expect(sha256(await readAll(body))).toBe(sha256(bytes));
    expect(seen[0]).toMatchObject({ method: 'GET', url: '/data/file.bin' });
    expect(seen[0]!.headers.authorization).toBe('Bearer secret-token-1234');
    expect(seen[0]!.headers['transfer-encoding']).toBeUndefined();
    expect(seen[0]!.headers['user-agent']).toBe('node');
  });

  it('reads a JSON answer, and follows a redirect to it', async () => {
    const baseUrl = await serve((request, response) => {
      if (request.url === '/old') response.writeHead(302, { location: '/new' }).end('moved');
      else response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ files: ['a', 'b'] }));
    });
    const { client } = await clientWith(setting, baseUrl);
    expect(await client.json('old')).toEqual({ files: ['a', 'b'] });
    expect(seen.map((request) => request.url)).toEqual(['/old', '/new']);
  });

  it('asks for compression as fetch does and hands on the bytes inflated (gzip to a download, br to JSON)', async () => {
    const text = 'a line of a listing\n'.repeat(2000);
    const baseUrl = await serve((request, response) => {
      if (request.url === '/file') response.writeHead(200, { 'content-encoding': 'gzip' }).end(gzipSync(text));
      else response.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'br' }).end(brotliCompressSync(JSON.stringify({ text })));
    });
    const { client } = await clientWith(setting, baseUrl);
    expect((await readAll((await client.stream('file')).body)).toString()).toBe(text);
    expect(await client.json('listing')).toEqual({ text });
    expect(seen[0]!.headers['accept-encoding']).toBe('gzip, deflate');
    expect(seen[0]!.headers.accept).toBe('*/*');
  });

  it("reads a JSON answer that starts with a byte order mark, and one in several chunks, as fetch's json() does", async () => {
    const baseUrl = await serve((request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      if (request.url === '/marked') return response.end(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"name":"Ålesund"}')]));
      // a multi-byte character split across two chunks
      const bytes = Buffer.from('{"name":"Ålesund","more":"ü"}');
      response.write(bytes.subarray(0, 10), () => setTimeout(() => response.end(bytes.subarray(10)), 20));
    });
    const { client } = await clientWith(setting, baseUrl);
    expect(await client.json('marked')).toEqual({ name: 'Ålesund' });
    expect(await client.json('chunked')).toEqual({ name: 'Ålesund', more: 'ü' });
  });

  it('fails with a 502 sentence when the connection breaks part-way through a JSON answer', async () => {
    const baseUrl = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': '100000' });
      response.write('{"files": [', () => setTimeout(() => response.socket?.destroy(), 20));
    });
    const { client } = await clientWith(setting, baseUrl);
    await expect(client.json('listing')).rejects.toMatchObject({ status: 502, message: expect.stringMatching(/^Loopback broke off the connection part-way through an answer/) });
  });

  it('retries a GET the server answered 503 with Retry-After, and hands on the second answer', async () => {
    let calls = 0;
    const baseUrl = await serve((_request, response) => {
      calls += 1;
      if (calls === 1) response.writeHead(503, { 'retry-after': '0' }).end('busy');
      else response.writeHead(200).end('second');
    });
    const { client } = await clientWith(setting, baseUrl);
    const { body } = await client.stream('file');
    expect((await readAll(body)).toString()).toBe('second');
    expect(calls).toBe(2);
  });

  it('fails with a 504 sentence when the server stops sending part-way through the body', async () => {
    const baseUrl = await serve((_request, response) => {
      response.writeHead(200, { 'content-length': '100000' });
      response.write(Buffer.alloc(1000, 1)); // and nothing more
    });
    const { client } = await clientWith(setting, baseUrl);
    const { body } = await client.stream('file');
    await expect(readAll(body)).rejects.toMatchObject({ status: 504, message: 'Loopback stopped sending data part-way through an answer; try again later.' });
  });

  it('fails with a 502 sentence when the connection breaks part-way through the body', async () => {
    const baseUrl = await serve((_request, response) => {
      response.writeHead(200, { 'content-length': '100000' });
      response.write(Buffer.alloc(1000, 1), () => setTimeout(() => response.socket?.destroy(), 20));
    });
    const { client } = await clientWith(setting, baseUrl);
    const { body } = await client.stream('file');
    await expect(readAll(body)).rejects.toMatchObject({ status: 502, message: expect.stringMatching(/^Loopback broke off the connection part-way through an answer \(connection reset\)/) });
  });

  it('never takes a slow reader for a stalled server', async () => {
    const bytes = randomBytes(2 * 1024 * 1024);
    const baseUrl = await serve((_request, response) => response.writeHead(200, { 'content-length': String(bytes.length) }).end(bytes));
    const { client } = await clientWith(setting, baseUrl, 200);
    const { body } = await client.stream('file');
    const chunks: Buffer[] = [];
    for await (const chunk of body) {
      if (chunks.length === 0) await wait(600); // three times the idle limit, with the server's bytes waiting
      chunks.push(chunk as Buffer);
    }
    expect(sha256(Buffer.concat(chunks))).toBe(sha256(bytes));
  });

  it('ends a download cancelled part-way as cancelled, not as a failure of the server', async () => {
    const baseUrl = await serve((_request, response) => {
      response.writeHead(200, { 'content-length': '100000' });
      response.write(Buffer.alloc(1000, 1));
    });
    const { client } = await clientWith(setting, baseUrl, 5_000);
    const controller = new AbortController();
    const { body } = await client.stream('file', { signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    await expect(readAll(body)).rejects.toMatchObject({ name: 'CancelledError' });
  });
});

describe('an answer over node:http', () => {
  it('gives its body out one way only: the Node stream, or the web stream, whichever is asked first', async () => {
    const baseUrl = await serve((_request, response) => response.writeHead(200).end('the bytes'));
    const { client, bodyStream } = await clientWith('', baseUrl);
    const first = await client.request('a');
    expect((await readAll(bodyStream(first))).toString()).toBe('the bytes');
    await expect(first.text()).rejects.toThrow(/already taken/);
    const second = await client.request('b');
    expect(await second.text()).toBe('the bytes');
    expect((await readAll(bodyStream(second))).length).toBe(0);
  });

  it("reads its held body with each of a Response's own methods, and says when it was used", async () => {
    const baseUrl = await serve((_request, response) => response.writeHead(200, { 'content-type': 'application/json' }).end('{"a":[1,2]}'));
    const { client } = await clientWith('', baseUrl);
    const read = async (how: (response: Response) => Promise<unknown>) => {
      const response = await client.request('x');
      expect(response).toBeInstanceOf(Response);
      expect(response.bodyUsed).toBe(false);
      const value = await how(response);
      expect(response.bodyUsed).toBe(true);
      return value;
    };
    expect(await read((r) => r.json())).toEqual({ a: [1, 2] });
    expect(await read((r) => r.text())).toBe('{"a":[1,2]}');
    expect(Buffer.from((await read((r) => r.arrayBuffer())) as ArrayBuffer).toString()).toBe('{"a":[1,2]}');
    expect(await ((await read((r) => r.blob())) as Blob).text()).toBe('{"a":[1,2]}');
    expect(Buffer.from((await read(async (r) => (await r.body!.getReader().read()).value)) as Uint8Array).toString()).toBe('{"a":[1,2]}');
    const response = await client.request('y');
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(() => response.clone()).toThrow(/cannot be cloned/);
    await response.body?.cancel();
  });
});
