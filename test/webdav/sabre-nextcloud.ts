import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serveWebdav, startOnFreePort, type RealWebdav } from './process.js';

/**
 * A real SabreDAV server (Debian's php-sabre-dav, the library Nextcloud's WebDAV is built
 * on) behind PHP's built-in web server, with Nextcloud's file-name rules and X-OC-MTime
 * handling added by a plugin (sabre-nextcloud/router.php says which Nextcloud source each
 * rule comes from). Its URL has Nextcloud's shape: /remote.php/dav/files/<user>/.
 * CI needs the apt packages `php-cli`, `php-xml` and `php-sabre-dav`.
 */
const PHP = '/usr/bin/php';
const SABRE = '/usr/share/php/Sabre/autoload.php';
const ROUTER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'sabre-nextcloud', 'router.php');

export function sabreUnavailableReason(): string | null {
  if (!existsSync(PHP)) return `${PHP} is missing (apt-get install php-cli php-xml)`;
  if (!existsSync(SABRE)) return `${SABRE} is missing (apt-get install php-sabre-dav)`;
  return null;
}

export async function startSabreNextcloud(): Promise<RealWebdav> {
  const reason = sabreUnavailableReason();
  if (reason) throw new Error(`SabreDAV cannot run: ${reason}`);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-sabre-'));
  const dataDir = path.join(dir, 'data');
  await mkdir(dataDir);
  const username = 'alice';
  const password = `pw-${Math.random().toString(36).slice(2)}`;
  return serveWebdav(
    dir,
    { username, password, dataDir },
    () =>
      startOnFreePort('php -S (SabreDAV)', (port) =>
        spawn(PHP, ['-d', 'display_errors=0', '-d', 'post_max_size=0', '-d', 'upload_max_filesize=0', '-S', `127.0.0.1:${port}`, ROUTER], {
          stdio: ['ignore', 'ignore', 'pipe'],
          // its own process group, which stopChild ends whole: PHP's workers outlive a parent killed alone
          detached: true,
          env: { PATH: process.env.PATH, PHP_CLI_SERVER_WORKERS: '4', FERRY_DAV_ROOT: dataDir, FERRY_DAV_USER: username, FERRY_DAV_PASSWORD: password },
        }),
      ),
    (port) => `http://127.0.0.1:${port}/remote.php/dav/files/${username}/`,
  );
}
