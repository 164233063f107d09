// Remote failures (issue 9.6): each remote target behind its emulator with a FaultPlan, a
// real core (job runner + the local target), and the checks every faulted job must pass:
// it ends (no hang), it either did the work byte-for-byte or says clearly what failed, and
// no wrong bytes are left at the destination.
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { FINISHED_JOB_STATUSES, type Job } from '../../../shared/api.js';
import { makeConfig, type FerryConfig } from '../../../electron/core/config.js';
import { fastPathOn } from '../../../electron/core/fast-paths.js';
import { createCore, type FerryCore } from '../../../electron/core/ferry-core.js';
import { MemorySecretStore } from '../../../electron/core/keychain/memory.js';
import type { Target } from '../../../electron/core/target.js';
import { encodeLocalId, LocalTarget } from '../../../electron/core/targets/local/index.js';
import { createOsfTarget, nodeId } from '../../../electron/core/targets/osf/index.js';
import { createGithubTarget } from '../../../electron/core/targets/github/index.js';
import { createGitlabTarget } from '../../../electron/core/targets/gitlab/index.js';
import { createZenodoTarget } from '../../../electron/core/targets/zenodo/index.js';
import { recordId } from '../../../electron/core/targets/invenio/ids.js';
import { createFigshareTarget } from '../../../electron/core/targets/figshare/index.js';
import { createWebdavTarget, webdavId } from '../../../electron/core/targets/webdav/index.js';
import { encodeForgeId } from '../../../electron/core/targets/forge/ids.js';
import { FaultPlan, type FaultRule, mulberry32 } from '../../emulators/shared/faults.js';
import { startOsfEmulator } from '../../emulators/osf/emulator.js';
import { startGithubEmulator } from '../../emulators/github/server.js';
import { startGitlabEmulator } from '../../emulators/gitlab/server.js';
import { startZenodoEmulator } from '../../emulators/zenodo/emulator.js';
import { startFigshareEmulator } from '../../emulators/figshare/emulator.js';
import { apacheUnavailableReason, startApacheWebdav, type ApacheWebdav } from '../../webdav/apache-webdav.js';
import { startWebdavFaultProxy } from '../../webdav/fault-proxy.js';

type Match = Pick<FaultRule, 'server' | 'method' | 'path'>;

/** One remote target under test: how to make its resources and which requests carry what. */
export interface RemoteUnderTest {
  /** the target's name ('osf', ...) */
  name: string;
  /** the service as messages name it */
  service: RegExp;
  target: Target;
  token: string;
  plan: FaultPlan;
  /** a resource holding `files` at its top, to download from */
  source(files: Record<string, Buffer>): Promise<string>;
  /** an empty container to upload into */
  container(): Promise<string>;
  /** requests that fetch a file's bytes: before the answer (status, reset) and the body itself */
  download: { request: Match; body: Match };
  /** the request that carries a file's bytes up, and whether repeating it is safe */
  upload: { request: Match; idempotent: boolean };
  /** a request that may land although its answer is lost; `topLevel`: made by a top-level write */
  landing: { request: Match; topLevel: boolean; idempotent: boolean };
  /** whether the service advertises a content hash a corrupted download can be caught by */
  advertisesHash: boolean;
  close(): Promise<void>;
}

/** Timeouts for the short runs: long enough for a loaded 2-core machine, short enough to test stalls. */
export const TIMEOUT_MS = 2_000;

let counter = 0;
const unique = (label: string) => `${label}-${process.pid}-${++counter}`;

/** Servers several remotes under test may share (one Apache; each gets its own fault proxy). */
export interface SharedServers {
  apache?: Promise<ApacheWebdav>;
}

