// Upload bodies as an attacker would send them: over the size limit (announced or not),
// cut off half-way, with extra files and fields, huge fields, broken multipart. The limit
// holds while streaming, and no spool file is left behind in any case.
import net from 'node:net';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawZip } from '../../electron/core/zip/testing/raw-zip.js';
import { expectApiError, startFerry, writeTree, type Ferry } from '../api/harness.js';
import { rawExchange } from './raw-http.js';

const LIMIT = 64 * 1024;
let ferry: Ferry;
beforeAll(async () => {
  ferry = await startFerry({ limits: { maxUploadBytes: LIMIT } });
  await writeTree(ferry.workspace, { 'Data/a.txt': 'a\n' });
});
afterAll(async () => ferry?.close());

const spoolFiles = () => readdir(path.join(ferry.dataDir, 'spool')).catch(() => [] as string[]);
async function expectNoSpool(): Promise<void> {
  const deadline = Date.now() + 3000;
  while ((await spoolFiles()).length > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  expect(await spoolFiles()).toEqual([]);
}
async function jobCount(): Promise<number> {
  return ((await (await ferry.fetch('/api_v1/jobs/', { headers: ferry.bearer() })).json()) as unknown[]).length;
}

const BOUNDARY = 'ferryBoundary';
const filePart = (field: string, name = 'u.zip') => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${field}"; filename="${name}"\r\nContent-Type: application/zip\r\n\r\n`;
const fieldPart = (field: string, value: string) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${field}"\r\n\r\n${value}\r\n`;
const end = `\r\n--${BOUNDARY}--\r\n`;
const smallZip = () => rawZip([{ name: 'F/x.txt', data: Buffer.from('x') }]);

function head(length: number | 'chunked', extra: Record<string, string> = {}): string {
  const headers: Record<string, string> = {
    host: `127.0.0.1:${ferry.port}`,
    'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
    'service-destination-token': ferry.key,
    'duplicate-file-action': 'ignore',
    ...(length === 'chunked' ? { 'transfer-encoding': 'chunked' } : { 'content-length': String(length) }),
    ...extra,
  };
  return `POST /api_v1/targets/local/resources/ HTTP/1.1\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`;
}

/**
 * Opens a POST, sends its head and then body chunks until the server answers or closes,
 * up to `maxBytes`; returns the status line and how many body bytes went out.
 */
function pushUntilAnswered(headText: string, chunk: Buffer, maxBytes: number, chunked: boolean): Promise<{ status: number; sent: number }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(ferry.port, '127.0.0.1');
    let sent = 0;
    let answer = '';
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      socket.destroy();
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0), sent });
    };
    socket.on('data', (data) => {
      answer += data.toString('utf8');
      if (answer.includes('\r\n\r\n')) finish();
    });
    socket.on('close', finish);
    socket.on('error', (error) => (done ? undefined : sent > 0 ? finish() : reject(error)));
    socket.on('connect', () => {
      socket.write(headText);
      socket.write(chunked ? `${Buffer.byteLength(filePart('service-file')).toString(16)}\r\n${filePart('service-file')}\r\n` : filePart('service-file'));
      const pump = () => {
        while (!done && sent < maxBytes) {
          sent += chunk.length;
          const ok = socket.write(chunked ? Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]) : chunk);
          if (!ok) return void socket.once('drain', pump);
        }
      };
      pump();
    });
  });
}

describe('the upload size limit holds while streaming', () => {
  it('refuses at once a body whose Content-Length is over the limit, before reading it', async () => {
    const before = await jobCount();
    const answer = await rawExchange(ferry.port, head(10 * 1024 ** 3) + filePart('service-file') + 'PK\x03\x04', 3000);
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body)).toMatchObject({ code: 'too_large' });
    await expectNoSpool();
    expect(await jobCount()).toBe(before);
  });

  it('stops a chunked body (no length) soon after the limit, and removes the partial spool', async () => {
    const chunk = Buffer.alloc(16 * 1024, 7);
    const { status, sent } = await pushUntilAnswered(head('chunked'), chunk, 64 * 1024 * 1024, true);
    expect(status).toBe(413);
    expect(sent).toBeLessThan(16 * 1024 * 1024); // answered long before the whole 64 MiB went out
    await expectNoSpool();
  });

  it('stops a body that lies about its length (announces less than it sends)', async () => {
    const chunk = Buffer.alloc(16 * 1024, 7);
    const { status, sent } = await pushUntilAnswered(head(LIMIT / 2), chunk, 64 * 1024 * 1024, false);
    expect([0, 400, 413]).toContain(status);
    expect(sent).toBeLessThan(16 * 1024 * 1024);
    await expectNoSpool();
  });
});

