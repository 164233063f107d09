import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, chown, mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { serveWebdav, startOnFreePort, type RealWebdav } from './process.js';

/**
 * A real WebDAV server for tests: Debian's Apache httpd with mod_dav / mod_dav_fs, Basic
 * auth from an htpasswd file, everything (config, data, lock DB, pid, logs) in one temp
 * dir, run in the foreground (`-X`) as a child process and stopped by `stop()`.
 * CI needs the apt packages `apache2` (httpd + modules) and `apache2-utils` (htpasswd).
 */
export type ApacheWebdav = RealWebdav & {
  /** one line a request, as Apache logs it: `<method> <path> <Destination header or -> <status>` */
  accessLog: string;
};

const APACHE = '/usr/sbin/apache2';
const MODULES = '/usr/lib/apache2/modules';
const HTPASSWD = '/usr/bin/htpasswd';
const run = promisify(execFile);

/** Why the server cannot run here, or null when it can. */
export function apacheUnavailableReason(): string | null {
  if (!existsSync(APACHE)) return `${APACHE} is missing (apt-get install apache2)`;
  if (!existsSync(HTPASSWD)) return `${HTPASSWD} is missing (apt-get install apache2-utils)`;
  for (const module of ['mod_dav.so', 'mod_dav_fs.so', 'mod_auth_basic.so', 'mod_mpm_event.so']) {
    if (!existsSync(path.join(MODULES, module))) return `${module} is missing from ${MODULES}`;
  }
  return null;
}

export interface ApacheOptions {
  /**
   * How htpasswd stores the password, which Apache checks on every request (Basic auth has no
   * session): `bcrypt` (`htpasswd -B`, cost 5; the default here) or `md5` (`htpasswd -m`, APR1
   * MD5: htpasswd 2.4's own default). bcrypt is the point of bcrypt, slow: ~2 ms of Apache's CPU
   * a request on the bench's cores; the latency bench uses md5 (bench/README.md).
   */
  passwordHash?: 'bcrypt' | 'md5';
}

export async function startApacheWebdav(options: ApacheOptions = {}): Promise<ApacheWebdav> {
  const reason = apacheUnavailableReason();
  if (reason) throw new Error(`Apache WebDAV cannot run: ${reason}`);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-webdav-'));
  const dataDir = path.join(dir, 'data');
  const lockDir = path.join(dir, 'lock');
  await mkdir(dataDir);
  await mkdir(lockDir);
  const username = 'alice';
  const password = `pw-${Math.random().toString(36).slice(2)}`;
  await run(HTPASSWD, ['-b', '-c', options.passwordHash === 'md5' ? '-m' : '-B', path.join(dir, 'htpasswd'), username, password]);

  // httpd refuses to serve as root: as root its workers switch to nobody, who must own the data.
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'nobody']);
    const uid = Number(stdout.trim());
    for (const p of [dataDir, lockDir]) await chown(p, uid, -1);
    await chmod(dir, 0o755);
    await chmod(path.join(dir, 'htpasswd'), 0o644);
  }

  const conf = path.join(dir, 'httpd.conf');
  const served = await serveWebdav(
    dir,
    { username, password, dataDir },
    () =>
      startOnFreePort(
        'apache2',
        async (port) => {
          await writeFile(conf, config({ dir, dataDir, lockDir, port, asRoot }));
          return spawn(APACHE, ['-X', '-d', dir, '-f', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
        },
        () => readFile(path.join(dir, 'error.log'), 'utf8').catch(() => ''),
      ),
    (port) => `http://127.0.0.1:${port}/dav/`,
  );
  return { ...served, accessLog: path.join(dir, 'access.log') };
}

function config(o: { dir: string; dataDir: string; lockDir: string; port: number; asRoot: boolean }): string {
  return [
    `ServerRoot "${o.dir}"`,
    `Listen 127.0.0.1:${o.port}`,
    'ServerName 127.0.0.1',
    `PidFile "${o.dir}/httpd.pid"`,
    `ErrorLog "${o.dir}/error.log"`,
    'LogLevel warn',
    `CustomLog "${o.dir}/access.log" "%m %U %{Destination}i %>s"`,
    `LoadModule mpm_event_module ${MODULES}/mod_mpm_event.so`,
    `LoadModule authn_core_module ${MODULES}/mod_authn_core.so`,
    `LoadModule authn_file_module ${MODULES}/mod_authn_file.so`,
    `LoadModule authz_core_module ${MODULES}/mod_authz_core.so`,
    `LoadModule authz_user_module ${MODULES}/mod_authz_user.so`,
    `LoadModule auth_basic_module ${MODULES}/mod_auth_basic.so`,
    `LoadModule alias_module ${MODULES}/mod_alias.so`,
    `LoadModule dav_module ${MODULES}/mod_dav.so`,
    `LoadModule dav_fs_module ${MODULES}/mod_dav_fs.so`,
    ...(o.asRoot ? ['User nobody', 'Group nogroup'] : []),
    `DavLockDB "${o.lockDir}/DavLock"`,
    `DocumentRoot "${o.lockDir}"`,
    `Alias /dav "${o.dataDir}"`,
    `<Directory "${o.dataDir}">`,
    '  Dav On',
    '  Options None',
    '  AllowOverride None',
    '  AuthType Basic',
    '  AuthName "Ferry WebDAV test"',
    `  AuthUserFile "${o.dir}/htpasswd"`,
    '  Require valid-user',
    '</Directory>',
    '',
  ].join('\n');
}
