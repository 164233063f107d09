import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { serveWebdav, startOnFreePort, type RealWebdav } from './process.js';

/**
 * A second, independent real WebDAV server: `rclone serve webdav` (Go, golang.org/x/net/webdav
 * under rclone's VFS) over a temp folder, Basic auth, loopback, random port. CI needs the apt
 * package `rclone`. Run with no rclone config (RCLONE_CONFIG points nowhere), so nothing of
 * the machine's own remotes is read, and with no directory cache, so files a test puts on
 * disk directly are seen at once.
 */
const RCLONE = '/usr/bin/rclone';

export function rcloneUnavailableReason(): string | null {
  return existsSync(RCLONE) ? null : `${RCLONE} is missing (apt-get install rclone)`;
}

export async function startRcloneWebdav(): Promise<RealWebdav> {
  const reason = rcloneUnavailableReason();
  if (reason) throw new Error(`rclone serve webdav cannot run: ${reason}`);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-rclone-'));
  const dataDir = path.join(dir, 'data');
  await mkdir(dataDir);
  const username = 'alice';
  const password = `pw-${Math.random().toString(36).slice(2)}`;
  return serveWebdav(
    dir,
    { username, password, dataDir },
    () =>
      startOnFreePort('rclone serve webdav', (port) =>
        spawn(RCLONE, ['serve', 'webdav', dataDir, '--addr', `127.0.0.1:${port}`, '--user', username, '--pass', password, '--log-level', 'ERROR', '--dir-cache-time', '0s'], {
          stdio: ['ignore', 'ignore', 'pipe'],
          env: { ...process.env, RCLONE_CONFIG: path.join(dir, 'no-rclone.conf') },
        }),
      ),
    (port) => `http://127.0.0.1:${port}/`,
  );
}