/** Each remote gets its own emulator (or proxy) and FaultPlan, so scenarios can run at once. */
export async function startRemote(name: string, shared: SharedServers = {}): Promise<RemoteUnderTest> {
  const plan = new FaultPlan();
  const config = (remotes: Partial<FerryConfig['remotes']>) =>
    makeConfig({ dataDir: '/nonexistent', remotes: { osfApiUrl: '', githubApiUrl: '', gitlabUrl: '', zenodoUrl: '', figshareApiUrl: '', ...remotes } });
  const secrets = new MemorySecretStore();
  switch (name) {
    case 'osf': {
      const emu = await startOsfEmulator({ faults: plan });
      const user = emu.state.addUser('Fault Tester');
      const token = emu.state.addToken(user.id);
      return {
        name,
        service: /OSF/,
        plan,
        token,
        target: createOsfTarget(config({ osfApiUrl: emu.apiUrl }), secrets, { ratePerSecond: 500, retries: 3, timeoutMs: TIMEOUT_MS }),
        async source(files) {
          const node = emu.state.addNode({ title: unique('src'), owner: user.id });
          for (const [file, bytes] of Object.entries(files)) emu.state.addFile(node.id, `/${file}`, bytes);
          return nodeId(node.id);
        },
        async container() {
          return nodeId(emu.state.addNode({ title: unique('dest'), owner: user.id }).id);
        },
        // WaterButler answers a download with a 302 to signed storage, which sends the bytes
        download: { request: { server: 'files', method: 'GET' }, body: { server: 'storage', method: 'GET' } },
        upload: { request: { server: 'files', method: 'PUT', path: /kind=file/ }, idempotent: true },
        landing: { request: { server: 'api', method: 'POST', path: '/v2/nodes/' }, topLevel: true, idempotent: false },
        advertisesHash: true,
        close: () => emu.close(),
      };
    }
    case 'github': {
      const emu = await startGithubEmulator({ faults: plan });
      const user = { id: 1, login: 'fault-tester' };
      emu.state.tokens.set('ghp_faults', user);
      return {
        name,
        service: /GitHub/,
        plan,
        token: 'ghp_faults',
        // the download faults below aim at the per-file REST path; the shallow read has its own in github.test.ts
        target: createGithubTarget(config({ githubApiUrl: emu.url }), secrets, { writeSpacingMs: 0, maxRateWaitMs: 3000, timeoutMs: TIMEOUT_MS, retryBaseMs: 100, shallowReadMaxBytes: -1 }),
        async source(files) {
          return encodeForgeId('r', emu.state.addRepo(user, unique('src'), files).id);
        },
        async container() {
          return encodeForgeId('r', emu.state.addRepo(user, unique('dest'), { 'README.md': 'destination\n' }).id);
        },
        download: { request: { method: 'GET', path: '/git/blobs/' }, body: { method: 'GET', path: '/git/blobs/' } },
        // one git push carries every file; it is conditional on the old head, so it lands at most once
        upload: { request: { method: 'POST', path: '/git-receive-pack' }, idempotent: true },
        landing: { request: { method: 'POST', path: '/user/repos' }, topLevel: true, idempotent: false },
        advertisesHash: true,
        close: () => emu.close(),
      };
    }
    case 'gitlab': {
      const emu = await startGitlabEmulator({ faults: plan });
      const user = { id: 1, username: 'fault-tester', name: 'Fault Tester' };
      emu.state.tokens.set('glpat-faults', user);
      return {
        name,
        service: /GitLab/,
        plan,
        token: 'glpat-faults',
        // the download faults below aim at the per-file REST path; the shallow read has its own in github.test.ts
        target: createGitlabTarget(config({ gitlabUrl: emu.url }), secrets, { maxRateWaitMs: 3000, ratePerSecond: 500, timeoutMs: TIMEOUT_MS, retries: 3, shallowReadMaxBytes: -1 }),
        async source(files) {
          return encodeForgeId('p', emu.state.addProject(user, unique('src'), files).id);
        },
        async container() {
          return encodeForgeId('p', emu.state.addProject(user, unique('dest'), { 'README.md': 'destination\n' }).id);
        },
        download: { request: { method: 'GET', path: /\/repository\/blobs\/[^/]+\/raw/ }, body: { method: 'GET', path: /\/repository\/blobs\/[^/]+\/raw/ } },
        // one git push carries every file; it is conditional on the old head, so it lands at most once
        upload: { request: { method: 'POST', path: '/git-receive-pack' }, idempotent: true },
        landing: { request: { method: 'POST', path: '/git-receive-pack' }, topLevel: false, idempotent: true },
        advertisesHash: true,
        close: () => emu.close(),
      };
    }
    case 'zenodo': {
      const emu = await startZenodoEmulator({ faults: plan });
      return {
        name,
        service: /Zenodo/,
        plan,
        token: 'zenodo-token',
        target: createZenodoTarget(config({ zenodoUrl: emu.url }), secrets, { ratePerSecond: 500, retries: 3, timeoutMs: TIMEOUT_MS }),
        async source(files) {
          return recordId(emu.state.addRecord(1, unique('src'), files).id);
        },
        async container() {
          return recordId(emu.state.addRecord(1, unique('dest')).id);
        },
        download: { request: { method: 'GET', path: '/content' }, body: { method: 'GET', path: '/content' } },
        upload: { request: { method: 'PUT', path: '/content' }, idempotent: true },
        landing: { request: { method: 'POST', path: /\/api\/records$/ }, topLevel: true, idempotent: false },
        advertisesHash: true,
        close: () => emu.close(),
      };
    }
    case 'figshare': {
      const emu = await startFigshareEmulator({ faults: plan, partSize: 256 * 1024, processingReads: 0 });
      return {
        name,
        service: /figshare/,
        plan,
        token: 'figshare-token',
        target: createFigshareTarget(config({ figshareApiUrl: emu.url }), secrets, { ratePerSecond: 500, retries: 3, timeoutMs: TIMEOUT_MS, downloadUrl: emu.downloadUrl }),
        async source(files) {
          return `a${emu.state.addArticle(1, unique('src'), null, files).id}`;
        },
        async container() {
          return `a${emu.state.addArticle(1, unique('dest'), null, {}).id}`;
        },
        download: { request: { server: 'download', method: 'GET' }, body: { server: 'upload', method: 'GET', path: '/s3/' } },
        // parts are PUT from memory: a part sent twice is the same part
        upload: { request: { server: 'upload', method: 'PUT' }, idempotent: true },
        // "initiate" makes the file record: a POST that may have landed
        landing: { request: { server: 'api', method: 'POST', path: /\/account\/articles\/\d+\/files$/ }, topLevel: false, idempotent: false },
        advertisesHash: true,
        close: () => emu.close(),
      };
    }
    case 'webdav': {
      const reason = apacheUnavailableReason();
      if (reason) throw new Error(`not run: ${reason}`);
      const server = await (shared.apache ??= startApacheWebdav());
      const proxy = await startWebdavFaultProxy(server.url, plan);
      const asRoot = process.getuid?.() === 0;
      const folder = async (name: string, files: Record<string, Buffer> = {}) => {
        const dir = path.join(server.dataDir, name);
        await mkdir(dir);
        for (const [file, bytes] of Object.entries(files)) await writeFile(path.join(dir, file), bytes);
        // created as root for an httpd that runs as nobody: let it write there
        if (asRoot) execFileSync('chown', ['-R', 'nobody', dir]);
        return webdavId(`/${name}`);
      };
      return {
        name,
        service: /WebDAV/,
        plan,
        token: JSON.stringify({ url: proxy.url, username: server.username, password: server.password }),
        target: createWebdavTarget(config({}), secrets, { retries: 3, timeoutMs: TIMEOUT_MS }),
        source: (files) => folder(unique('src'), files),
        container: () => folder(unique('dest')),
        download: { request: { method: 'GET' }, body: { method: 'GET' } },
        upload: { request: { method: 'PUT' }, idempotent: true },
        // what puts a file's bytes in place: on Apache one PUT onto its name (fast path direct-puts:
        // when its answer is lost, the PUT is sent again and its 412 told apart by the bytes), or
        // else the MOVE from the temp name (when its answer is lost, Ferry looks whether it happened)
        landing: { request: { method: fastPathOn('direct-puts') ? 'PUT' : 'MOVE' }, topLevel: false, idempotent: true },
        advertisesHash: false,
        // the Apache server belongs to whoever shares it
        close: () => proxy.close(),
      };
    }
    default:
      throw new Error(`no remote '${name}'`);
  }
}

