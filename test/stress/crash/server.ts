// `ferry serve` for the crash test: the built CLI when out/ is up to date with the sources
// (what users run), else the sources through tsx (said once, with the reason), plus the few
// API calls the test makes.
import { statSync, readdirSync } from 'node:fs';
import path from 'node:path';
import type { Job } from '../../../shared/api.js';
import { builtCliAvailable, startFerryProcess, type FerryProcess } from '../../support/ferry-process.js';

function newestSourceMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts') || entry.name.endsWith('.test.ts')) continue;
    newest = Math.max(newest, statSync(path.join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

/** Whether to run the built CLI, and why not when not. */
export function chooseCli(): { built: boolean; why: string } {
  if (process.env.FERRY_CRASH_CLI === 'source') return { built: false, why: 'FERRY_CRASH_CLI=source' };
  if (!builtCliAvailable()) return { built: false, why: 'out/main/cli.js is missing (npx electron-vite build makes it)' };
  const builtAt = statSync(path.resolve('out/main/cli.js')).mtimeMs;
  const sourcesAt = Math.max(newestSourceMtime(path.resolve('electron')), newestSourceMtime(path.resolve('shared')));
  if (sourcesAt > builtAt && process.env.FERRY_CRASH_CLI !== 'built') {
    return { built: false, why: 'out/ is older than electron/ or shared/ (rebuild, or FERRY_CRASH_CLI=built to use it anyway)' };
  }
  return { built: true, why: 'out/main/cli.js is up to date' };
}

export class Ferry {
  private constructor(readonly process: FerryProcess) {}

  static async start(options: { dataDir: string; workspace: string; built: boolean; extraArgs?: string[] }): Promise<Ferry> {
    return new Ferry(await startFerryProcess(options));
  }

  get url(): string {
    return this.process.url;
  }

  get key(): string {
    return this.process.accessKey;
  }

  get alive(): boolean {
    return this.process.child.exitCode === null && this.process.child.signalCode === null;
  }

  async kill(): Promise<void> {
    if (this.alive) this.process.child.kill('SIGKILL');
    await this.process.exited;
  }

  async stop(): Promise<number | string> {
    if (this.alive) this.process.child.kill('SIGTERM');
    return this.process.exited;
  }

  output(): string {
    return this.process.output();
  }

  fetch(pathAndQuery: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (!headers.has('authorization')) headers.set('authorization', `Bearer ${this.key}`);
    return fetch(`${this.url}${pathAndQuery.replace(/^\//, '')}`, { ...init, headers });
  }

  async json<T>(pathAndQuery: string): Promise<T> {
    const response = await this.fetch(pathAndQuery);
    if (response.status !== 200) throw new Error(`GET ${pathAndQuery}: ${response.status} ${await response.text()}`);
    return (await response.json()) as T;
  }

  jobs(): Promise<Job[]> {
    return this.json<Job[]>('api_v1/jobs/');
  }
}
