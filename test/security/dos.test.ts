// Cheap denial of service by a local page or process: many event streams, big JSON bodies,
// connections that send headers slowly or go idle.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_EVENT_STREAMS } from '../../electron/server/routes/jobs.js';
import { expectApiError, startFerry, type Ferry } from '../api/harness.js';

let ferry: Ferry;
beforeAll(async () => {
  ferry = await startFerry({ server: { idleTimeoutMs: 400 } });
});
afterAll(async () => ferry?.close());

describe('event streams', () => {
  it(`at most ${MAX_EVENT_STREAMS} at once; the next is 429 and a closed one frees its place`, async () => {
    const controllers: AbortController[] = [];
    try {
      for (let i = 0; i < MAX_EVENT_STREAMS; i++) {
        const controller = new AbortController();
        controllers.push(controller);
        const response = await ferry.fetch('/api_v1/jobs/events/', { headers: ferry.bearer(), signal: controller.signal });
        expect(response.status, `stream ${i}`).toBe(200);
      }
      await expectApiError(await ferry.fetch('/api_v1/jobs/events/', { headers: ferry.bearer() }), 429, 'rate_limited');
      controllers.pop()!.abort();
      await new Promise((resolve) => setTimeout(resolve, 100));
      const again = new AbortController();
      controllers.push(again);
      expect((await ferry.fetch('/api_v1/jobs/events/', { headers: ferry.bearer(), signal: again.signal })).status).toBe(200);
    } finally {
      for (const controller of controllers) controller.abort();
    }
  });

  it('without the key, a stream is refused before it counts', async () => {
    for (let i = 0; i < MAX_EVENT_STREAMS + 2; i++) {
      await expectApiError(await ferry.fetch('/api_v1/jobs/events/'), 401, 'unauthorized');
    }
  });
});

describe('JSON bodies', () => {
  it('a transfer or token body over 1 MiB is 413 without being parsed', async () => {
    const big = JSON.stringify({ source_target_name: 'local', source_resource_id: 'x'.repeat(2 * 1024 * 1024) });
    await expectApiError(
      await ferry.fetch('/api_v1/targets/local/resources/', { method: 'POST', body: big, headers: ferry.auth({ 'content-type': 'application/json', 'duplicate-file-action': 'ignore' }) }),
      413,
      'too_large',
    );
    await expectApiError(
      await ferry.fetch('/app/tokens/local', { method: 'PUT', body: JSON.stringify({ token: 'x'.repeat(2 * 1024 * 1024) }), headers: ferry.bearer({ 'content-type': 'application/json' }) }),
      413,
      'too_large',
    );
  });

  it('deeply nested JSON does not crash the parser (unknown members are dropped); __proto__ is refused', async () => {
    const nested = `{"source_target_name":"local","source_resource_id":"x","extra":${'['.repeat(5000)}${']'.repeat(5000)}}`;
    const response = await ferry.fetch('/api_v1/targets/local/resources/', { method: 'POST', body: nested, headers: ferry.auth({ 'content-type': 'application/json', 'duplicate-file-action': 'ignore' }) });
    expect([400, 404]).toContain(response.status); // 404: the extra member was dropped, the id names nothing
    const proto = await ferry.fetch('/api_v1/targets/local/resources/', {
      method: 'POST',
      body: '{"source_target_name":"local","source_resource_id":"x","__proto__":{"polluted":true}}',
      headers: ferry.auth({ 'content-type': 'application/json', 'duplicate-file-action': 'ignore' }),
    });
    expect(proto.status).toBe(400);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('slow and idle connections', () => {
  function closedWithin(write: (socket: net.Socket) => void, ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const socket = net.connect(ferry.port, '127.0.0.1', () => write(socket));
      const timer = setTimeout(() => {
        socket.destroy();
        resolve(false);
      }, ms);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  it('a connection that sends half its headers and stalls is closed', async () => {
    expect(await closedWithin((socket) => socket.write(`GET /api_v1/targets/ HTTP/1.1\r\nHost: 127.0.0.1:${ferry.port}\r\nX-Slow: `), 3000)).toBe(true);
  });

  it('a connection opened and never used is closed', async () => {
    expect(await closedWithin(() => undefined, 3000)).toBe(true);
  });

  it('an upload body that stalls is closed', async () => {
    const head = `POST /api_v1/targets/local/resources/ HTTP/1.1\r\nHost: 127.0.0.1:${ferry.port}\r\ncontent-type: multipart/form-data; boundary=b\r\ncontent-length: 100000\r\nservice-destination-token: ${ferry.key}\r\nduplicate-file-action: ignore\r\n\r\n--b\r\n`;
    expect(await closedWithin((socket) => socket.write(head), 3000)).toBe(true);
  });

  it('the headers timeout is bounded (production default)', async () => {
    const { buildServer } = await import('../../electron/server/server.js');
    const app = await buildServer(ferry.core, { host: '127.0.0.1', port: 0, logger: false });
    try {
      expect(app.server.headersTimeout).toBeGreaterThan(0);
      expect(app.server.headersTimeout).toBeLessThanOrEqual(30_000);
      expect(app.server.timeout).toBeGreaterThan(0); // idle sockets are closed
      expect(app.server.timeout).toBeLessThanOrEqual(300_000);
    } finally {
      await app.close();
    }
  });
});
