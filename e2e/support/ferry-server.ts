// A real `ferry serve` per test: fresh data dir and workspace in temp folders, port 0,
// the URL and access key read from endpoint.json. Stopped (its own pid only) afterwards.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, createWriteStream, existsSync, mkdirSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface RunningServer {
  url: string;
  accessKey: string;
  dataDir: string;
  workspace: string;
  /** the page address with the key in the fragment */
  appUrl: string;
  output: () => string;
  stop(): Promise<void>;
}

export function assertBuilt(): void {
  const missing = ['out/main/cli.js', 'out/renderer/index.html'].filter((p) => !existsSync(path.join(ROOT, p)));
  if (missing.length) throw new Error(`Ferry is not built (missing ${missing.join(', ')}): run \`npm run build\` first.`);
}

/** Writes files (relative path → content) into a folder; a trailing "/" makes an empty folder. */
export async function seed(root: string, files: Record<string, string | Buffer>): Promise<void> {
  for (const [relative, content] of Object.entries(files)) {
    const target = path.join(root, relative);
    if (relative.endsWith('/')) {
      await mkdir(target, { recursive: true });
      continue;
    }
    await mkdir(path.dirname(target), { recursive: true });
    await writeFile(target, content);
  }
}

export async function startServer(options: { workspaceFiles?: Record<string, string | Buffer>; extraArgs?: string[] } = {}): Promise<RunningServer> {
  assertBuilt();
  const base = await mkdtemp(path.join(os.tmpdir(), 'ferry-e2e-'));
  const dataDir = path.join(base, 'data');
  const workspace = path.join(base, 'workspace');
  await mkdir(workspace, { recursive: true });
  await seed(workspace, options.workspaceFiles ?? {});
  let log = '';
  const child: ChildProcess = spawn(
    process.execPath,
    ['bin/ferry.js', 'serve', '--port', '0', '--data-dir', dataDir, '--workspace', workspace, ...(options.extraArgs ?? [])],
    {
      cwd: ROOT,
      // no OS keychain in CI: the core falls back to memory and says so
      env: { ...process.env, DBUS_SESSION_BUS_ADDRESS: 'disabled:' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  child.stdout!.on('data', (chunk) => (log += chunk));
  child.stderr!.on('data', (chunk) => (log += chunk));
  const runLog = openRunLog(child);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  const stop = async () => {
    if (child.exitCode === null && child.pid) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    await rm(base, { recursive: true, force: true });
  };

  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`ferry serve exited (${child.exitCode}):\n${log}`);
    }
    if (/Ferry is serving at/.test(log)) {
      try {
        const endpoint = JSON.parse(await readFile(path.join(dataDir, 'endpoint.json'), 'utf8')) as {
          url: string;
          pid: number;
          access_key: string;
        };
        // bin/ferry.js serve runs the server in a child with the memory settings (electron/launch/)
        if (endpoint.pid === child.pid || (await parentOf(endpoint.pid)) === child.pid) {
          runLog?.recordSecret(endpoint.access_key);
          return {
            url: endpoint.url,
            accessKey: endpoint.access_key,
            dataDir,
            workspace,
            appUrl: `${endpoint.url.replace(/\/?$/, '/')}#key=${endpoint.access_key}`,
            output: () => log,
            stop,
          };
        }
      } catch {
        /* not written yet */
      }
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`ferry serve did not come up in 20 s:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * FERRY_TEST_LOG_DIR (set by scripts/test.mjs): the server's stdout/stderr also go to a log
 * file there and its access key to secrets.list, so `node scripts/check-log-leaks.mjs <dir>`
 * can prove no key or token reached a log (the same as test/support/ferry-process.ts does
 * for the Vitest side; kept here so the e2e project needs nothing from test/).
 */
function openRunLog(child: ChildProcess): { recordSecret(secret: string): void } | null {
  const dir = process.env.FERRY_TEST_LOG_DIR;
  if (!dir) return null;
  mkdirSync(dir, { recursive: true, mode: 0o700 }); // secrets.list holds keys
  const file = createWriteStream(path.join(dir, `e2e-serve-${process.pid}-${randomBytes(4).toString('hex')}.log`), { flags: 'a' });
  file.on('error', () => {});
  child.stdout!.on('data', (chunk: Buffer) => file.write(chunk));
  child.stderr!.on('data', (chunk: Buffer) => file.write(chunk));
  child.once('close', () => file.end());
  return { recordSecret: (secret) => appendFileSync(path.join(dir, 'secrets.list'), `${secret}\n`, { mode: 0o600 }) };
}

/** A process's parent pid, from /proc (undefined when it is gone). */
async function parentOf(pid: number): Promise<number | undefined> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const parent = /^PPid:\s+(\d+)/m.exec(status)?.[1];
  return parent === undefined ? undefined : Number(parent);
}
