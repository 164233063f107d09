// Issue #9 part 5, the local attack surface the earlier review (README.md) left open:
// - the API listens on loopback only: nothing answers on the machine's other addresses
//   (checked against a control listener that does answer there), and the kernel's socket
//   table shows the listener bound to 127.0.0.1;
// - `ferry serve --host 0.0.0.0` (the documented way to "tell it otherwise"): what an
//   address on the network can then reach;
// - endpoint.json and the data directory are unreadable for another user, proven from a
//   real other uid (runuser -u nobody), also when the data directory itself is loose;
// - scripts/check-log-leaks.mjs (the whole-run log check) finds a planted key or token.
import { spawnSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtCliAvailable, startFerryProcess, type FerryProcess } from '../support/ferry-process.js';

/** scripts/check-log-leaks.mjs (plain JS, run by scripts/test.mjs), typed here. */
interface LogCheck {
  logs: number;
  recorded: number;
  literal: number;
  hits: string[];
  problems: string[];
}
const leakScript = path.resolve('scripts/check-log-leaks.mjs');
const { checkLogs } = (await import(leakScript)) as { checkLogs(dir: string): LogCheck };

const built = builtCliAvailable();
const isRoot = process.getuid?.() === 0;
const runuserAvailable = spawnSync('sh', ['-c', 'command -v runuser']).status === 0;

/** The machine's own addresses that are not loopback (the ones a neighbour on the network would use). */
function externalAddresses(): string[] {
  return Object.values(os.networkInterfaces())
    .flat()
    .filter((info): info is os.NetworkInterfaceInfo => !!info && !info.internal && !(info.family === 'IPv6' && info.address.startsWith('fe80')))
    .map((info) => info.address);
}

function connectOutcome(address: string, port: number): Promise<'connected' | string> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: address, port, timeout: 3000 });
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve('timeout');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

/** LISTEN sockets on `port` from /proc/net/tcp{,6}, as "address" strings the kernel holds (hex). */
async function listeningAddresses(port: number): Promise<string[] | null> {
  const found: string[] = [];
  const portHex = port.toString(16).toUpperCase().padStart(4, '0');
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = await readFile(table, 'utf8');
    } catch {
      return null; // not Linux
    }
    for (const line of text.split('\n').slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      if (state === '0A' && local?.endsWith(`:${portHex}`)) found.push(local.slice(0, -5));
    }
  }
  return found;
}

function request(address: string, port: number, pathname: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: address, port, path: pathname, headers, timeout: 5000 }, (response) => {
      let body = '';
      response.on('data', (chunk) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function stop(ferry: FerryProcess | undefined): Promise<void> {
  if (!ferry || ferry.child.exitCode !== null) return;
  ferry.child.kill('SIGTERM');
  const timer = setTimeout(() => ferry.child.kill('SIGKILL'), 10_000);
  await ferry.exited;
  clearTimeout(timer);
}

describe('the API is reachable over loopback only', () => {
  let root: string;
  let ferry: FerryProcess;
  let control: net.Server;
  let controlPort: number;

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'ferry-surface-'));
    await mkdir(path.join(root, 'workspace'));
    ferry = await startFerryProcess({ dataDir: path.join(root, 'data'), workspace: path.join(root, 'workspace'), built });
    // a listener on every address: proves the machine's addresses do answer when bound
    control = net.createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => control.listen(0, '0.0.0.0', resolve));
    controlPort = (control.address() as net.AddressInfo).port;
  }, 60_000);
  afterAll(async () => {
    await stop(ferry);
    await new Promise((resolve) => control?.close(resolve));
    await rm(root, { recursive: true, force: true });
  });

  it('is bound to 127.0.0.1 in the kernel socket table', async () => {
    const bound = await listeningAddresses(ferry.port);
    if (bound === null) {
      console.log('surface: no /proc/net/tcp here; the socket table check is Linux only');
      return;
    }
    expect(bound).toEqual(['0100007F']); // 127.0.0.1, little-endian hex; no 0.0.0.0 and no IPv6 wildcard
    expect(ferry.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
  });

  it("refuses connections on the machine's other addresses (which do answer a listener bound to them)", async () => {
    const addresses = externalAddresses().filter((address) => net.isIPv4(address));
    console.log(`surface: non-loopback IPv4 addresses tried: ${addresses.join(', ') || 'none (this machine has only loopback)'}`);
    for (const address of addresses) {
      expect(await connectOutcome(address, controlPort), `control listener on ${address}`).toBe('connected');
      expect(await connectOutcome(address, ferry.port), `ferry on ${address}`).toBe('ECONNREFUSED');
    }
  });
});