/** A core with the local target and `remote`'s, in temp dirs; jobs run as they do in Ferry. */
export interface Rig {
  core: FerryCore;
  remote: RemoteUnderTest;
  workspace: string;
  close(): Promise<void>;
}

export async function startRig(remote: RemoteUnderTest): Promise<Rig> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'ferry-remote-faults-'));
  const workspace = path.join(root, 'workspace');
  const config = makeConfig({ dataDir: path.join(root, 'data'), workspace, jobConcurrency: 2 });
  const core = await createCore(config, {
    secrets: new MemorySecretStore(),
    targets: (c) => [new LocalTarget({ root: c.workspace }), remote.target],
  });
  return {
    core,
    remote,
    workspace,
    async close() {
      await core.close();
      await rm(root, { recursive: true, force: true });
    },
  };
}

/** Small files with distinct bytes (a flipped byte always changes the hash). */
export function makeFiles(count: number, size: number, seed: number): Record<string, Buffer> {
  const random = mulberry32(seed);
  const files: Record<string, Buffer> = {};
  for (let i = 0; i < count; i++) {
    const bytes = Buffer.alloc(size + i);
    for (let j = 0; j < bytes.length; j++) bytes[j] = Math.floor(random() * 256);
    files[`f${String(i).padStart(3, '0')}.bin`] = bytes;
  }
  return files;
}

