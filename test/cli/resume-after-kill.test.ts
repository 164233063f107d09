import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Job } from '../../shared/api.js';
import { startOsfEmulator, type OsfEmulator } from '../emulators/osf/emulator.js';
import { startFerryProcess, type FerryProcess } from '../support/ferry-process.js';
import { rcloneUnavailableReason, sshdUnavailableReason, startSftpServer, writeRcloneConfig, type SftpServer } from '../rclone/servers.js';
import { apacheUnavailableReason, startApacheWebdav, type ApacheWebdav } from '../webdav/apache-webdav.js';
import { freePort, stopChild, waitForPort } from '../webdav/process.js';
import { isFerryTempName } from '../../electron/core/targets/webdav/temp-names.js';

// Issue #18 part 5: `ferry serve` is SIGKILLed in the middle of a 1,000-file top-level
// transfer, started again on the same data dir, and the job resumed. Counted from the
// destination's own log (Apache's access log; the OSF emulator's request log): no file the
// destination had completed before the kill is sent again, everything arrives byte-exact,
// and the resumed run goes on in the resource the first run made (no `Batch (2)`).
const FILES = 1000;
const FOLDERS = 10;
const KILL_AFTER = 300;

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const nameOf = (i: number) => `file-${String(i).padStart(4, '0')}.bin`;
const relativeOf = (i: number) => `d${i % FOLDERS}/${nameOf(i)}`;

const apacheMissing = apacheUnavailableReason();
if (apacheMissing) console.warn(`resume-after-kill: the WebDAV case is skipped: ${apacheMissing}`);
const rcloneMissing = rcloneUnavailableReason();
if (rcloneMissing) console.warn(`resume-after-kill: the rclone cases are skipped: ${rcloneMissing}`);
const sftpMissing = rcloneMissing ?? sshdUnavailableReason();
if (sftpMissing && !rcloneMissing) console.warn(`resume-after-kill: the rclone SFTP case is skipped: ${sftpMissing}`);

interface Scenario {
  ferry: FerryProcess;
  dataDir: string;
  workspace: string;
  hashes: Map<string, string>;
}

/** A workspace with `Batch/d<n>/file-<i>.bin` (1–12 KiB each) and a Ferry serving it. */
async function prepare(dir: string, extraArgs: string[] = [], env: NodeJS.ProcessEnv = {}, files = FILES): Promise<Scenario> {
  const dataDir = path.join(dir, 'data');
  const workspace = path.join(dir, 'workspace');
  const hashes = new Map<string, string>();
  for (let d = 0; d < FOLDERS; d++) await mkdir(path.join(workspace, 'Batch', `d${d}`), { recursive: true });
  for (let i = 0; i < files; i++) {
    const bytes = randomBytes(1024 + ((i * 7919) % (11 * 1024)));
    hashes.set(relativeOf(i), sha256(bytes));
    await writeFile(path.join(workspace, 'Batch', relativeOf(i)), bytes);
  }
  const ferry = await startFerryProcess({ dataDir, workspace, extraArgs, env });
  return { ferry, dataDir, workspace, hashes };
}