describe('a client that goes away mid-upload', () => {
  it('leaves no spool file and no job', async () => {
    const before = await jobCount();
    for (const length of [LIMIT - 100, 'chunked'] as const) {
      const socket = net.connect(ferry.port, '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.write(head(length));
      socket.write(length === 'chunked' ? `${(filePart('service-file').length + 4096).toString(16)}\r\n${filePart('service-file')}` : filePart('service-file'));
      socket.write(Buffer.concat([Buffer.from('PK\x03\x04'), Buffer.alloc(4092, 1)]));
      await new Promise((resolve) => setTimeout(resolve, 150)); // the spool file exists by now
      socket.destroy();
      await expectNoSpool();
    }
    expect(await jobCount()).toBe(before);
  });
});

describe('odd multipart bodies', () => {
  const post = (body: Buffer | string, extra: Record<string, string> = {}) =>
    ferry.fetch('/api_v1/targets/local/resources/', {
      method: 'POST',
      body,
      headers: ferry.auth({ 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, 'duplicate-file-action': 'ignore', ...extra }),
    });
  const zipBody = (...parts: (string | Buffer)[]) => Buffer.concat(parts.map((part) => (typeof part === 'string' ? Buffer.from(part) : part)));

  it('refuses two files in service-file, naming the problem', async () => {
    const body = zipBody(filePart('service-file'), smallZip(), '\r\n', filePart('service-file', 'second.zip'), smallZip(), end);
    await expectApiError(await post(body), 400, 'bad_request');
    await expectNoSpool();
  });

  it('refuses a file in another field (with or without service-file) instead of reading it to the end', async () => {
    await expectApiError(await post(zipBody(filePart('other'), smallZip(), end)), 400, 'missing_file');
    const both = zipBody(filePart('other'), smallZip(), '\r\n', filePart('service-file'), smallZip(), end);
    await expectApiError(await post(both), 400, 'missing_file');
    await expectNoSpool();
  });

  it('ignores small text fields, but refuses a huge one without holding it', async () => {
    const small = zipBody(fieldPart('note', 'hello'), filePart('service-file'), smallZip(), end);
    const accepted = await post(small);
    expect(accepted.status).toBe(202);
    const huge = zipBody(fieldPart('note', 'x'.repeat(2 * 1024 * 1024)), filePart('service-file'), smallZip(), end);
    const refused = await post(huge);
    expect([400, 413]).toContain(refused.status);
    await expectNoSpool();
  });

  it('refuses many fields', async () => {
    const many = zipBody(...Array.from({ length: 500 }, (_, i) => fieldPart(`f${i}`, 'v')), filePart('service-file'), smallZip(), end);
    const response = await post(many);
    expect([400, 413]).toContain(response.status);
    await expectNoSpool();
  });

  it('answers 400 for a multipart type without a boundary, or a body that is not multipart', async () => {
    const response = await ferry.fetch('/api_v1/targets/local/resources/', {
      method: 'POST',
      body: 'PK',
      headers: ferry.auth({ 'content-type': 'multipart/form-data', 'duplicate-file-action': 'ignore' }),
    });
    await expectApiError(response, 400, 'bad_request');
    await expectApiError(await post('this is not multipart at all'), 400, 'bad_request');
    await expectApiError(await post(zipBody(filePart('service-file'), smallZip())), 400, 'bad_request');
    await expectNoSpool();
  });
});