const TERMINAL = new Set(FINISHED_JOB_STATUSES);

/** Submits a transfer and waits for it to end; a job still running after `deadlineMs` is a hang. */
export async function transfer(
  rig: Rig,
  from: { target: string; id: string },
  to: { target: string; container: string | null },
  deadlineMs: number,
): Promise<{ job: Job; hung: boolean }> {
  const token = (target: string) => (target === 'local' ? rig.core.accessKey : rig.remote.token);
  const submitted = await rig.core.jobs.submit({
    kind: 'transfer',
    target: to.target,
    resource_id: to.container,
    source: { target: from.target, resource_id: from.id },
    params: { source: { target: from.target, resourceId: from.id }, containerId: to.container, duplicateAction: 'update' },
    tokens: { source: token(from.target), destination: token(to.target) },
  });
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const job = rig.core.jobs.get(submitted.ticket_number)!;
    if (TERMINAL.has(job.status)) return { job, hung: false };
    if (Date.now() > deadline) {
      await rig.core.jobs.cancel(job.ticket_number).catch(() => undefined);
      return { job, hung: true };
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Every file below `dir` (relative path → bytes). */
export async function filesBelow(dir: string): Promise<Map<string, Buffer>> {
  const found = new Map<string, Buffer>();
  const walk = async (at: string) => {
    for (const entry of await readdir(at, { withFileTypes: true }).catch(() => [])) {
      const full = path.join(at, entry.name);
      if (entry.isDirectory()) await walk(full);
      else found.set(path.relative(dir, full), await readFile(full));
    }
  };
  await walk(dir);
  return found;
}

/**
 * What a remote container holds, read back through the target with no faults. A file that is
 * listed but cannot be read (a half-made upload: figshare's file record still waiting for
 * its bytes) is kept with `null` bytes.
 */
export async function remoteFiles(remote: RemoteUnderTest, container: string): Promise<Map<string, Buffer | null>> {
  const found = new Map<string, Buffer | null>();
  const ctx = { token: remote.token, signal: new AbortController().signal };
  const read = await remote.target.read(ctx, container);
  for await (const entry of read.entries) {
    if (entry.kind !== 'file') continue;
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of await entry.open()) chunks.push(chunk as Buffer);
      found.set(entry.path, Buffer.concat(chunks));
    } catch {
      found.set(entry.path, null);
    }
  }
  return found;
}

