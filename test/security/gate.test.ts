// Attacks on the loopback listener from other web pages and local processes: DNS
// rebinding (Host), cross-site requests (Origin, form posts), CORS, on every kind of route.
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectApiError, rawRequest, startFerry, writeTree, type Ferry } from '../api/harness.js';
import { rawGet } from './raw-http.js';

const APP_ORIGIN = 'app://ferry';
let ferry: Ferry;
let rendererDir: string;
let routes: { path: string; headers: Record<string, string> }[];

beforeAll(async () => {
  rendererDir = await mkdtemp(path.join(os.tmpdir(), 'ferry-sec-renderer-'));
  await writeTree(rendererDir, { 'index.html': '<!doctype html><title>Ferry</title>', 'assets/app.js': 'console.log(1)' });
  ferry = await startFerry({ server: { rendererDir, allowedOrigins: [APP_ORIGIN] } });
  await writeTree(ferry.workspace, { 'Data/a.txt': 'a\n' });
  const key = { authorization: `Bearer ${ferry.key}`, 'service-source-token': ferry.key };
  routes = [
    { path: '/api_v1/targets/', headers: {} },
    { path: '/api_v1/target/local/', headers: {} },
    { path: '/api_v1/targets/local/resources/', headers: key },
    { path: '/api_v1/openapi.json', headers: {} },
    { path: '/api_v1/jobs/', headers: key },
    { path: '/api_v1/jobs/events/', headers: key },
    { path: '/app/session', headers: key },
    { path: '/', headers: {} },
    { path: '/assets/app.js', headers: {} },
    { path: '/no/such/route', headers: { accept: 'text/html' } },
    { path: '/api_v1/no-such-route/', headers: {} },
  ];
});
afterAll(async () => {
  await ferry?.close();
  await rm(rendererDir, { recursive: true, force: true });
});

function expectRefused(response: { status: number; body: string; headers?: Record<string, unknown> }, what: string): void {
  expect(response.status, what).toBe(403);
  expect(JSON.parse(response.body), what).toMatchObject({ code: 'gate_refused' });
}

const headerLines = (headers: Record<string, string>) => Object.entries(headers).map(([name, value]) => `${name}: ${value}`);

describe('Host header (DNS rebinding)', () => {
  it('refuses hostile and look-alike Hosts on every route, SSE and openapi included', async () => {
    const port = ferry.port;
    const hosts = [
      'evil.example',
      `evil.example:${port}`,
      `localhost.:${port}`, // a trailing dot is another name to a browser (another origin)
      `127.0.0.1.:${port}`,
      `127.0.0.1:${port + 1}`,
      `127.0.0.1:0${port}`,
      '127.0.0.1',
      'localhost',
      `[::1]`,
      `[0:0:0:0:0:0:0:1]:${port}`,
      `[::ffff:127.0.0.1]:${port}`,
      `2130706433:${port}`,
      `127.1:${port}`,
      `localhost.evil.example:${port}`,
      `127.0.0.1:${port}.evil.example`,
      `user@127.0.0.1:${port}`,
    ];
    for (const host of hosts) {
      for (const route of routes) {
        const response = await rawRequest(port, { path: route.path, headers: { ...route.headers, host } });
        expectRefused(response, `${host} ${route.path}`);
        expect(response.headers['access-control-allow-origin']).toBeUndefined();
      }
    }
  });

  it('accepts the loopback names with the right port, in any case', async () => {
    for (const host of [`127.0.0.1:${ferry.port}`, `localhost:${ferry.port}`, `LocalHost:${ferry.port}`, `[::1]:${ferry.port}`]) {
      const response = await rawRequest(ferry.port, { path: '/api_v1/targets/', headers: { host } });
      expect(response.status, host).toBe(200);
    }
  });

  it('refuses a request with no Host at all (HTTP/1.0)', async () => {
    for (const route of routes) {
      const response = await rawGet(ferry.port, route.path, headerLines(route.headers));
      expectRefused(response, route.path);
    }
  });

  it('refuses a request with the Host (or Origin) header twice, whichever comes first', async () => {
    const good = `Host: 127.0.0.1:${ferry.port}`;
    for (const lines of [[good, 'Host: evil.example'], ['Host: evil.example', good], [good, good], [good, 'Origin: http://127.0.0.1:' + ferry.port, 'Origin: http://evil.example']]) {
      for (const version of ['1.0', '1.1']) {
        const response = await rawGet(ferry.port, '/api_v1/targets/', lines, version);
        // Node itself answers 400 to some of these; either way nothing is served
        expect([400, 403], `${version} ${lines.join(' | ')}`).toContain(response.status);
      }
    }
  });
});

