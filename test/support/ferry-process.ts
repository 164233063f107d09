import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';

/** A `ferry serve` in a child process, as a user or a local tool would run it. */
export interface FerryProcess {
  url: string;
  port: number;
  accessKey: string;
  child: ChildProcess;
  output(): string;
  /** resolves with the exit code (or the signal name) */
  exited: Promise<number | string>;
}

export const BUILT_CLI = path.resolve('bin/ferry.js');
export const builtCliAvailable = () => existsSync(path.resolve('out/main/cli.js'));

/**
 * Starts the CLI from source (through tsx) unless `built` is set, then waits until
 * endpoint.json names this process.
 */
export async function startFerryProcess(options: { dataDir: string; workspace: string; built?: boolean; extraArgs?: string[]; env?: NodeJS.ProcessEnv }): Promise<FerryProcess> {
  const args = options.built
    ? [BUILT_CLI, 'serve']
    : ['--import', 'tsx', path.resolve('electron/cli.ts'), 'serve'];
  const child = spawn(process.execPath, [...args, '--port', '0', '--data-dir', options.dataDir, '--workspace', options.workspace, ...(options.extraArgs ?? [])], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, DBUS_SESSION_BUS_ADDRESS: process.env.DBUS_SESSION_BUS_ADDRESS ?? 'disabled:', ...options.env },
  });
  let output = '';
  child.stdout?.on('data', (chunk) => (output += chunk));
  child.stderr?.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  const endpointFile = path.join(options.dataDir, 'endpoint.json');
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`ferry serve exited early:\n${output}`);
    try {
      const endpoint = JSON.parse(await readFile(endpointFile, 'utf8')) as { url: string; port: number; pid: number; access_key: string };
      if (endpoint.pid === child.pid && /serving at/.test(output)) {
        return { url: endpoint.url, port: endpoint.port, accessKey: endpoint.access_key, child, output: () => output, exited };
      }
    } catch {
      // not written yet
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  child.kill('SIGKILL');
  throw new Error(`ferry serve did not publish endpoint.json in time:\n${output}`);
}

export async function fileMode(file: string): Promise<number> {
  return (await stat(file)).mode & 0o777;
}
