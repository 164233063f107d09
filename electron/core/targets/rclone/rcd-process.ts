import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { accessSync, constants } from 'node:fs';
import path from 'node:path';
import type { RcEndpoint } from './rc-client.js';

// Ferry's own rclone engine: `rclone rcd` as a child process, listening on a loopback port
// the kernel picks, with a random user and password that only Ferry knows. They reach
// rclone through its environment (RCLONE_RC_USER / RCLONE_RC_PASS, rclone's flag-to-env
// mapping), not its command line, which every local user can read in /proc; the process's
// environment is readable only by its owner. `--rc-serve` lets Ferry stream objects.

export const RCLONE_MISSING =
  'rclone is not installed, so Ferry cannot reach S3, SFTP, Google Drive and the other rclone remotes. ' +
  'Install it (Linux: `sudo apt install rclone` or rclone.org/install; macOS: `brew install rclone`; Windows: `winget install Rclone.Rclone`), ' +
  'or set FERRY_RCLONE to the rclone program, then restart Ferry.';

/** The rclone program: FERRY_RCLONE when set, else the first `rclone` on PATH; null when there is none. */
export function findRclone(env: NodeJS.ProcessEnv = process.env): string | null {
  const configured = env.FERRY_RCLONE;
  if (configured) return isExecutable(configured) ? configured : null;
  const names = process.platform === 'win32' ? ['rclone.exe'] : ['rclone'];
  for (const dir of (env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    for (const name of names) {
      const candidate = path.join(dir, name);
      if (isExecutable(candidate)) return candidate;
    }
  }
  return null;
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export interface RcdProcess {
  endpoint: RcEndpoint;
  stop(): Promise<void>;
}

export interface RcdOptions {
  binary: string;
  /**
   * the rclone config file whose remotes Ferry shows (default: rclone's own default); ''
   * for a config in memory only (`--config ""`: rclone reads and writes no file)
   */
  configPath?: string;
  /** how long rcd may take to start listening */
  startTimeoutMs?: number;
  /** the environment rcd runs in (default: Ferry's own) */
  env?: NodeJS.ProcessEnv;
}

/** Starts `rclone rcd` on loopback and resolves once it listens. */
export function startRcd(options: RcdOptions): Promise<RcdProcess> {
  const user = `ferry-${randomBytes(6).toString('hex')}`;
  const password = randomBytes(32).toString('hex');
  const args = ['rcd', '--rc-addr', '127.0.0.1:0', '--rc-serve', '--log-level', 'NOTICE'];
  if (options.configPath !== undefined) args.push('--config', options.configPath);
  const [program, argv] = endingWithFerry(options.binary, args);
  const child = spawn(program, argv, {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...(options.env ?? process.env), RCLONE_RC_USER: user, RCLONE_RC_PASS: password },
  });
  return new Promise<RcdProcess>((resolve, reject) => {
    let said = '';
    const timer = setTimeout(() => fail(new Error(`rclone rcd did not start listening within ${(options.startTimeoutMs ?? 15_000) / 1000} s.`)), options.startTimeoutMs ?? 15_000);
    const fail = (error: Error) => {
      clearTimeout(timer);
      child.kill('SIGTERM');
      reject(error);
    };
    child.once('error', (error) => fail(new Error(`rclone could not be started: ${error.message}`)));
    child.once('exit', (code) => fail(new Error(`rclone rcd stopped at start (exit ${code}): ${said.trim().split('\n').slice(-2).join(' ')}`)));
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => {
      if (said.length < 64 * 1024) said += chunk;
      const listening = /Serving remote control on (http:\/\/127\.0\.0\.1:\d+\/)/.exec(said);
      if (!listening) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      child.stderr!.removeAllListeners('data');
      child.stderr!.resume();
      resolve({ endpoint: { url: listening[1]!, user, password }, stop: () => stopChild(child) });
    });
  });
}

/** util-linux's setpriv (Debian's util-linux, always installed there) */
const SETPRIV = '/usr/bin/setpriv';

/**
 * rcd ends with Ferry even when Ferry is killed and cannot stop it (a crash, SIGKILL), rather
 * than run on with its password until the machine restarts: on Linux it is started through
 * `setpriv --pdeathsig TERM`, which asks the kernel for a SIGTERM when the thread that started
 * it ends (PR_SET_PDEATHSIG, kept across the exec of rclone; Ferry starts it from its main
 * thread). Elsewhere, or without setpriv, rclone is started as it is and outlives a killed Ferry.
 */
function endingWithFerry(binary: string, args: string[]): [string, string[]] {
  return process.platform === 'linux' && isExecutable(SETPRIV) ? [SETPRIV, ['--pdeathsig', 'TERM', '--', binary, ...args]] : [binary, args];
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => child.kill('SIGKILL'), 3000);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
