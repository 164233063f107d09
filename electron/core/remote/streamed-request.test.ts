import { createHash, randomBytes } from 'node:crypto';
import { open, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { lendingReadStream, READ_BUFFER_BYTES, readBufferCounts } from '../read-buffers.js';
import { tempDirEach } from '../targets/local/test-helpers.js';
import { RemoteClient } from './http.js';

// A streamed upload sent over node:http (streamed-request.ts) against a real loopback server:
// the pauses that time out, an early refusal, a failing source, and lent chunks given back.

const where = tempDirEach('streamed-request');

let server: Server | null = null;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = null;
});

async function serve(handler: (request: IncomingMessage, response: ServerResponse) => void): Promise<string> {
  server = createServer(handler);
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server!.address() as AddressInfo).port}/`;
}

const client = (baseUrl: string) => new RemoteClient({ baseUrl, serviceName: 'Loopback', ratePerSecond: null, retries: 0, timeoutMs: 300 });
/** 64 MiB, far more than the socket buffers hold, produced as the network takes it */
const large = () => Readable.from((function* () { for (let i = 0; i < 1024; i++) yield Buffer.alloc(64 * 1024, i); })());

describe('a streamed upload over node:http', () => {
  it('sends the bytes and hands back the answer as a Response', async () => {
    const baseUrl = await serve((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => response.writeHead(201, { 'x-got': String(Buffer.concat(chunks).length), 'x-agent': request.headers['user-agent'] ?? '' }).end('stored'));
    });
    const response = await client(baseUrl).request('file', { method: 'PUT', body: () => Readable.from([Buffer.from('abc'), Buffer.from('def')]), headers: { 'content-length': '6' } });
    expect(response.status).toBe(201);
    expect(response.headers.get('x-got')).toBe('6');
    // the User-Agent fetch gives Ferry's other requests
    expect(response.headers.get('x-agent')).toBe('node');
    expect(await response.text()).toBe('stored');
  });

  it('fails with a 504 sentence when the server stops reading the body', async () => {
    const baseUrl = await serve((request) => request.pause());
    await expect(client(baseUrl).request('file', { method: 'PUT', body: large })).rejects.toMatchObject({ status: 504, message: expect.stringContaining('did not answer in time') });
  });

  it('fails with a 504 sentence when the body was sent and no answer comes', async () => {
    const baseUrl = await serve((request) => request.resume());
    await expect(client(baseUrl).request('file', { method: 'PUT', body: () => Readable.from([Buffer.from('abc')]) })).rejects.toMatchObject({ status: 504 });
  });

  it('gives the refusal a server answers before it read the whole body', async () => {
    const baseUrl = await serve((_request, response) => response.writeHead(413, { connection: 'close' }).end());
    await expect(client(baseUrl).request('file', { method: 'PUT', body: large })).rejects.toMatchObject({ status: 413 });
  });

  it('gives each lent chunk back once the socket has taken it: a few buffers carry a large file', async () => {
    const bytes = randomBytes(24 * READ_BUFFER_BYTES + 3);
    const file = path.join(where.dir, 'big.bin');
    await writeFile(file, bytes);
    const baseUrl = await serve((request, response) => {
      const hash = createHash('sha256');
      request.on('data', (chunk: Buffer) => hash.update(chunk));
      request.on('end', () => response.writeHead(201, { 'x-sha256': hash.digest('hex') }).end());
    });
    const before = { ...readBufferCounts };
    const response = await client(baseUrl).request('file', { method: 'PUT', body: async () => lendingReadStream(await open(file, 'r')), headers: { 'content-length': String(bytes.length) } });
    expect(response.status).toBe(201);
    expect(response.headers.get('x-sha256')).toBe(createHash('sha256').update(bytes).digest('hex'));
    const made = readBufferCounts.made - before.made;
    // 25 chunks; each kept by the request would be a buffer of its own (all but the 8 kept free)
    expect(made + readBufferCounts.reused - before.reused).toBeGreaterThanOrEqual(25);
    expect(made).toBeLessThan(10);
  });

  it("fails with the source's own error when the bytes cannot be read", async () => {
    const baseUrl = await serve((request) => request.resume());
    const broken = () =>
      new Readable({
        read() {
          this.destroy(new Error('disk gone'));
        },
      });
    await expect(client(baseUrl).request('file', { method: 'PUT', body: broken })).rejects.toThrow('disk gone');
  });
});
