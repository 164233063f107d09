// The security gate on every route (API, static files, 404s): Host, Origin, body types,
// CORS only for the app's own other origin, and the renderer served with a strict CSP.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTENT_SECURITY_POLICY } from '../../electron/server/gate.js';
import { expectApiError, rawRequest, startFerry, writeTree, type Ferry } from './harness.js';

const APP_ORIGIN = 'app://ferry';
let ferry: Ferry;
let rendererDir: string;
beforeAll(async () => {
  rendererDir = await mkdtemp(path.join(os.tmpdir(), 'ferry-renderer-'));
  await writeTree(rendererDir, { 'index.html': '<!doctype html><title>Ferry</title>', 'assets/app.js': 'console.log(1)' });
  ferry = await startFerry({ server: { rendererDir, allowedOrigins: [APP_ORIGIN] } });
});
afterAll(async () => {
  await ferry?.close();
  await rm(rendererDir, { recursive: true, force: true });
});

describe('Host header', () => {
  it('accepts the loopback names with the right port', async () => {
    for (const host of [`127.0.0.1:${ferry.port}`, `localhost:${ferry.port}`, `LOCALHOST:${ferry.port}`, `[::1]:${ferry.port}`]) {
      const response = await rawRequest(ferry.port, { path: '/api_v1/targets/', headers: { host } });
      expect(response.status, host).toBe(200);
    }
  });

  it('refuses any other Host with 403 gate_refused, on API routes, static files and 404s', async () => {
    const hosts = ['evil.example', `evil.example:${ferry.port}`, `127.0.0.1:${ferry.port + 1}`, '127.0.0.1', `127.0.0.1.nip.io:${ferry.port}`, `localhost.evil:${ferry.port}`];
    for (const host of hosts) {
      for (const route of ['/api_v1/targets/', '/', '/assets/app.js', '/no/such/route', '/api_v1/jobs/']) {
        const response = await rawRequest(ferry.port, { path: route, headers: { host } });
        expect(response.status, `${host} ${route}`).toBe(403);
        const body = JSON.parse(response.body);
        expect(body.code).toBe('gate_refused');
        expect(Object.keys(body).sort()).toEqual(['code', 'error']);
        expect(response.headers['access-control-allow-origin']).toBeUndefined();
      }
    }
  });
});

describe('Origin header', () => {
  it("serves the app's own origins", async () => {
    for (const origin of [`http://127.0.0.1:${ferry.port}`, `http://localhost:${ferry.port}`]) {
      const response = await ferry.fetch('/api_v1/targets/', { headers: { origin } });
      expect(response.status).toBe(200);
      expect(response.headers.get('access-control-allow-origin')).toBeNull(); // same origin needs none
    }
  });

  it('refuses a foreign Origin with 403 and no CORS headers', async () => {
    for (const origin of ['http://evil.example', `http://127.0.0.1:${ferry.port + 1}`, 'null', `https://127.0.0.1:${ferry.port}`]) {
      const response = await ferry.fetch('/api_v1/targets/', { headers: { origin } });
      expect(response.headers.get('access-control-allow-origin')).toBeNull();
      await expectApiError(response, 403, 'gate_refused');
      const preflight = await ferry.fetch('/api_v1/targets/local/resources/', { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'GET' } });
      expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
      expect(preflight.status).toBe(403);
    }
  });

  it('allows the configured app origin with CORS, including preflight', async () => {
    const response = await ferry.fetch('/api_v1/targets/', { headers: { origin: APP_ORIGIN } });
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    const preflight = await ferry.fetch('/api_v1/targets/local/resources/', {
      method: 'OPTIONS',
      headers: { origin: APP_ORIGIN, 'access-control-request-method': 'GET', 'access-control-request-headers': 'service-source-token' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    expect(preflight.headers.get('access-control-allow-headers')).toMatch(/service-source-token/);
  });
});

describe('request bodies', () => {
  it('accepts POST bodies only as multipart/form-data or application/json (415 otherwise)', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
      const response = await ferry.fetch('/app/tokens/local/test', { method: 'POST', body: 'x=1', headers: ferry.bearer({ 'content-type': type }) });
      await expectApiError(response, 415, 'unsupported_media_type');
    }
  });

  it('answers malformed JSON with 400 in the error shape', async () => {
    const response = await ferry.fetch('/api_v1/targets/local/resources/', {
      method: 'POST',
      body: '{not json',
      headers: ferry.auth({ 'content-type': 'application/json', 'duplicate-file-action': 'ignore' }),
    });
    await expectApiError(response, 400, 'bad_request');
  });
});

describe('the renderer (browser mode)', () => {
  it('serves index.html and assets with the strict CSP, without a key', async () => {
    const page = await ferry.fetch('/');
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<title>Ferry</title>');
    expect(page.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    const script = await ferry.fetch('/assets/app.js');
    expect(script.status).toBe(200);
    expect(script.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
  });

  it('falls back to index.html for app paths, but not for API paths', async () => {
    const spa = await ferry.fetch('/browse/local/Data', { headers: { accept: 'text/html' } });
    expect(spa.status).toBe(200);
    expect(await spa.text()).toContain('<title>Ferry</title>');
    await expectApiError(await ferry.fetch('/api_v1/nope/', { headers: { accept: 'text/html' } }), 404, 'not_found');
    await expectApiError(await ferry.fetch('/missing.js'), 404, 'not_found');
  });

  it('CSP forbids inline scripts and framing', () => {
    expect(CONTENT_SECURITY_POLICY).toContain("script-src 'self';");
    expect(CONTENT_SECURITY_POLICY).toContain("frame-ancestors 'none'");
  });
});
