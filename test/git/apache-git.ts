import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startOnFreePort, stopChild, type StartedServer } from '../webdav/process.js';

/**
 * A real git smart-HTTP server for tests: Debian's `git http-backend` (the CGI git itself
 * ships) behind Debian's Apache httpd with mod_cgi, Basic auth from an htpasswd file, and
 * receive-pack enabled (http-backend enables it for an authenticated REMOTE_USER). Everything
 * (config, bare repositories, logs) lives in one temp dir; httpd runs in the foreground
 * (`-DFOREGROUND`, a few prefork workers) as a child process, stopped by `stop()`. The access log has one line per request,
 * so a test can count exactly what a push cost. CI needs the apt packages `apache2`,
 * `apache2-utils` and `git`.
 */
export interface ApacheGit {
  /** http://127.0.0.1:PORT/git/ ; a repository named r is at `${base}r.git` */
  base: string;
  username: string;
  password: string;
  /** a bare repository on disk, created empty with `main` as its HEAD */
  createRepo(name: string, files?: Record<string, string | Buffer>): Promise<string>;
  /** runs git (as root or not) on the server's copy of a repository */
  git(name: string, ...args: string[]): Promise<string>;
  /** pushes a commit adding `files` over HTTP, as another client would */
  pushFromElsewhere(name: string, files: Record<string, string>): Promise<void>;
  /** request lines ("METHOD /path?query STATUS") since the last call */
  takeRequests(): Promise<string[]>;
  stop(): Promise<void>;
}

const APACHE = '/usr/sbin/apache2';
const MODULES = '/usr/lib/apache2/modules';
const HTPASSWD = '/usr/bin/htpasswd';
const BACKEND = '/usr/lib/git-core/git-http-backend';
const run = promisify(execFile);

/** Why the server cannot run here, or null when it can. */
export function apacheGitUnavailableReason(): string | null {
  if (!existsSync(APACHE)) return `${APACHE} is missing (apt-get install apache2)`;
  if (!existsSync(HTPASSWD)) return `${HTPASSWD} is missing (apt-get install apache2-utils)`;
  if (!existsSync(BACKEND)) return `${BACKEND} is missing (apt-get install git)`;
  for (const module of ['mod_cgi.so', 'mod_env.so', 'mod_alias.so', 'mod_auth_basic.so', 'mod_mpm_prefork.so']) {
    if (!existsSync(path.join(MODULES, module))) return `${module} is missing from ${MODULES}`;
  }
  return null;
}

const GIT_ENV = { ...process.env, GIT_AUTHOR_NAME: 'Seed', GIT_AUTHOR_EMAIL: 'seed@example.org', GIT_COMMITTER_NAME: 'Seed', GIT_COMMITTER_EMAIL: 'seed@example.org', GIT_CONFIG_NOSYSTEM: '1', HOME: os.tmpdir() };