export const UNEXPECTED = /unexpected error inside Ferry/;

export type Verdict = 'ok' | 'failed-clearly' | 'silent';

/**
 * The verdict on one faulted job. `expected`: file name → bytes; `found`: destination path →
 * bytes (a file matches by its last name segment, so nested and flattened names both work).
 * Silent: a hang; wrong bytes at the destination; a leftover temp file; a file missing with
 * no word about it; an error no one can act on.
 */
export function judge(
  result: { job: Job; hung: boolean },
  expected: Record<string, Buffer>,
  found: Map<string, Buffer | null>,
): { verdict: Verdict; why: string } {
  const { job, hung } = result;
  if (hung) return { verdict: 'silent', why: `job ${job.status} after the deadline (a hang)` };
  const byName = new Map<string, Buffer | null>();
  for (const [where, bytes] of found) {
    const name = where.split('/').pop()!.split('__').pop()!;
    if (/\.ferry-|\.part$|\.tmp/.test(name)) return { verdict: 'silent', why: `temporary file '${where}' left at the destination` };
    byName.set(name, bytes);
  }
  const report = job.report;
  const mentioned = (name: string) =>
    (report?.file_errors ?? []).some((e) => e.path.endsWith(name)) || (report?.failed_fixity ?? []).some((f) => f.path.endsWith(name));
  const failedClearly = job.status === 'failed' && !!job.error && !UNEXPECTED.test(job.error) && !/\n\s+at /.test(job.error);
  if (job.status === 'failed' && !failedClearly) return { verdict: 'silent', why: `job failed without a clear reason: ${job.error}` };
  for (const e of report?.file_errors ?? []) if (!e.error || UNEXPECTED.test(e.error)) return { verdict: 'silent', why: `unclear file error for ${e.path}` };
  let missing = 0;
  for (const [name, bytes] of Object.entries(expected)) {
    const there = byName.get(name);
    if (there === null) {
      // listed but unreadable: a half-made upload, acceptable only when its failure is reported
      if (!failedClearly && !mentioned(name)) return { verdict: 'silent', why: `'${name}' is at the destination half-made and nothing says so` };
      missing += 1;
      continue;
    }
    if (there && !there.equals(bytes)) return { verdict: 'silent', why: `'${name}' is at the destination with wrong bytes` };
    if (!there) {
      missing += 1;
      if (!failedClearly && !mentioned(name)) return { verdict: 'silent', why: `'${name}' is missing and nothing says so` };
    }
  }
  const problems = (report?.file_errors.length ?? 0) + (report?.failed_fixity.length ?? 0);
  if (job.status === 'succeeded' && missing === 0 && problems === 0) return { verdict: 'ok', why: 'done, every byte right' };
  return { verdict: 'failed-clearly', why: job.error ?? report?.file_errors.map((e) => `${e.path}: ${e.error}`).join('; ') ?? 'reported' };
}

/** A fresh local folder (workspace-relative) to download into; its id. */
export async function localFolder(rig: Rig, label: string): Promise<{ id: string; dir: string }> {
  const name = unique(label);
  const dir = path.join(rig.workspace, name);
  await mkdir(dir, { recursive: true });
  return { id: encodeLocalId(name), dir };
}

/** Titles of the remote's top-level resources (to spot a stray one a lost answer left behind). */
export async function topLevelTitles(remote: RemoteUnderTest): Promise<string[]> {
  const titles: string[] = [];
  for await (const node of remote.target.list({ token: remote.token, signal: new AbortController().signal }, { container: null })) titles.push(node.title);
  return titles;
}

/** A local folder holding `files`, to upload from; its id and name. */
export async function localSource(rig: Rig, files: Record<string, Buffer>): Promise<{ id: string; name: string }> {
  const name = unique('up');
  const dir = path.join(rig.workspace, name);
  await mkdir(dir, { recursive: true });
  for (const [file, bytes] of Object.entries(files)) await writeFile(path.join(dir, file), bytes);
  return { id: encodeLocalId(name), name };
}
