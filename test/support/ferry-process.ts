import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, createWriteStream, existsSync, mkdirSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';

/** A `ferry serve` in a child process, as a user or a local tool would run it. */
export interface FerryProcess {
  url: string;
  port: number;
  accessKey: string;
  /** the process started: `bin/ferry.js serve` is a launcher (electron/launch/relaunch.ts), a kill of it is a kill of the server */
  child: ChildProcess;
  /**
   * the server's own process (endpoint.json's pid), for what /proc says of it: the launcher's
   * child when it started one with the memory settings, else the child itself
   */
  pid: number;
  output(): string;
  /** resolves with the launcher's exit code (or the signal name) once the server's process is gone too */
  exited: Promise<number | string>;
}

export const BUILT_CLI = path.resolve('bin/ferry.js');
export const builtCliAvailable = () => existsSync(path.resolve('out/main/cli.js'));

/**
 * Starts the CLI from source (through tsx) unless `built` is set, then waits until
 * endpoint.json names this process.
 */
/** `nodeArgs`: options for node itself, before the script (e.g. --cpu-prof, which NODE_OPTIONS refuses). */
export async function startFerryProcess(options: { dataDir: string; workspace: string; built?: boolean; extraArgs?: string[]; env?: NodeJS.ProcessEnv; nodeArgs?: string[] }): Promise<FerryProcess> {
  const args = options.built
    ? [BUILT_CLI, 'serve']
    : ['--import', 'tsx', path.resolve('electron/cli.ts'), 'serve'];
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), ...args, '--port', '0', '--data-dir', options.dataDir, '--workspace', options.workspace, ...(options.extraArgs ?? [])], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, DBUS_SESSION_BUS_ADDRESS: process.env.DBUS_SESSION_BUS_ADDRESS ?? 'disabled:', ...options.env },
  });
  let output = '';
  child.stdout?.on('data', (chunk) => (output += chunk));
  child.stderr?.on('data', (chunk) => (output += chunk));
  teeToTestLog(child, 'serve');
  let serverPid: number | undefined;
  const launcherExited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  const exited = launcherExited.then(async (status) => {
    if (serverPid !== undefined && serverPid !== child.pid) await processGone(serverPid);
    return status;
  });
  const endpointFile = path.join(options.dataDir, 'endpoint.json');
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`ferry serve exited early:\n${output}`);
    try {
      const endpoint = JSON.parse(await readFile(endpointFile, 'utf8')) as { url: string; port: number; pid: number; access_key: string };
      if ((await isServerOf(endpoint.pid, child.pid!)) && /serving at/.test(output)) {
        recordTestSecret(endpoint.access_key);
        serverPid = endpoint.pid;
        return { url: endpoint.url, port: endpoint.port, accessKey: endpoint.access_key, child, pid: endpoint.pid, output: () => output, exited };
      }
    } catch {
      // not written yet
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  child.kill('SIGKILL');
  throw new Error(`ferry serve did not publish endpoint.json in time:\n${output}`);
}

/** Whether `pid` is the server `launcher` runs: the launcher itself, or its child. */
export async function isServerOf(pid: number, launcher: number): Promise<boolean> {
  if (pid === launcher) return true;
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  return Number(/^PPid:\s+(\d+)/m.exec(status)?.[1]) === launcher;
}

/**
 * Waits (up to 10 s) until a process has ended: gone, or a zombie nobody has reaped yet (its
 * launcher was killed, so init reaps it in its own time). A server whose launcher was killed
 * kills itself within milliseconds (relaunch.ts); a test starting the next one waits for that.
 */
async function processGone(pid: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
    const state = /^State:\s+(\S)/m.exec(status)?.[1];
    if (state === undefined || state === 'Z' || state === 'X') return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export async function fileMode(file: string): Promise<number> {
  return (await stat(file)).mode & 0o777;
}

// ---------------------------------------------------------------------------------------
// The whole test run's server logs (issue #9: "no token or key in any log line"). When
// FERRY_TEST_LOG_DIR is set (scripts/test.mjs), every server a test starts leaves its log
// there — child processes' stdout/stderr, the in-process harness's error log, request
// lines and error bodies — and the keys it used are listed in secrets.list; afterwards
// `node scripts/check-log-leaks.mjs <dir>` looks for every recorded key and every literal
// test token in every log. Unset, nothing is written and nothing changes.

/** The folder the test run's server logs go to, or null when not capturing. */
export function testLogDir(): string | null {
  const dir = process.env.FERRY_TEST_LOG_DIR;
  if (!dir) return null;
  mkdirSync(dir, { recursive: true, mode: 0o700 }); // secrets.list holds keys
  return dir;
}

/** A fresh log file for one server (`<kind>-<pid>-<random>.log`), or null when not capturing. */
export function testLogFile(kind: string): string | null {
  const dir = testLogDir();
  return dir ? path.join(dir, `${kind}-${process.pid}-${randomBytes(4).toString('hex')}.log`) : null;
}

/** Adds a key or token a server was given to the list the leak check looks for. */
export function recordTestSecret(secret: string): void {
  const dir = testLogDir();
  if (dir && secret) appendFileSync(path.join(dir, 'secrets.list'), `${secret}\n`, { mode: 0o600 });
}

/** Copies a child's stdout and stderr into a log file of the run (as well as wherever they go now). */
export function teeToTestLog(child: ChildProcess, kind: string): void {
  const file = testLogFile(kind);
  if (!file) return;
  const log = createWriteStream(file, { flags: 'a' });
  log.on('error', () => {}); // the log is a witness, never a reason for a test to fail
  child.stdout?.on('data', (chunk: Buffer) => log.write(chunk));
  child.stderr?.on('data', (chunk: Buffer) => log.write(chunk));
  child.once('close', () => log.end());
}