describe('ferry serve --host 0.0.0.0', () => {
  let root: string;
  let ferry: FerryProcess;
  const address = externalAddresses().find((candidate) => net.isIPv4(candidate));

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'ferry-surface-'));
    await mkdir(path.join(root, 'workspace'));
    await writeFile(path.join(root, 'workspace', 'private.txt'), 'not for the network');
    ferry = await startFerryProcess({ dataDir: path.join(root, 'data'), workspace: path.join(root, 'workspace'), built, extraArgs: ['--host', '0.0.0.0'] });
  }, 60_000);
  afterAll(async () => {
    await stop(ferry);
    await rm(root, { recursive: true, force: true });
  });

  it('still refuses a request naming the network address as Host, and anything with data without the key', async () => {
    // the URL users are shown stays loopback
    expect(ferry.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    if (!address) {
      console.log('surface: this machine has no non-loopback IPv4 address; --host 0.0.0.0 checked over loopback only');
    }
    const from = address ?? '127.0.0.1';
    const own = await request(from, ferry.port, '/api_v1/targets/', { host: `${from}:${ferry.port}` });
    if (address) {
      expect(own.status).toBe(403);
      expect(JSON.parse(own.body)).toMatchObject({ code: 'gate_refused' });
    }
    // a neighbour who sends a loopback Host passes the gate (it is not a browser, so the
    // DNS-rebinding defence does not apply): the access key is then the only barrier
    const forged = { host: `127.0.0.1:${ferry.port}` };
    const listing = await request(from, ferry.port, '/api_v1/targets/local/resources/', forged);
    expect(listing.status).toBe(401);
    expect(listing.body).not.toContain('private.txt');
    const jobs = await request(from, ferry.port, '/api_v1/jobs/', forged);
    expect(jobs.status).toBe(401);
    const wrongKey = await request(from, ferry.port, '/api_v1/targets/local/resources/', { ...forged, 'service-source-token': 'x'.repeat(43) });
    expect(wrongKey.status).toBe(401);
    const warned = /reachable from other machines/.test(ferry.output());
    expect(warned).toBe(true);
    const open = await request(from, ferry.port, '/api_v1/targets/', forged);
    console.log(
      `surface: --host 0.0.0.0 starts ${warned ? 'with' : 'WITHOUT'} a warning that the API is reachable from the network; ` +
        `from ${from} with a loopback Host, GET /api_v1/targets/ answers ${open.status}, the workspace listing 401 without the key`,
    );
  });
});

