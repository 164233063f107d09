import { mkdtemp, rm, readFile, writeFile, mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { builtCliAvailable, fileMode, startFerryProcess, type FerryProcess } from '../support/ferry-process.js';

let dir: string;
let running: FerryProcess | null = null;

afterEach(async () => {
  if (running && running.child.exitCode === null) running.child.kill('SIGKILL');
  running = null;
  await rm(dir, { recursive: true, force: true });
});

async function servesTheApi(built: boolean) {
  dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-cli-'));
  const dataDir = path.join(dir, 'data');
  const workspace = path.join(dir, 'workspace');
  await mkdir(workspace, { recursive: true });
  await writeFile(path.join(workspace, 'hello.txt'), 'hello\n');
  running = await startFerryProcess({ dataDir, workspace, built });

  expect(running.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
  expect(running.output()).toContain(`Ferry is serving at ${running.url}`);
  expect(running.output()).not.toContain(running.accessKey);
  const endpointFile = path.join(dataDir, 'endpoint.json');
  expect(await fileMode(endpointFile)).toBe(0o600);
  const endpoint = JSON.parse(await readFile(endpointFile, 'utf8'));
  expect(Object.keys(endpoint).sort()).toEqual(['access_key', 'pid', 'port', 'url']);
  expect(endpoint.port).toBe(running.port);
  expect(endpoint.access_key).toMatch(/^[0-9a-f]{64}$/);

  const targets = (await (await fetch(`${running.url}api_v1/targets/`)).json()) as { name: string }[];
  expect(targets.map((target: { name: string }) => target.name)).toContain('local');
  const listing = await fetch(`${running.url}api_v1/targets/local/resources/`, { headers: { 'service-source-token': running.accessKey } });
  expect(listing.status).toBe(200);
  expect(((await listing.json()) as { title: string }[]).map((resource: { title: string }) => resource.title)).toEqual(['hello.txt']);

  running.child.kill('SIGTERM');
  expect(await running.exited).toBe(0);
  expect(running.output()).toContain('SIGTERM: stopping');
}

describe('ferry serve', () => {
  it('serves the API on a free loopback port, writes endpoint.json 0600, stops cleanly on SIGTERM (from source)', () => servesTheApi(false));

  const reason = builtCliAvailable() ? null : 'out/main/cli.js is missing; `npm test` builds it first';
  if (reason) console.warn(`Built-CLI test skipped: ${reason}`);
  it.skipIf(reason !== null)('does the same through the built bin (node bin/ferry.js serve)', () => servesTheApi(true));

  it('refuses a bad --port with a sentence and exit code 2', async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-cli-'));
    const { spawnSync } = await import('node:child_process');
    const result = spawnSync(process.execPath, ['--import', 'tsx', 'electron/cli.ts', 'serve', '--port', 'eighty', '--data-dir', dir], { encoding: 'utf8' });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('--port must be a number from 0 to 65535');
  });
});
