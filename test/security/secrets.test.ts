// The access key: compared in constant time, published only in endpoint.json (0600,
// written atomically), never echoed by the API.
import { readFileSync, readdirSync } from 'node:fs';
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startFerry as startHost } from '../../electron/host.js';
import { MemorySecretStore } from '../../electron/core/keychain/memory.js';
import { secretsEqual } from '../../electron/server/tokens.js';

const roots: string[] = [];
afterAll(async () => {
  for (const root of roots) await rm(root, { recursive: true, force: true });
});

describe('key comparison', () => {
  it('is exact for any lengths and never throws (timingSafeEqual on digests)', () => {
    const key = 'a'.repeat(43);
    expect(secretsEqual(key, key)).toBe(true);
    for (const candidate of ['', 'a', key.slice(0, -1), `${key}a`, key.toUpperCase(), 'é'.repeat(43), '\0'.repeat(1000)]) {
      expect(secretsEqual(candidate, key)).toBe(false);
    }
  });

  it('no server or core source compares a key or token with === (a timing oracle)', () => {
    const offenders: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(dir, { withFileTypes: true })) {
        const full = path.join(dir, name.name);
        if (name.isDirectory()) {
          if (name.name !== 'test-support') walk(full);
        }
        else if (name.name.endsWith('.ts') && !name.name.endsWith('.test.ts')) {
          readFileSync(full, 'utf8')
            .split('\n')
            .forEach((line, i) => {
              if (/(accessKey|access_key|\btoken\b|candidate)\s*[!=]==\s*(?!undefined|null|'|"|`)\w/.test(line) || /[!=]==\s*(core\.)?accessKey\b/.test(line)) {
                offenders.push(`${path.relative(process.cwd(), full)}:${i + 1}: ${line.trim()}`);
              }
            });
        }
      }
    };
    walk(path.join(process.cwd(), 'electron/server'));
    walk(path.join(process.cwd(), 'electron/core/jobs'));
    expect(offenders).toEqual([]);
  });
});

describe('endpoint.json', () => {
  async function start() {
    const root = await mkdtemp(path.join(os.tmpdir(), 'ferry-endpoint-'));
    roots.push(root);
    return { root, dataDir: path.join(root, 'data'), workspace: path.join(root, 'ws') };
  }

  it('is owner-only (0600), complete JSON, with no temporary file left', async () => {
    const dirs = await start();
    const running = await startHost({ ...dirs, secrets: new MemorySecretStore() });
    try {
      const info = await stat(running.endpointFile);
      if (process.platform !== 'win32') expect(info.mode & 0o777).toBe(0o600);
      const parsed = JSON.parse(await readFile(running.endpointFile));
      expect(parsed.access_key).toBe(running.accessKey);
      expect(parsed.access_key).toMatch(/^[A-Za-z0-9_-]{43,}$/); // 256 bits
      expect((await readdir(dirs.dataDir)).filter((name) => name.includes('.tmp'))).toEqual([]);
    } finally {
      await running.close();
    }
  });

  // writeFile's mode applies only when it creates the file, so a planted temporary file's
  // 0666 would survive the rename: host.ts removes it and creates the temp afresh ('wx').
  it('stays 0600 when an older endpoint.json or a planted temporary file was world-readable', async () => {
    const dirs = await start();
    const { mkdir, chmod } = await import('node:fs/promises');
    await mkdir(dirs.dataDir, { recursive: true });
    const file = path.join(dirs.dataDir, 'endpoint.json');
    await writeFile(file, '{}', { mode: 0o644 });
    await chmod(file, 0o644);
    const planted = `${file}.${process.pid}.tmp`;
    await writeFile(planted, '', { mode: 0o666 });
    await chmod(planted, 0o666);
    const running = await startHost({ ...dirs, secrets: new MemorySecretStore() });
    try {
      if (process.platform !== 'win32') expect((await stat(file)).mode & 0o777).toBe(0o600);
    } finally {
      await running.close();
    }
  });

  it('the key never appears in an API response', async () => {
    const dirs = await start();
    const running = await startHost({ ...dirs, secrets: new MemorySecretStore() });
    try {
      const auth = { authorization: `Bearer ${running.accessKey}`, 'service-source-token': running.accessKey };
      for (const route of ['api_v1/targets/', 'api_v1/openapi.json', 'app/session', 'api_v1/jobs/', 'api_v1/targets/local/resources/', 'api_v1/targets/local/resources/nope.json/']) {
        const response = await fetch(new URL(route, running.url), { headers: auth });
        const text = `${[...response.headers.entries()].join('\n')}\n${await response.text()}`;
        expect(text, route).not.toContain(running.accessKey);
      }
      const wrong = await fetch(new URL('api_v1/targets/local/resources/', running.url), { headers: { authorization: `Bearer ${running.accessKey.slice(0, -2)}xx` } });
      expect(await wrong.text()).not.toContain(running.accessKey.slice(0, -2));
    } finally {
      await running.close();
    }
  });
});

async function readFile(file: string): Promise<string> {
  const { readFile: read } = await import('node:fs/promises');
  return read(file, 'utf8');
}