export async function startApacheGit(): Promise<ApacheGit> {
  const reason = apacheGitUnavailableReason();
  if (reason) throw new Error(`Apache git http-backend cannot run: ${reason}`);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-githttp-'));
  const repos = path.join(dir, 'repos');
  await mkdir(repos);
  const username = 'alice';
  const password = `pw-${Math.random().toString(36).slice(2)}`;
  await run(HTPASSWD, ['-b', '-c', '-B', path.join(dir, 'htpasswd'), username, password]);
  // httpd refuses to serve as root: as root its worker runs as nobody, who must own the repositories
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    await chmod(dir, 0o755);
    await chmod(path.join(dir, 'htpasswd'), 0o644);
  }
  const giveToServer = async () => {
    if (asRoot) await run('chown', ['-R', 'nobody', repos]);
  };
  await giveToServer();
  const git = async (cwd: string, ...args: string[]) => (await run('git', ['-c', 'safe.directory=*', '-c', 'init.defaultBranch=main', ...args], { cwd, env: GIT_ENV, maxBuffer: 64 * 1024 * 1024 })).stdout;
  let logged = 0;

  const conf = path.join(dir, 'httpd.conf');
  let started: StartedServer;
  try {
    started = await startOnFreePort(
      'apache2',
      async (port) => {
        await writeFile(conf, config({ dir, repos, port, asRoot }));
        // its own process group: on SIGTERM prefork's parent signals its whole group (ap_unixd_killpg), which must not include the test runner
        return spawn(APACHE, ['-DFOREGROUND', '-d', dir, '-f', conf], { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
      },
      () => readFile(path.join(dir, 'error.log'), 'utf8').catch(() => ''),
    );
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  const { child, port } = started;
  const base = `http://127.0.0.1:${port}/git/`;
  return {
    base,
    username,
    password,
    async createRepo(name, files = {}) {
      const bare = path.join(repos, `${name}.git`);
      await git(repos, 'init', '--bare', '-q', bare);
      if (Object.keys(files).length) {
        const work = await mkdtemp(path.join(os.tmpdir(), 'ferry-gitseed-'));
        await git(work, 'init', '-q');
        for (const [file, content] of Object.entries(files)) {
          await mkdir(path.dirname(path.join(work, file)), { recursive: true });
          await writeFile(path.join(work, file), content);
        }
        await git(work, 'add', '-A');
        await git(work, 'commit', '-q', '-m', 'seed');
        await git(work, 'push', '-q', bare, 'HEAD:refs/heads/main');
        await rm(work, { recursive: true, force: true });
      }
      await giveToServer();
      return `${base}${name}.git`;
    },
    git: (name, ...args) => git(path.join(repos, `${name}.git`), ...args),
    async pushFromElsewhere(name, files) {
      const work = await mkdtemp(path.join(os.tmpdir(), 'ferry-gitother-'));
      const url = `http://${username}:${password}@127.0.0.1:${port}/git/${name}.git`;
      await git(work, 'clone', '-q', url, '.');
      for (const [file, content] of Object.entries(files)) {
        await mkdir(path.dirname(path.join(work, file)), { recursive: true });
        await writeFile(path.join(work, file), content);
      }
      await git(work, 'add', '-A');
      await git(work, 'commit', '-q', '-m', 'someone else');
      await git(work, 'push', '-q', 'origin', 'HEAD:refs/heads/main');
      await rm(work, { recursive: true, force: true });
    },
    async takeRequests() {
      // httpd logs a request after answering it: wait until the log stops growing
      const read = async () => (await readFile(path.join(dir, 'access.log'), 'utf8').catch(() => '')).split('\n').filter(Boolean);
      let lines = await read();
      for (let settled = 0; settled < 3; ) {
        await new Promise((r) => setTimeout(r, 50));
        const again = await read();
        settled = again.length === lines.length ? settled + 1 : 0;
        lines = again;
      }
      const fresh = lines.slice(logged);
      logged = lines.length;
      return fresh;
    },
    stop: async () => {
      await stopChild(child);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

// several workers: a test may push from another client while Ferry's own push is in flight
function config(o: { dir: string; repos: string; port: number; asRoot: boolean }): string {
  return [
    `ServerRoot "${o.dir}"`,
    `Listen 127.0.0.1:${o.port}`,
    'ServerName 127.0.0.1',
    `PidFile "${o.dir}/httpd.pid"`,
    `ErrorLog "${o.dir}/error.log"`,
    'LogLevel warn',
    'StartServers 3',
    'MinSpareServers 2',
    'MaxSpareServers 4',
    `LoadModule mpm_prefork_module ${MODULES}/mod_mpm_prefork.so`,
    `LoadModule authn_core_module ${MODULES}/mod_authn_core.so`,
    `LoadModule authn_file_module ${MODULES}/mod_authn_file.so`,
    `LoadModule authz_core_module ${MODULES}/mod_authz_core.so`,
    `LoadModule authz_user_module ${MODULES}/mod_authz_user.so`,
    `LoadModule auth_basic_module ${MODULES}/mod_auth_basic.so`,
    `LoadModule alias_module ${MODULES}/mod_alias.so`,
    `LoadModule env_module ${MODULES}/mod_env.so`,
    `LoadModule cgi_module ${MODULES}/mod_cgi.so`,
    ...(o.asRoot ? ['User nobody', 'Group nogroup'] : []),
    'LogFormat "%m %U%q %>s" requests',
    `CustomLog "${o.dir}/access.log" requests`,
    `DocumentRoot "${o.repos}"`,
    `SetEnv GIT_PROJECT_ROOT "${o.repos}"`,
    'SetEnv GIT_HTTP_EXPORT_ALL 1',
    `SetEnv HOME "${o.dir}"`,
    `ScriptAlias /git/ ${BACKEND}/`,
    '<Location /git/>',
    '  AuthType Basic',
    '  AuthName "Ferry git test"',
    `  AuthUserFile "${o.dir}/htpasswd"`,
    '  Require valid-user',
    '</Location>',
    '',
  ].join('\n');
}
