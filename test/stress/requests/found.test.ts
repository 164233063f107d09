// What the hostile-request fuzzers found, one fixed example each (each failed before its fix
// in electron/server/**), so a regression shows without a fuzz run.
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResourceSummary } from '../../../shared/api.js';
import { writeTree } from '../../api/harness.js';
import { CRLF, newTally, probe, startFixture, type Fixture } from './hostile.js';

let fixture: Fixture;
beforeAll(async () => {
  fixture = await startFixture();
});
afterAll(async () => fixture?.close());

function head(method: string, target: string, lines: string[]): string {
  return `${method} ${target} HTTP/1.1${CRLF}Host: 127.0.0.1:${fixture.ferry.port}${CRLF}${[...lines, 'Connection: close'].map((l) => l + CRLF).join('')}${CRLF}`;
}

async function answer(request: string | Buffer, method = 'GET'): Promise<{ status: number; body: { error: string; code: string } }> {
  const got = await probe(fixture, newTally(), { request, method, expectAnswer: true }, 10_000);
  const last = got.answers.at(-1)!;
  return { status: last.status, body: JSON.parse(last.body.toString('utf8')) as { error: string; code: string } };
}

describe('found by the hostile-request fuzzers', () => {
  it("a request Node's parser refuses (control character in a header) is answered {error, code}, not Fastify's {error, message, statusCode}", async () => {
    const { status, body } = await answer(head('GET', '/api_v1/targets/', ['X-Bad: a\u0001b']));
    expect(status).toBe(400);
    expect(body.code).toBe('bad_request');
  });

  it('headers over 16 KiB: 431 in the contract shape', async () => {
    const { status, body } = await answer(head('GET', '/api_v1/targets/', [`X-Big: ${'h'.repeat(20_000)}`]));
    expect(status).toBe(431);
    expect(body.code).toBe('too_large');
  });

  it('Content-Length together with Transfer-Encoding: 400 in the contract shape', async () => {
    const { status } = await answer(`${head('POST', '/api_v1/targets/local/resources/', ['Content-Type: application/json', 'Content-Length: 2', 'Transfer-Encoding: chunked'])}{}`, 'POST');
    expect(status).toBe(400);
  });

  it('Expect other than 100-continue: a JSON 417, not an empty one', async () => {
    const { status, body } = await answer(head('GET', '/api_v1/targets/', ['Expect: 200-ok']));
    expect(status).toBe(417);
    expect(body.error).toMatch(/Expect/);
  });

  it('CONNECT is answered (405), not a bare close', async () => {
    const { status, body } = await answer(head('CONNECT', '127.0.0.1:1', []), 'CONNECT');
    expect(status).toBe(405);
    expect(body.code).toBe('action_not_supported');
  });

  it('multipart without a boundary while its (chunked) body is still coming: 400, not 500', async () => {
    const request = head('POST', '/api_v1/targets/local/resources/', [
      `service-destination-token: ${fixture.ferry.key}`,
      'duplicate-file-action: ignore',
      'Content-Type: multipart/form-data',
      'Transfer-Encoding: chunked',
    ]);
    const { status, body } = await answer(request, 'POST');
    expect(status).toBe(400);
    expect(body.error).toMatch(/boundary/);
  });

  it('a file part without a name: 400 naming the problem, not 500', async () => {
    const body = `--b${CRLF}Content-Disposition: form-data; filename="u.zip"${CRLF}${CRLF}PK\u0003\u0004${CRLF}--b--${CRLF}`;
    const request = head('POST', `/api_v1/targets/local/resources/${fixture.ids.folder}/`, [
      `service-destination-token: ${fixture.ferry.key}`,
      'duplicate-file-action: ignore',
      'Content-Type: multipart/form-data; boundary=b',
      `Content-Length: ${body.length}`,
    ]);
    const answered = await answer(request + body, 'POST');
    expect(answered.status).toBe(400);
    expect(answered.body.error).toMatch(/without a name/);
  });

  it('a part busboy skips (not form-data) with a large header and body no longer stalls the upload until the idle timeout', async () => {
    const skipped = `--b${CRLF}Content-Disposition: attachment-ish${CRLF}X-Big: ${'h'.repeat(10_000)}${CRLF}${CRLF}${'v'.repeat(74_000)}${CRLF}`;
    const body = `${skipped}--b--${CRLF}`;
    const request = head('POST', `/api_v1/targets/local/resources/${fixture.ids.folder}/`, [
      `service-destination-token: ${fixture.ferry.key}`,
      'duplicate-file-action: ignore',
      'Content-Type: multipart/form-data; boundary=b',
      `Content-Length: ${body.length}`,
    ]);
    const answered = await answer(request + body, 'POST');
    expect(answered.status).toBe(400);
    expect(answered.body.code).toBe('missing_file');
  });

  it('a malformed request pipelined behind a streaming download cuts the download off; its 400 is never written into the ZIP bytes', async () => {
    await writeTree(fixture.ferry.workspace, { 'Big/big.bin': randomBytes(16 * 1024 * 1024) });
    const top = (await (await fixture.ferry.fetch('/api_v1/targets/local/resources/?container=None', { headers: fixture.ferry.auth() })).json()) as ResourceSummary[];
    const big = top.find((resource) => resource.title === 'Big')!.id;
    const received: Buffer[] = [];
    await new Promise<void>((resolve) => {
      const socket = net.connect(fixture.ferry.port, '127.0.0.1', () => {
        socket.write(`GET /api_v1/targets/local/resources/${big}.zip/ HTTP/1.1${CRLF}Host: 127.0.0.1:${fixture.ferry.port}${CRLF}service-source-token: ${fixture.ferry.key}${CRLF}${CRLF}`);
      });
      let pipelined = false;
      socket.on('data', (chunk: Buffer) => {
        received.push(chunk);
        // once the download's head is out, a request no parser accepts, on the same socket
        if (!pipelined) {
          pipelined = true;
          socket.write(`GARBAGE \u0001 x${CRLF}${CRLF}`);
        }
      });
      socket.on('close', () => resolve());
      socket.on('error', () => resolve());
      setTimeout(() => socket.destroy(), 20_000);
    });
    const bytes = Buffer.concat(received);
    expect(bytes.subarray(0, 12).toString('latin1')).toBe('HTTP/1.1 200');
    expect(bytes.includes('The request is not valid HTTP')).toBe(false);
  });
});