async function api(ferry: FerryProcess, route: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${ferry.url}${route}`, { ...init, headers: { authorization: `Bearer ${ferry.accessKey}`, ...(init.headers as Record<string, string>) } });
}

async function batchId(ferry: FerryProcess): Promise<string> {
  const listing = (await (await api(ferry, 'api_v1/targets/local/resources/?container=None')).json()) as { id: string; title: string }[];
  const batch = listing.find((resource) => resource.title === 'Batch');
  expect(batch).toBeDefined();
  return batch!.id;
}

/** A top-level transfer of Batch to `target`; its ticket. */
async function transfer(ferry: FerryProcess, target: string, destinationToken: string): Promise<string> {
  const response = await api(ferry, `api_v1/targets/${target}/resources/`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'service-destination-token': destinationToken,
      'service-source-token': ferry.accessKey,
      'duplicate-file-action': 'update',
      // exactly the source's files: no provenance record beside them
      'ferry-provenance': 'off',
    },
    body: JSON.stringify({ source_target_name: 'local', source_resource_id: await batchId(ferry) }),
  });
  const body = (await response.json()) as { ticket_number?: string; error?: string };
  expect(response.status, body.error).toBe(202);
  return body.ticket_number!;
}

async function finished(ferry: FerryProcess, ticket: string, timeoutMs = 180_000): Promise<Job> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const job = (await (await api(ferry, `api_v1/jobs/${ticket}/`)).json()) as Job;
    if (!['queued', 'running'].includes(job.status)) return job;
    if (Date.now() > deadline) throw new Error(`job ${ticket} still ${job.status} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function until(condition: () => Promise<boolean> | boolean, what: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** the processes `pid` started (Linux /proc) */
async function childrenOf(pid: number): Promise<number[]> {
  const children = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '');
  return children.split(' ').filter(Boolean).map(Number);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function kill(ferry: FerryProcess): Promise<void> {
  ferry.child.kill('SIGKILL');
  expect(await ferry.exited).toBe('SIGKILL');
}

/**
 * After the restart, the killed job resumes by itself; where the keychain did not keep the
 * destination's token (a test machine's in-memory one) it fails saying so, and is resumed
 * with the token by POST resume/. Returns the job that finished the work.
 */
async function resumeAfterRestart(ferry: FerryProcess, ticket: string, destinationToken: string): Promise<Job> {
  const first = await finished(ferry, ticket);
  if (first.status === 'succeeded') return first;
  expect(first.status).toBe('failed');
  expect(first.error).toMatch(/resume/i);
  const response = await api(ferry, `api_v1/jobs/${ticket}/resume/`, {
    method: 'POST',
    headers: { 'service-destination-token': destinationToken, 'service-source-token': ferry.accessKey },
  });
  const body = (await response.json()) as { ticket_number?: string; error?: string };
  expect(response.status, body.error).toBe(202);
  const resumed = await finished(ferry, body.ticket_number!);
  expect(resumed.resumed?.from).toBe(ticket);
  return resumed;
}

describe('a transfer killed with SIGKILL resumes without sending a completed file again', () => {
  let dir: string | null = null;
  let dav: ApacheWebdav | null = null;
  let osf: OsfEmulator | null = null;
  let rcd: ChildProcess | null = null;
  let sftp: SftpServer | null = null;
  const ferries: FerryProcess[] = [];
  afterEach(async () => {
    for (const ferry of ferries.splice(0)) if (ferry.child.exitCode === null && ferry.child.signalCode === null) ferry.child.kill('SIGKILL');
    await dav?.stop();
    await osf?.close();
    if (rcd) await stopChild(rcd);
    rcd = null;
    await sftp?.stop();
    sftp = null;
    if (dir) await rm(dir, { recursive: true, force: true });
    dav = null;
    osf = null;
    dir = null;
  });

  it.skipIf(apacheMissing !== null)('to WebDAV (Apache mod_dav)', { timeout: 600_000 }, async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-resume-dav-'));
    dav = await startApacheWebdav();
    const token = JSON.stringify({ url: dav.url, username: dav.username, password: dav.password });
    const first = await prepare(dir);
    ferries.push(first.ferry);
    const logLines = async () => (await readFile(dav!.accessLog, 'utf8').catch(() => '')).split('\n').filter(Boolean);
    // a file is complete at the destination once Apache answered 201 to the request that put its
    // bytes in place: its MOVE from a temporary name, or its one PUT onto its own name where Ferry
    // knows Apache writes a PUT atomically (fast path direct-puts, targets/webdav/server-traits.ts)
    const completedName = (line: string): string | null => {
      const [method, target, destination, status] = line.split(' ');
      if (status !== '201') return null;
      if (method === 'MOVE') return path.posix.basename(decodeURIComponent(new URL(destination!).pathname));
      const name = path.posix.basename(decodeURIComponent(target!));
      return method === 'PUT' && !isFerryTempName(name) ? name : null;
    };
    const completed = (lines: string[]) => lines.map(completedName).filter((name): name is string => name !== null);

    const ticket = await transfer(first.ferry, 'webdav', token);
    await until(async () => completed(await logLines()).length >= KILL_AFTER, `${KILL_AFTER} files in place`);
    await kill(first.ferry);
    const beforeRestart = await logLines();
    const completedBefore = new Set(completed(beforeRestart));
    expect(completedBefore.size).toBeGreaterThanOrEqual(KILL_AFTER);
    expect(completedBefore.size).toBeLessThan(FILES);

    const second = await startFerryProcess({ dataDir: first.dataDir, workspace: first.workspace });
    ferries.push(second);
    const job = await resumeAfterRestart(second, ticket, token);
    expect(job.status, job.error ?? '').toBe('succeeded');
    expect(job.resumed?.files_already_done).toBeGreaterThan(0);
    expect(job.report?.already_done?.length).toBe(job.resumed?.files_already_done);
    expect(job.report?.new_resource?.title).toBe('Batch');

    // what the destination saw after the kill: no completed file PUT or moved again
    const after = (await logLines()).slice(beforeRestart.length);
    const sentAgain = after.filter((line) => {
      const [method, target, destination] = line.split(' ');
      const name = method === 'PUT' ? path.posix.basename(decodeURIComponent(target!)).split('~').at(-1)! : method === 'MOVE' ? path.posix.basename(decodeURIComponent(destination!)) : null;
      return name !== null && completedBefore.has(name);
    });
    expect(sentAgain).toEqual([]);
    // a completed file is only looked at again when the kill lost its journal line (the last batch)
    const readAgain = after.filter((line) => line.startsWith('GET ') && completedBefore.has(path.posix.basename(decodeURIComponent(line.split(' ')[1]!))));
    expect(readAgain.length).toBeLessThanOrEqual(completedBefore.size - job.resumed!.files_already_done);
    // every file put in place exactly once over both runs
    const placed = new Map<string, number>();
    for (const name of completed(await logLines())) placed.set(name, (placed.get(name) ?? 0) + 1);
    expect(placed.size).toBe(FILES);
    expect([...placed.values()].every((count) => count === 1)).toBe(true);

    // byte-exact, in the one folder the first run made; nothing else visible
    expect((await readdir(dav.dataDir)).filter((name) => !name.startsWith('.'))).toEqual(['Batch']);
    for (const [relative, hash] of first.hashes) expect(sha256(await readFile(path.join(dav.dataDir, 'Batch', relative))), relative).toBe(hash);
    const visible = (await readdir(path.join(dav.dataDir, 'Batch'), { recursive: true })).filter((name) => !path.basename(name).startsWith('.') && name.includes('.bin'));
    expect(visible).toHaveLength(FILES);
    console.log(
      `resume-after-kill (WebDAV): killed after ${completedBefore.size} files in place; resumed with ${job.resumed!.files_already_done} already done; ` +
        `${after.filter((line) => line.startsWith('PUT ')).length} PUTs after the restart for ${FILES - completedBefore.size} files not yet complete`,
    );
  });

  it.skipIf(rcloneMissing !== null).each([
    { files: 12, engineEnds: 'after the restart', title: 'waits for the engine job that outlived Ferry' },
    { files: 4, engineEnds: 'before the restart', title: 'takes the result of the engine job that finished while Ferry was down, without copying again' },
  ])('rclone server-side copy: the resumed job $title', { timeout: 300_000 }, async ({ files, engineEnds }) => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-resume-rclone-'));
    const left = path.join(dir, 'left');
    const right = path.join(dir, 'right');
    await mkdir(path.join(left, 'Run'), { recursive: true });
    await mkdir(right);
    const hashes = new Map<string, string>();
    for (let i = 0; i < files; i++) {
      const bytes = randomBytes(1024 * 1024);
      hashes.set(nameOf(i), sha256(bytes));
      await writeFile(path.join(left, 'Run', nameOf(i)), bytes);
    }
    // a remote engine (FERRY_RCLONE_URL) that outlives Ferry, slowed so the kill lands mid-copy
    const configPath = await writeRcloneConfig(dir, { left: { type: 'alias', remote: left }, right: { type: 'alias', remote: right } });
    const port = await freePort();
    const engine = spawn('rclone', ['rcd', '--rc-addr', `127.0.0.1:${port}`, '--rc-no-auth', '--config', configPath, '--bwlimit', '1M', '--transfers', '1'], { stdio: ['ignore', 'ignore', 'pipe'] });
    rcd = engine;
    let stderr = '';
    engine.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await waitForPort('rclone rcd', port, engine, () => stderr);
    const rc = async <T>(command: string, params: Record<string, unknown> = {}): Promise<T> =>
      (await (await fetch(`http://127.0.0.1:${port}/${command}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(params) })).json()) as T;
    const env = { FERRY_RCLONE_URL: `http://127.0.0.1:${port}/` };
    const dataDir = path.join(dir, 'data');
    const workspace = path.join(dir, 'workspace');
    await mkdir(workspace);
    const first = await startFerryProcess({ dataDir, workspace, env });
    ferries.push(first);
    const listing = (await (await api(first, 'api_v1/targets/rclone-left/resources/?container=None')).json()) as { id: string; title: string }[];
    const run = listing.find((resource) => resource.title === 'Run');
    expect(run, JSON.stringify(listing)).toBeDefined();
    const posted = await api(first, 'api_v1/targets/rclone-right/resources/', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'duplicate-file-action': 'update', 'ferry-provenance': 'off' },
      body: JSON.stringify({ source_target_name: 'rclone-left', source_resource_id: run!.id }),
    });
    expect(posted.status, await posted.clone().text()).toBe(202);
    const ticket = ((await posted.json()) as { ticket_number: string }).ticket_number;
    await until(async () => (await readdir(path.join(right, 'Run')).catch(() => [] as string[])).length >= 2, 'rclone to be copying');
    await kill(first);
    // every rc call is a job of rcd's; the copies are the ones in a stats group of Ferry's
    const copies = async () => {
      const { jobids } = await rc<{ jobids: number[] }>('job/list');
      const statuses = await Promise.all(jobids.map((jobid) => rc<{ id: number; group: string; finished: boolean }>('job/status', { jobid })));
      return statuses.filter((status) => status.group.startsWith('ferry-'));
    };
    const copying = await copies();
    expect(copying).toHaveLength(1);
    // (the short copy may already have ended on a loaded machine: that case wants it ended anyway)
    if (engineEnds === 'after the restart') expect(copying[0]!.finished, 'the engine job outlived Ferry').toBe(false);
    else await until(async () => (await rc<{ finished: boolean }>('job/status', { jobid: copying[0]!.id })).finished, 'the engine job to finish');

    const second = await startFerryProcess({ dataDir, workspace, env });
    ferries.push(second);
    const job = await finished(second, ticket);
    expect(job.status, job.error ?? '').toBe('succeeded');
    expect(job.resumed).toEqual({ files_already_done: 0, from: null });
    expect(job.report?.new_resource?.title).toBe('Run');
    expect(job.report?.resources_created).toHaveLength(files + 1); // Run and its files
    // no second copy was started: the resumed job followed the one the first run started
    expect((await copies()).map((status) => status.id)).toEqual([copying[0]!.id]);
    expect(await readdir(right)).toEqual(['Run']);
    for (const [name, hash] of hashes) expect(sha256(await readFile(path.join(right, 'Run', name))), name).toBe(hash);
  });

  it.skipIf(sftpMissing !== null)('to an rclone SFTP remote (OpenSSH), files sent through Ferry', { timeout: 600_000 }, async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-resume-rclone-sftp-'));
    sftp = await startSftpServer();
    const configPath = await writeRcloneConfig(dir, {
      login: { type: 'sftp', host: '127.0.0.1', port: String(sftp.port), user: sftp.user, key_file: sftp.keyFile, shell_type: 'unix', md5sum_command: 'md5sum', sha1sum_command: 'sha1sum' },
      hpc: { type: 'alias', remote: `login:${sftp.root}` },
    });
    const env = { FERRY_RCLONE_CONFIG: configPath };
    // fewer files: each is an upload, an md5sum and a sha1sum run over SSH to check it, and a rename
    const files = 120;
    const killAfter = 40;
    const first = await prepare(dir, [], env, files);
    ferries.push(first.ferry);
    const batch = path.join(sftp.root, 'Batch');
    /** each complete file on the SFTP server's disk and its inode: Ferry puts a file in place by renaming its temporary, so one written again has another */
    const onServer = async () => {
      const found = new Map<string, number>();
      for (const name of await readdir(batch, { recursive: true }).catch(() => [] as string[])) {
        if (!name.endsWith('.bin') || path.basename(name).startsWith('.ferry-upload-')) continue;
        found.set(name, (await stat(path.join(batch, name))).ino);
      }
      return found;
    };

    const ticket = await transfer(first.ferry, 'rclone-hpc', first.ferry.accessKey);
    await until(async () => (await onServer()).size >= killAfter, `${killAfter} files in place on the SFTP server`);
    const engines = await childrenOf(first.ferry.pid);
    expect(engines.length).toBeGreaterThan(0);
    await kill(first.ferry);
    // the rclone rcd this Ferry started ends with it (rcd-process.ts: PR_SET_PDEATHSIG): nothing writes while Ferry is down
    await until(() => engines.every((pid) => !alive(pid)), 'the killed Ferry\'s rclone rcd to end', 10_000);
    const before = await onServer();
    expect(before.size).toBeLessThan(files);

    const second = await startFerryProcess({ dataDir: first.dataDir, workspace: first.workspace, env });
    ferries.push(second);
    const job = await resumeAfterRestart(second, ticket, second.accessKey);
    expect(job.status, job.error ?? '').toBe('succeeded');
    // at most the last journal batch is lost to the kill: those files are looked at again, never replaced
    expect(job.resumed?.files_already_done).toBeGreaterThan(0);
    expect(job.report?.new_resource?.title).toBe('Batch');

    // every file complete before the kill is the same file on the server (same inode): none written again
    const after = await onServer();
    expect([...before].filter(([name, inode]) => after.get(name) !== inode).map(([name]) => name)).toEqual([]);
    // byte-exact, in the one folder the first run made
    expect((await readdir(sftp.root)).sort()).toEqual(['Batch']);
    expect(after.size).toBe(files);
    for (const [relative, hash] of first.hashes) expect(sha256(await readFile(path.join(batch, relative))), relative).toBe(hash);
    // the one file in flight at the kill may have left its temporary (hidden from listings; docs/targets/rclone.md), nothing more
    expect((await readdir(batch, { recursive: true })).filter((name) => path.basename(name).startsWith('.ferry-upload-')).length).toBeLessThanOrEqual(1);
    console.log(`resume-after-kill (rclone SFTP): killed with ${before.size} files in place; resumed with ${job.resumed!.files_already_done} already done`);
  });

  it('to the emulated OSF', { timeout: 600_000 }, async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-resume-osf-'));
    osf = await startOsfEmulator();
    const user = osf.state.addUser('Resume Tester');
    const token = osf.state.addToken(user.id);
    // OSF's documented budget (5 requests a second, Ferry's default) would make this 1,000-file
    // transfer a matter of minutes; 40 a second still leaves hundreds of files for the kill to cut
    const rate = { FERRY_OSF_RATE_PER_SECOND: '40' };
    const first = await prepare(dir, ['--osf-api-url', osf.apiUrl], rate);
    ferries.push(first.ferry);
    const uploads = (from = 0) =>
      osf!.state.requests.slice(from).filter((request) => request.server === 'files' && request.method === 'PUT' && /[?&]kind=file\b/.test(request.url));
    const uploadedName = (url: string) => new URL(url, 'http://x').searchParams.get('name');
    const stored = () => [...osf!.state.files.values()].filter((file) => file.kind === 'file' && file.versions.length > 0);

    const ticket = await transfer(first.ferry, 'osf', token);
    await until(() => stored().length >= KILL_AFTER, `${KILL_AFTER} files stored on OSF`);
    await kill(first.ferry);
    const killedAt = osf.state.requests.length;
    const completedBefore = new Set(stored().map((file) => file.name));
    expect(completedBefore.size).toBeLessThan(FILES);

    const second = await startFerryProcess({ dataDir: first.dataDir, workspace: first.workspace, extraArgs: ['--osf-api-url', osf.apiUrl], env: rate });
    ferries.push(second);
    const job = await resumeAfterRestart(second, ticket, token);
    expect(job.status, job.error ?? '').toBe('succeeded');
    expect(job.resumed?.files_already_done).toBeGreaterThan(0);

    const sentAgain = uploads(killedAt).filter((request) => completedBefore.has(uploadedName(request.url) ?? ''));
    expect(sentAgain.map((request) => request.url)).toEqual([]);
    // one project, holding every file once, byte-exact
    const projects = [...osf.state.nodes.values()].filter((node) => node.title.startsWith('Batch'));
    expect(projects).toHaveLength(1);
    const files = stored();
    expect(files).toHaveLength(FILES);
    const hashByName = new Map([...first.hashes].map(([relative, hash]) => [path.posix.basename(relative), hash]));
    for (const file of files) {
      expect(file.nodeId).toBe(projects[0]!.id);
      expect(file.versions.map((version) => version.sha256), file.name).toEqual([hashByName.get(file.name)]);
    }
    console.log(
      `resume-after-kill (OSF): killed with ${completedBefore.size} files stored; resumed with ${job.resumed!.files_already_done} already done; ` +
        `${uploads(killedAt).length} uploads after the restart for ${FILES - completedBefore.size} files not yet complete`,
    );
  });
});