describe('Origin header (CSRF)', () => {
  const foreign = () => ['http://evil.example', 'null', `http://127.0.0.1:${ferry.port + 1}`, `https://127.0.0.1:${ferry.port}`, `http://localhost.:${ferry.port}`, 'file://'];

  it('refuses a foreign Origin on GET, POST, PUT, DELETE and preflight, with no CORS headers', async () => {
    for (const origin of foreign()) {
      for (const [method, route] of [
        ['GET', '/api_v1/targets/'],
        ['GET', '/api_v1/openapi.json'],
        ['GET', '/'],
        ['POST', '/api_v1/targets/local/resources/'],
        ['PUT', '/app/tokens/local'],
        ['DELETE', '/api_v1/jobs/x/'],
        ['OPTIONS', '/api_v1/targets/local/resources/'],
      ] as const) {
        const response = await ferry.fetch(route, {
          method,
          headers: ferry.bearer({ origin, 'access-control-request-method': 'POST', 'content-type': 'application/json', 'duplicate-file-action': 'ignore' }),
          body: method === 'POST' || method === 'PUT' ? '{}' : undefined,
        });
        expect(response.headers.get('access-control-allow-origin'), `${origin} ${method} ${route}`).toBeNull();
        expect(response.headers.get('access-control-allow-credentials')).toBeNull();
        await expectApiError(response, 403, 'gate_refused');
      }
    }
  });

  it('cross-site form posts (text/plain, urlencoded, multipart) never start a job', async () => {
    const data = (await (await ferry.fetch('/api_v1/targets/local/resources/?container=None', { headers: ferry.auth() })).json()) as { id: string }[];
    const bodies: [string, string][] = [
      ['text/plain', '{"source_target_name":"local","source_resource_id":"x"}'],
      ['application/x-www-form-urlencoded', 'source_target_name=local&source_resource_id=x'],
      ['multipart/form-data; boundary=b', '--b\r\nContent-Disposition: form-data; name="service-file"; filename="a.zip"\r\n\r\nPK\x05\x06\r\n--b--\r\n'],
    ];
    for (const [type, body] of bodies) {
      for (const origin of [undefined, 'http://evil.example', 'null']) {
        // a form can carry neither the token headers nor a JSON type; with the key, only the type is wrong
        const headers: Record<string, string> = { 'content-type': type, 'duplicate-file-action': 'ignore', ...(origin ? { origin } : {}) };
        const response = await ferry.fetch(`/api_v1/targets/local/resources/${data[0]!.id}/`, { method: 'POST', headers, body });
        expect([401, 403, 415], `${type} ${origin}`).toContain(response.status);
      }
    }
    const jobs = (await (await ferry.fetch('/api_v1/jobs/', { headers: ferry.bearer() })).json()) as unknown[];
    expect(jobs).toEqual([]);
    expect((await readdir(path.join(ferry.dataDir, 'spool')).catch(() => [])).length).toBe(0);
  });

  it('a JSON transfer without the access key is 401 and starts nothing', async () => {
    for (const headers of [{}, { 'service-source-token': 'guess', 'service-destination-token': 'guess' }, { authorization: 'Bearer guess' }] as Record<string, string>[]) {
      const response = await ferry.fetch('/api_v1/targets/local/resources/', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'duplicate-file-action': 'ignore', ...headers },
        body: JSON.stringify({ source_target_name: 'local', source_resource_id: 'loc_RGF0YQ' }),
      });
      await expectApiError(response, 401, 'unauthorized');
    }
    expect(((await (await ferry.fetch('/api_v1/jobs/', { headers: ferry.bearer() })).json()) as unknown[]).length).toBe(0);
  });

  it('CORS headers only for the configured app origin; never a wildcard or credentials', async () => {
    const own = await ferry.fetch('/api_v1/targets/', { headers: { origin: `http://127.0.0.1:${ferry.port}` } });
    expect(own.status).toBe(200);
    expect(own.headers.get('access-control-allow-origin')).toBeNull();
    const app = await ferry.fetch('/api_v1/targets/', { headers: { origin: APP_ORIGIN } });
    expect(app.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    expect(app.headers.get('access-control-allow-credentials')).toBeNull();
    // a preflight for a foreign origin that merely starts like the app's own
    for (const origin of [`${APP_ORIGIN}.evil`, `${APP_ORIGIN}:1`, 'app://ferryx', 'APP://FERRY.evil']) {
      const preflight = await ferry.fetch('/api_v1/targets/', { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'GET' } });
      expect(preflight.status, origin).toBe(403);
      expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
    }
  });
});