describe('endpoint.json and the data directory, seen by another user', () => {
  const otherUser = 'nobody';
  let root: string;
  let ferry: FerryProcess | undefined;

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'ferry-surface-'));
    // the other user may pass through (not list) the temp folder, as through a home directory
    await chmod(root, 0o711);
  });
  afterAll(async () => {
    await stop(ferry);
    await rm(root, { recursive: true, force: true });
  });

  const asOther = (...command: string[]) => spawnSync('runuser', ['-u', otherUser, '--', ...command], { encoding: 'utf8' });

  it('are owner-only (0700 / 0600), and nobody can read them even when the data directory itself was made world-readable', async () => {
    const loose = path.join(root, 'loose-data'); // made beforehand by someone else, 0755
    await mkdir(loose, { mode: 0o755 });
    await chmod(loose, 0o755);
    await mkdir(path.join(root, 'workspace'));
    await writeFile(path.join(root, 'workspace', 'a.txt'), 'a');
    ferry = await startFerryProcess({ dataDir: loose, workspace: path.join(root, 'workspace'), built });
    // make a job record and a spool folder exist
    const zipDir = await mkdtemp(path.join(root, 'zip-'));
    await mkdir(path.join(zipDir, 'up'));
    await writeFile(path.join(zipDir, 'up', 'b.txt'), 'b');
    expect(spawnSync('zip', ['-qr', 'up.zip', 'up'], { cwd: zipDir }).status).toBe(0);
    const form = new FormData();
    form.append('service-file', new Blob([new Uint8Array(await readFile(path.join(zipDir, 'up.zip')))], { type: 'application/zip' }), 'up.zip');
    const posted = await fetch(new URL('/api_v1/targets/local/resources/', ferry.url), {
      method: 'POST',
      headers: { 'service-destination-token': ferry.accessKey, 'duplicate-file-action': 'ignore' },
      body: form,
    });
    expect(posted.status).toBe(202);

    const mode = async (file: string) => (await import('node:fs/promises')).stat(file).then((info) => info.mode & 0o777);
    expect(await mode(path.join(loose, 'endpoint.json'))).toBe(0o600);
    for (const dir of ['jobs', 'spool']) expect(await mode(path.join(loose, dir)), dir).toBe(0o700);

    // a data directory Ferry makes itself is 0700
    const fresh = path.join(root, 'fresh', 'data');
    const second = await startFerryProcess({ dataDir: fresh, workspace: path.join(root, 'workspace'), built });
    await stop(second);
    expect(await mode(fresh)).toBe(0o700);

    if (!isRoot || !runuserAvailable) {
      console.log(`surface: another user's view not checked: ${!isRoot ? 'the tests do not run as root (runuser needs it)' : 'runuser is not installed'}; modes checked above`);
      return;
    }
    // control: the other user can read a world-readable file next to it (runuser works, the path is reachable)
    await writeFile(path.join(loose, 'control.txt'), 'public', { mode: 0o644 });
    await chmod(path.join(loose, 'control.txt'), 0o644);
    expect(asOther('cat', path.join(loose, 'control.txt')).stdout).toBe('public');
    await rm(path.join(loose, 'control.txt'));

    const endpoint = asOther('cat', path.join(loose, 'endpoint.json'));
    expect(endpoint.status).not.toBe(0);
    expect(endpoint.stderr).toMatch(/Permission denied/);
    expect(endpoint.stdout).not.toContain(ferry.accessKey);
    // nothing below the data directory is readable by the other user but the (loose) directory itself
    const readable = asOther('find', loose, '-readable');
    expect(readable.stdout.split('\n').filter(Boolean)).toEqual([loose]);
    for (const dir of ['jobs', 'spool']) expect(asOther('ls', path.join(loose, dir)).status, dir).not.toBe(0);
    // the directory Ferry made: not even listable
    expect(asOther('ls', fresh).status).not.toBe(0);
    expect(asOther('cat', path.join(fresh, 'endpoint.json')).status).not.toBe(0);
    console.log(`surface: uid ${otherUser} could not read endpoint.json, jobs/ or spool/ (data directory 0755 or 0700)`);
  }, 90_000);
});

describe('scripts/check-log-leaks.mjs', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-logcheck-'));
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  it('passes clean logs, and finds a recorded key and a token literal of the tests, masked', async () => {
    const key = 'Zk3v' + 'q'.repeat(39);
    await writeFile(path.join(dir, 'secrets.list'), `${key}\n`);
    await writeFile(path.join(dir, 'serve-1.log'), 'Ferry is serving at http://127.0.0.1:1/\nGET /api_v1/targets/ 200\n');
    const clean = checkLogs(dir);
    expect(clean.problems).toEqual([]);
    expect(clean.literal).toBeGreaterThan(20); // the tests' tokens were collected
    expect(clean.recorded).toBe(1);

    await writeFile(path.join(dir, 'harness-2.log'), `GET /x 401 {"error":"bad key ${key}"}\nconsole.error: job failed for token ghp_test_token_alice\n`);
    const leaked = checkLogs(dir);
    expect(leaked.hits).toHaveLength(2);
    expect(leaked.hits.join('\n')).toContain('harness-2.log:1');
    expect(leaked.hits.join('\n')).toContain('harness-2.log:2');
    expect(leaked.hits.join('\n')).not.toContain(key);
    expect(leaked.hits.join('\n')).not.toContain('ghp_test_token_alice');

    const cli = spawnSync(process.execPath, ['scripts/check-log-leaks.mjs', dir], { encoding: 'utf8' });
    expect(cli.status).toBe(1);
    expect(cli.stderr).toContain('FAILED');
    expect(cli.stderr).not.toContain(key);
  });

  it('fails when nothing was captured (the variable was not passed on)', async () => {
    const empty = await mkdtemp(path.join(dir, 'empty-'));
    expect(checkLogs(empty).problems.length).toBeGreaterThan(0);
    expect(spawnSync(process.execPath, ['scripts/check-log-leaks.mjs', empty]).status).toBe(1);
  });
});
