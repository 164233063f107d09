import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { findRclone } from '../../electron/core/targets/rclone/index.js';
import { freePort, stopChild, waitForPort } from '../webdav/process.js';

// Real servers for the rclone targets' tests, all on loopback with throwaway credentials:
// OpenSSH's sshd (Debian's openssh-server) for SFTP and s3rver (npm) for S3; WebDAV servers
// are test/webdav's. Nothing here emulates a service: each is the server people run, or one its
// authors wrote to the service's spec.

const run = promisify(execFile);
const SSHD = '/usr/sbin/sshd';

/** Why the rclone tests cannot run here, or null when they can. */
export function rcloneUnavailableReason(): string | null {
  return findRclone() ? null : 'no rclone program (apt-get install rclone)';
}

export function sshdUnavailableReason(): string | null {
  if (!existsSync(SSHD)) return `${SSHD} is missing (apt-get install openssh-server)`;
  if (!existsSync('/usr/bin/ssh-keygen')) return 'ssh-keygen is missing (apt-get install openssh-client)';
  return null;
}

export interface RunningServer {
  stop(): Promise<void>;
}

export interface SftpServer extends RunningServer {
  port: number;
  user: string;
  keyFile: string;
  /** a folder the login may write, served as the SFTP remote's root */
  root: string;
}

/**
 * OpenSSH's sshd in the foreground (-D), on a free loopback port, with a new host key and a
 * new user key, logging in as the user running the tests (as root too, key only).
 */
export async function startSftpServer(): Promise<SftpServer> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-sshd-'));
  const root = path.join(dir, 'files');
  await mkdir(root);
  const hostKey = path.join(dir, 'host_ed25519');
  const keyFile = path.join(dir, 'user_ed25519');
  await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', hostKey]);
  await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', keyFile]);
  const authorized = path.join(dir, 'authorized_keys');
  await writeFile(authorized, await import('node:fs/promises').then(({ readFile }) => readFile(`${keyFile}.pub`)));
  await chmod(authorized, 0o600);
  await chmod(dir, 0o700);
  const port = await freePort();
  const user = os.userInfo().username;
  const config = path.join(dir, 'sshd_config');
  await writeFile(
    config,
    [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${hostKey}`,
      `PidFile ${path.join(dir, 'sshd.pid')}`,
      `AuthorizedKeysFile ${authorized}`,
      'PermitRootLogin prohibit-password',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'UsePAM no',
      'StrictModes no',
      `AllowUsers ${user}`,
      'Subsystem sftp internal-sftp',
      '',
    ].join('\n'),
  );
  // privilege separation wants its empty directory (Debian's unit file makes it at boot)
  if (process.getuid?.() === 0) await mkdir('/run/sshd', { recursive: true, mode: 0o755 });
  const child = spawn(SSHD, ['-D', '-e', '-f', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  await waitForPort('sshd', port, child, () => stderr);
  return {
    port,
    user,
    keyFile,
    root,
    stop: async () => {
      await stopChild(child);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export interface S3Server extends RunningServer {
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  bucket: string;
  /**
   * Every object the server created or removed, in order, as its S3 event notifications name
   * them: `ObjectCreated:Put` (an upload), `ObjectCreated:Copy` (a server-side copy, as
   * rclone's move is), `ObjectCreated:Post` (a multipart upload completed), `ObjectRemoved:Delete`.
   */
  events: { name: string; bucket: string; key: string }[];
}

/** s3rver (npm) on a free port with one bucket, its files in a new folder. */
export async function startS3Server(): Promise<S3Server> {
  const directory = await mkdtemp(path.join(os.tmpdir(), 'ferry-s3-'));
  const port = await freePort();
  const { default: S3rver } = await import('s3rver');
  const bucket = 'research';
  const server = new S3rver({ port, address: '127.0.0.1', silent: true, directory, configureBuckets: [{ name: bucket }] });
  const events: S3Server['events'] = [];
  server.on('event', (event) => {
    for (const record of event.Records) events.push({ name: record.eventName, bucket: record.s3.bucket.name, key: record.s3.object.key });
  });
  await server.run();
  return {
    events,
    endpoint: `http://127.0.0.1:${port}`,
    // s3rver's fixed development credentials (its README): not a secret of anyone's
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
    bucket,
    stop: async () => {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

/** An rclone config file for the given remotes (name → options), readable by its owner only. */
export async function writeRcloneConfig(dir: string, remotes: Record<string, Record<string, string>>): Promise<string> {
  const file = path.join(dir, 'rclone.conf');
  const text = Object.entries(remotes)
    .map(([name, options]) => [`[${name}]`, ...Object.entries(options).map(([key, value]) => `${key} = ${value}`), ''].join('\n'))
    .join('\n');
  await writeFile(file, text, { mode: 0o600 });
  return file;
}

/** rclone's "obscured" form of a password, as its config file holds them. */
export async function obscure(password: string): Promise<string> {
  const { stdout } = await run(findRclone()!, ['obscure', password]);
  return stdout.trim();
}
