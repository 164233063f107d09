import type { ChildProcess } from 'node:child_process';
import { rm } from 'node:fs/promises';
import net from 'node:net';

/**
 * What every real WebDAV server the tests start shares: a free loopback port, waiting until
 * the server listens (or has died, with its stderr), and stopping it.
 */
export interface RealWebdav {
  /** the DAV root, ending in '/' */
  url: string;
  username: string;
  password: string;
  /** the folder on disk the server serves */
  dataDir: string;
  stop(): Promise<void>;
}

/**
 * A started WebDAV server as the tests see it: `stop()` ends the process, then removes its
 * scratch folder `dir` (which holds `dataDir`). A failed start removes `dir` too.
 */
export async function serveWebdav(
  dir: string,
  fields: Omit<RealWebdav, 'url' | 'stop'>,
  start: () => Promise<StartedServer>,
  urlAt: (port: number) => string,
): Promise<RealWebdav> {
  let started: StartedServer;
  try {
    started = await start();
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  const { child, port } = started;
  return {
    ...fields,
    url: urlAt(port),
    stop: async () => {
      await stopChild(child);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export async function waitForPort(name: string, port: number, child: ChildProcess, stderr: () => string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}: ${stderr().trim()}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${name} did not listen on port ${port} within 15 s: ${stderr().trim()}`);
}

export interface StartedServer {
  child: ChildProcess;
  port: number;
  /** what the server wrote to stderr so far */
  stderr: () => string;
}

/**
 * Starts a server on a free loopback port and waits until it listens. Another process can
 * take the port between freePort() and the server's bind, so a start that failed with
 * "address already in use" (in its stderr, or in `log()` for a server that logs elsewhere,
 * like Apache) tries again on a new port, three times at most; any other failure is thrown.
 */
export async function startOnFreePort(
  name: string,
  spawnAt: (port: number) => ChildProcess | Promise<ChildProcess>,
  log: () => Promise<string> = async () => '',
): Promise<StartedServer> {
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const child = await spawnAt(port);
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    try {
      await waitForPort(name, port, child, () => stderr);
      return { child, port, stderr: () => stderr };
    } catch (error) {
      lastError = error;
      await stopChild(child);
      if (!/address already in use/i.test((await log()) + stderr)) break;
    }
  }
  throw lastError;
}

/**
 * SIGTERM, then SIGKILL after 5 s; resolves once the process has exited. A child started with
 * `detached: true` leads a process group of its own, and the whole group is signalled: a server
 * that forks workers (PHP's built-in server with PHP_CLI_SERVER_WORKERS) would otherwise leave
 * them running after the test.
 */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const signal = (name: NodeJS.Signals) => {
    try {
      // a negative pid is the group the child leads; there is none unless it was started detached
      if (child.pid !== undefined) return process.kill(-child.pid, name);
    } catch {
      // no such group: the child alone
    }
    child.kill(name);
  };
  signal('SIGTERM');
  const timer = setTimeout(() => signal('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}
