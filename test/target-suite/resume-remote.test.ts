import type { Dirent } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { isFinishedStatus, type Job } from '../../shared/api.js';
import { makeConfig, type FerryConfig } from '../../electron/core/config.js';
import { createCore, type FerryCore } from '../../electron/core/ferry-core.js';
import { MemorySecretStore } from '../../electron/core/keychain/memory.js';
import { fastPathOn } from '../../electron/core/fast-paths.js';
import type { Entry, Target } from '../../electron/core/target.js';
import { encodeLocalId, LocalTarget } from '../../electron/core/targets/local/index.js';
import { createInvenioTarget } from '../../electron/core/targets/invenio/index.js';
import { createZenodoTarget } from '../../electron/core/targets/zenodo/index.js';
import { createFigshareTarget } from '../../electron/core/targets/figshare/index.js';
import { createDataverseTarget, datasetId } from '../../electron/core/targets/dataverse/index.js';
import { createGithubTarget } from '../../electron/core/targets/github/index.js';
import { createGitlabTarget } from '../../electron/core/targets/gitlab/index.js';
import { startInvenioEmulator } from '../emulators/invenio/emulator.js';
import { startZenodoEmulator } from '../emulators/zenodo/emulator.js';
import { startFigshareEmulator } from '../emulators/figshare/emulator.js';
import { startDataverseEmulator } from '../emulators/dataverse/emulator.js';
import { startOsfEmulator } from '../emulators/osf/emulator.js';
import { FaultPlan } from '../emulators/shared/faults.js';
import { createOsfTarget } from '../../electron/core/targets/osf/index.js';
import { createWebdavTarget } from '../../electron/core/targets/webdav/index.js';
import { startWebdavFaultProxy } from '../webdav/fault-proxy.js';
import { rcloneUnavailableReason, startRcloneWebdav } from '../webdav/rclone-webdav.js';
import { startGithubEmulator } from '../emulators/github/server.js';
import { startGitlabEmulator } from '../emulators/gitlab/server.js';
import { entriesFrom, writeOptions } from './test-entries.js';

/**
 * Resume (issue #18 item 5) on the remote targets that write file by file: the record
 * services on their emulators, OSF on its emulator, and WebDAV on a real server (rclone serve
 * webdav, its PUTs counted by a proxy in front of it). A transfer
 * into an existing record, cancelled once its first files are in, then resumed
 * (`POST /jobs/<t>/resume/`: JobService.resumeFinished), sends none of the files the first
 * run completed again — they come from the job's journal (jobs/resume-journal.ts), which
 * each target feeds by WriteOptions.onFileWritten — and ends with every file there once. A
 * transfer to a new record, paused in the middle, keeps that record (remote/new-record.ts)
 * and goes on in it when resumed, the same way. The uploads are counted where they arrive,
 * at the service's emulator.
 */
const FILES = 8;
/** the source holds this file (0-based) back until the first run is cancelled */
const HELD = 4;
const study: Record<string, string> = Object.fromEntries(Array.from({ length: FILES }, (_, i) => [`f${i}.txt`, `file ${i}\n`.repeat(20 + i)]));

interface Service {
  /** the destination target, on the emulator */
  target(config: FerryConfig): Target;
  token: string;
  /** the requests so far that began sending one file's bytes */
  uploads(): number;
  /** files the destination holds whole now (anywhere); a real server's are counted on its disk */
  stored(): number | Promise<number>;
  /** records (drafts, items, datasets; top folders) there are now */
  records(): number | Promise<number>;
  close(): Promise<void>;
}

const SERVICES: { name: string; target: string; unavailable?: string | null; start(): Promise<Service> }[] = [
  {
    name: 'OSF',
    target: 'osf',
    async start() {
      const emulator = await startOsfEmulator();
      const token = emulator.state.addToken(emulator.state.addUser('Resume').id);
      const { nodes, files, requests } = emulator.state;
      return {
        target: (config) => createOsfTarget({ ...config, remotes: { ...config.remotes, osfApiUrl: emulator.apiUrl } }, new MemorySecretStore(), { ratePerSecond: 1000, retries: 0 }),
        token,
        // WaterButler's upload: a PUT with `kind=file` (new) or to the file's own URL (update); folders are `kind=folder`
        uploads: () => requests.filter((request) => request.server === 'files' && request.method === 'PUT' && !request.url.includes('kind=folder')).length,
        stored: () => [...files.values()].filter((file) => file.kind === 'file' && !nodes.get(file.nodeId)?.deleted).length,
        records: () => [...nodes.values()].filter((node) => !node.deleted && node.parent === null).length,
        close: () => emulator.close(),
      };
    },
  },
  {
    // a real server: rclone serve webdav, behind a proxy that counts what reaches it
    name: 'WebDAV (rclone serve webdav)',
    target: 'webdav',
    unavailable: rcloneUnavailableReason(),
    async start() {
      const server = await startRcloneWebdav();
      let puts = 0;
      const proxy = await startWebdavFaultProxy(server.url, new FaultPlan(), { onExchange: ({ method, status }) => void (method === 'PUT' && status < 300 && puts++) });
      const listed = async (recursive: boolean) => (await readdir(server.dataDir, { recursive, withFileTypes: true })) as Dirent[];
      return {
        target: () => createWebdavTarget(makeConfig({ dataDir: server.dataDir }), new MemorySecretStore(), { retries: 0, timeoutMs: 10_000 }),
        token: JSON.stringify({ url: proxy.url, username: server.username, password: server.password }),
        uploads: () => puts,
        // Ferry's hidden temporaries are not counted
        stored: async () => (await listed(true)).filter((item) => item.isFile() && !item.name.startsWith('.')).length,
        records: async () => (await listed(false)).filter((item) => item.isDirectory()).length,
        close: async () => {
          await proxy.close();
          await server.stop();
        },
      };
    },
  },
  {
    name: 'InvenioRDM',
    target: 'invenio',
    async start() {
      const emulator = await startInvenioEmulator();
      return {
        target: (config) => createInvenioTarget(config, new MemorySecretStore(), { defaultUrl: emulator.url, ratePerSecond: 1000, retries: 0 }),
        token: 'invenio-token',
        uploads: () => emulator.state.requests.filter((request) => /^PUT .*\/draft\/files\/[^/]+\/content$/.test(request)).length,
        stored: () => [...emulator.state.records.values()].flatMap((record) => record.files).filter((file) => file.committed).length,
        records: () => emulator.state.records.size,
        close: () => emulator.close(),
      };
    },
  },
  {
    name: 'Zenodo',
    target: 'zenodo',
    async start() {
      const emulator = await startZenodoEmulator();
      return {
        target: (config) => createZenodoTarget({ ...config, remotes: { ...config.remotes, zenodoUrl: emulator.url } }, new MemorySecretStore(), { ratePerSecond: 1000, retries: 0 }),
        token: 'zenodo-token',
        uploads: () => emulator.state.requests.filter((request) => /^PUT .*\/draft\/files\/[^/]+\/content$/.test(request)).length,
        stored: () => [...emulator.state.records.values()].flatMap((record) => record.files).filter((file) => file.committed).length,
        records: () => emulator.state.records.size,
        close: () => emulator.close(),
      };
    },
  },
  {
    name: 'figshare',
    target: 'figshare',
    async start() {
      const emulator = await startFigshareEmulator({ processingReads: 0 });
      return {
        target: (config) =>
          createFigshareTarget({ ...config, remotes: { ...config.remotes, figshareApiUrl: emulator.url } }, new MemorySecretStore(), { ratePerSecond: 1000, retries: 0, downloadUrl: emulator.downloadUrl }),
        token: 'figshare-token',
        // step 1 of figshare's upload, "initiate": a new file record for the bytes to come
        uploads: () => emulator.state.requests.filter((request) => /^POST .*\/account\/articles\/\d+\/files$/.test(request)).length,
        stored: () => [...emulator.state.articles.values()].flatMap((article) => article.files).filter((file) => file.status !== 'created').length,
        records: () => emulator.state.articles.size,
        close: () => emulator.close(),
      };
    },
  },
  {
    name: 'Dataverse',
    target: 'dataverse',
    async start() {
      const emulator = await startDataverseEmulator();
      return {
        target: (config) => createDataverseTarget(config, new MemorySecretStore(), { defaultUrl: emulator.url, ratePerSecond: 1000, retries: 0 }),
        token: 'dv-token-1111',
        uploads: () => emulator.state.requests.filter((request) => request.method === 'POST' && /^\/api\/datasets\/\d+\/add$/.test(request.path)).length,
        stored: () => [...emulator.state.datasets.values()].flatMap((dataset) => emulator.state.latest(dataset)).length,
        records: () => emulator.state.datasets.size,
        close: () => emulator.close(),
      };
    },
  },
];

/** Polls `value` every 20 ms until it is truthy (at most 30 s). */
async function until<T>(what: string, value: () => T | undefined | false | Promise<T | undefined | false>): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const found = await value();
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Holds one file's bytes back until opened: the first run is cancelled while it waits. */
class Hold {
  reached = false;
  private let: () => void = () => undefined;
  private readonly released = new Promise<void>((resolve) => (this.let = resolve));
  release(): void {
    this.let();
  }
  wait(): Promise<void> {
    this.reached = true;
    return this.released;
  }
}

/** The workspace as a source whose file number HELD opens only once the hold is released (no whole-file reads: every byte through open()). */
function heldSource(local: Target, hold: () => Hold): Target {
  return {
    info: { ...local.info, name: 'held', readable_name: 'Held folder' },
    list: (ctx, scope) => local.list(ctx, scope),
    detail: (ctx, id) => local.detail(ctx, id),
    write: (ctx, containerId, entries, options) => local.write(ctx, containerId, entries, options),
    async read(ctx, id) {
      const read = await local.read(ctx, id);
      async function* entries(): AsyncIterable<Entry> {
        let files = 0;
        for await (const entry of read.entries) {
          if (entry.kind === 'folder') {
            yield entry;
            continue;
          }
          const index = files++;
          const { path: entryPath, kind, size, mtime, hashes } = entry;
          yield { path: entryPath, kind, size, mtime, hashes, open: async () => (index === HELD ? hold().wait().then(() => entry.open()) : entry.open()) };
        }
      }
      return { title: read.title, root: read.root, entries: entries() };
    },
  };
}

/** A new temp root with a data directory and a workspace holding `folders` (folder → file → text). */
async function freshWorld(label: string, folders: Record<string, Record<string, string>>): Promise<{ root: string; config: FerryConfig }> {
  const root = await mkdtemp(path.join(os.tmpdir(), `ferry-resume-${label}-`));
  const config = makeConfig({ dataDir: path.join(root, 'data'), workspace: path.join(root, 'workspace'), jobConcurrency: 1 });
  for (const [folder, files] of Object.entries(folders)) {
    await mkdir(path.join(config.workspace, folder), { recursive: true });
    for (const [name, text] of Object.entries(files)) await writeFile(path.join(config.workspace, folder, name), text);
  }
  return { root, config };
}

/** The core every case here runs (again, after a restart): the workspace as the `held` source, and `destination`. */
function heldCore(config: FerryConfig, destination: (c: FerryConfig) => Target, hold: () => Hold): Promise<FerryCore> {
  return createCore(config, { secrets: new MemorySecretStore(), targets: (c) => [heldSource(new LocalTarget({ root: c.workspace }), hold), destination(c)] });
}

for (const kind of SERVICES) {
  if (kind.unavailable) {
    console.warn(`[resume-remote] ${kind.name} not run: ${kind.unavailable}`);
    describe.skip(`a transfer to ${kind.name} cancelled and resumed (${kind.unavailable})`, () => it('is not run here', () => undefined));
    continue;
  }
  describe(`a transfer to ${kind.name} cancelled and resumed`, () => {
    let root: string;
    let core: FerryCore;
    let service: Service;
    let hold = new Hold();

    beforeAll(async () => {
      let config: FerryConfig;
      ({ root, config } = await freshWorld(kind.target, { Seed: { 'seed.txt': 'seed\n' }, Study: study }));
      service = await kind.start();
      core = await heldCore(config, (c) => service.target(c), () => hold);
    });
    afterEach(() => hold.release());
    afterAll(async () => {
      await core?.close();
      await service?.close();
      if (root) await rm(root, { recursive: true, force: true });
    });

    const tokens = () => ({ source: core.accessKey, destination: service.token });

    async function submit(folder: string, containerId: string | null): Promise<string> {
      const source = { target: 'held', resourceId: encodeLocalId(folder) };
      const job = await core.jobs.submit({
        kind: 'transfer',
        target: kind.target,
        resource_id: containerId,
        source: { target: 'held', resource_id: source.resourceId },
        params: { source, containerId, duplicateAction: 'update', provenance: false },
        tokens: tokens(),
      });
      return job.ticket_number;
    }

    /** files the job's resume journal holds as done (jobs/resume-journal.ts: one `{"f": …}` line each) */
    const journaled = async (ticket: string) => (await readFile(path.join(root, 'data', 'jobs', `${ticket}.journal`), 'utf8').catch(() => '')).split('\n').filter((line) => line.startsWith('{"f":')).length;

    const finished = (ticket: string) => until<Job>(`job ${ticket} to end`, () => ((job) => job && isFinishedStatus(job.status) && job)(core.jobs.get(ticket)));

    it('sends no file the first run completed again', { timeout: 60_000 }, async () => {
      // the record the files go into
      const seeded = await finished(await submit('Seed', null));
      expect(seeded.status, seeded.error ?? '').toBe('succeeded');
      const container = seeded.report!.new_resource!.id;
      const storedBefore = await service.stored();

      const ticket = await submit('Study', container);
      await until('the held file to be reached', () => hold.reached);
      // a target with several files in flight opens the held one before those ahead of it are
      // in, and a file is journaled only once its answer is read, after the service stored it
      await until('the files before the held one to be journaled', async () => (await journaled(ticket)) >= HELD);
      const inBeforeCancel = (await service.stored()) - storedBefore;
      // the cancel aborts the run at once, then waits for it to end: the held file may go on (and stop)
      const cancelled = core.jobs.cancel(ticket);
      hold.release();
      await cancelled;
      expect((await finished(ticket)).status).toBe('cancelled');
      const uploadsFirstRun = service.uploads();
      expect(inBeforeCancel).toBeGreaterThanOrEqual(HELD - 1);

      const resumed = await core.jobs.resumeFinished(ticket, tokens());
      const job = await finished(resumed.ticket_number);
      expect(job.status, job.error ?? '').toBe('succeeded');
      // the files the first run completed came from its journal …
      expect(job.resumed?.from).toBe(ticket);
      expect(job.resumed?.files_already_done).toBeGreaterThanOrEqual(HELD - 1);
      expect(job.report?.already_done).toHaveLength(job.resumed!.files_already_done);
      // … and were not sent again: the resumed run began an upload only for the others
      const uploadsResumed = service.uploads() - uploadsFirstRun;
      expect(uploadsResumed, `${uploadsResumed} uploads begun by the resumed run`).toBeLessThanOrEqual(FILES - job.resumed!.files_already_done);
      // every file there, once
      expect((await service.stored()) - storedBefore).toBe(FILES);
    });

    it('paused while filling a new record, keeps it and goes on in it', { timeout: 60_000 }, async () => {
      hold = new Hold();
      const [recordsBefore, storedBefore] = [await service.records(), await service.stored()];
      const ticket = await submit('Study', null);
      await until('the held file to be reached', () => hold.reached);
      await until('the files before the held one to be journaled', async () => (await journaled(ticket)) >= HELD);
      const pausing = core.jobs.pause(ticket);
      hold.release();
      await pausing;
      await until('the job to be paused', () => core.jobs.get(ticket)?.status === 'paused');
      const uploadsFirstRun = service.uploads();
      // not removed as a cancel removes it: the resumed run goes on in it
      expect((await service.records()) - recordsBefore).toBe(1);

      await core.jobs.resume(ticket);
      const job = await finished(ticket);
      expect(job.status, job.error ?? '').toBe('succeeded');
      expect(job.resumed?.files_already_done).toBeGreaterThanOrEqual(HELD - 1);
      const uploadsResumed = service.uploads() - uploadsFirstRun;
      expect(uploadsResumed, `${uploadsResumed} uploads begun by the resumed run`).toBeLessThanOrEqual(FILES - job.resumed!.files_already_done);
      // one record, holding every file once
      expect((await service.records()) - recordsBefore).toBe(1);
      expect((await service.stored()) - storedBefore).toBe(FILES);
      // the report names each file once: written by this run, already done by the first (its
      // journal), or found already stored (a file the first run finished after the pause was
      // asked for, so never journalled: the duplicate rule leaves it, and it is not sent again)
      expect([...job.report!.resources_created, ...job.report!.resources_ignored, ...job.report!.already_done!].filter((p) => p !== 'Study').sort()).toEqual(Object.keys(study).map((name) => `Study/${name}`));
    });
  });
}

/**
 * Dataverse with direct upload registers the files it sent to storage with one addFiles at the
 * end of the write (dataverse-target.ts REGISTER_BATCH), so a pause can fall between a file's
 * upload and its registration. Such a file is not reported done; its upload journal
 * (upload-journal.ts) lets the resumed run register it without sending its bytes again.
 */
describe('a direct-upload transfer to Dataverse paused between upload and registration', () => {
  let root: string;
  let core: FerryCore;
  let emulator: Awaited<ReturnType<typeof startDataverseEmulator>>;
  let hold = new Hold();

  beforeAll(async () => {
    let config: FerryConfig;
    ({ root, config } = await freshWorld('dataverse-direct', { Study: study }));
    emulator = await startDataverseEmulator({ directUpload: true });
    core = await heldCore(config, (c) => createDataverseTarget(c, new MemorySecretStore(), { defaultUrl: emulator.url, ratePerSecond: 1000, retries: 0 }), () => hold);
  });
  afterEach(() => hold.release());
  afterAll(async () => {
    await core?.close();
    await emulator?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

  const addFiles = () => emulator.state.requests.filter((r) => r.method === 'POST' && /^\/api\/datasets\/\d+\/addFiles$/.test(r.path));
  const storagePuts = () => emulator.state.requests.filter((r) => r.server === 's3').length;
  /** direct uploads the upload journal holds (one `<key>.json` each), every one of them in storage */
  const uploadRecords = async () => (await readdir(path.join(root, 'data', 'dataverse-uploads')).catch(() => [] as string[])).filter((name) => name.endsWith('.json')).length;

  /**
   * A transfer into a dataset made for it, paused once the files before the held one are in
   * storage — or, with `inStorage`, once that many are (files after the held one go to storage
   * beside it, DATAVERSE_IN_FLIGHT, and wait for its turn to be registered).
   */
  async function pausedBeforeRegistration(title: string, inStorage = HELD) {
    hold = new Hold();
    const dataset = emulator.state.addDataset(1, title);
    const source = { target: 'held', resourceId: encodeLocalId('Study') };
    const containerId = datasetId(dataset.id);
    const { ticket_number: ticket } = await core.jobs.submit({
      kind: 'transfer',
      target: 'dataverse',
      resource_id: containerId,
      source: { target: 'held', resource_id: source.resourceId },
      params: { source, containerId, duplicateAction: 'update', provenance: false },
      tokens: { source: core.accessKey, destination: 'dv-token-1111' },
    });
    await until('the held file to be reached', () => hold.reached);
    // the files before the held one are in storage, waiting for their addFiles, and Ferry knows
    // it: a single PUT is journaled once storage has answered it (upload-journal.ts), so an
    // object storage holds but whose answer Ferry had not read yet is still sent again
    await until('the files before the held one in storage and journaled', async () => (await uploadRecords()) >= inStorage);
    const pausing = core.jobs.pause(ticket);
    hold.release();
    await pausing;
    await until('the job to be paused', () => core.jobs.get(ticket)?.status === 'paused');
    // nothing registered, nothing reported done
    expect(dataset.draft!.files).toHaveLength(0);
    const journal = await readFile(path.join(root, 'data', 'jobs', `${ticket}.journal`), 'utf8').catch(() => '');
    expect(journal.split('\n').filter((line) => line.startsWith('{"f":'))).toHaveLength(0);
    return { ticket, dataset, addFilesBefore: addFiles().length, putsBefore: storagePuts() };
  }

  /** Resumes `ticket`; checks that it succeeded, reporting every file, with each in the dataset once. */
  async function resumedWithEachFileOnce(ticket: string, dataset: { draft: { files: { label: string }[] } | null }): Promise<void> {
    await core.jobs.resume(ticket);
    const job = await until<Job>('the job to end', () => ((j) => j && isFinishedStatus(j.status) && j)(core.jobs.get(ticket)));
    expect(job.status, job.error ?? '').toBe('succeeded');
    expect(dataset.draft!.files.map((f) => f.label).sort()).toEqual(Object.keys(study).sort());
    expect(job.report!.resources_created.filter((p) => p !== 'Study').sort()).toEqual(Object.keys(study).map((name) => `Study/${name}`));
    expect(await readdir(path.join(root, 'data', 'dataverse-uploads')), 'upload journal left').toEqual([]);
  }

  it('reports none of them done, then registers each once without sending it again', { timeout: 60_000 }, async () => {
    const { ticket, dataset, addFilesBefore, putsBefore } = await pausedBeforeRegistration('Direct study');
    await resumedWithEachFileOnce(ticket, dataset);
    // the uploads the first run finished were registered from the journal, not sent again
    expect(storagePuts() - putsBefore).toBeLessThanOrEqual(FILES - HELD);
    // each file named once by addFiles: none registered twice
    const registered = addFiles().slice(addFilesBefore).flatMap((r) => (JSON.parse(r.jsonData!) as { fileName: string }[]).map((f) => f.fileName));
    expect(registered.sort()).toEqual(Object.keys(study).sort());
  });

  // several in flight (parallel-writes): the files after the held one are in storage when it pauses
  it.runIf(fastPathOn('parallel-writes'))('with the files after the held one in storage too, registers each once and sends only the held one', { timeout: 60_000 }, async () => {
    const { ticket, dataset, addFilesBefore, putsBefore } = await pausedBeforeRegistration('Direct study, in flight', FILES - 1);
    await resumedWithEachFileOnce(ticket, dataset);
    expect(storagePuts() - putsBefore).toBeLessThanOrEqual(1);
    const registered = addFiles().slice(addFilesBefore).flatMap((r) => (JSON.parse(r.jsonData!) as { fileName: string }[]).map((f) => f.fileName));
    expect(registered.sort()).toEqual(Object.keys(study).sort());
  });

  it('sends a file again when storage no longer has its upload (addFiles refuses it)', { timeout: 60_000 }, async () => {
    const { ticket, dataset, putsBefore } = await pausedBeforeRegistration('Direct study, storage emptied');
    // storage dropped the unregistered objects (the installation's clean-up of temporary uploads)
    emulator.state.objects.clear();
    await resumedWithEachFileOnce(ticket, dataset);
    // every file's bytes went again; the refused registrations left no file behind
    expect(storagePuts() - putsBefore).toBe(FILES);
  });
});

/**
 * The git forges write a new top-level upload as a new repository and then ONE commit in ONE
 * push (forge/git-push-write.ts), so no file is ever stored before the push. What a job must not
 * lose is the repository itself: it is told to the job's journal as soon as it exists
 * (WriteOptions.onNewResource), a pause keeps it (remote/new-record.ts), and the resumed run
 * pushes into it — not into a second repository "Study-2". Counted at the emulator: the
 * repositories there and the file blobs each push carried.
 */
interface Forge {
  target(config: FerryConfig): Target;
  token: string;
  /** the live repositories (projects) there, by name: one a deleted-but-kept GitLab project is not */
  repos(): { id: string; name: string; files: Record<string, string> }[];
  /** the file blobs each push so far carried */
  pushedBlobs(): number[];
  /** deletes a repository as its owner would in the service's UI */
  deleteByOwner(id: string): Promise<void>;
  close(): Promise<void>;
}

const FORGES: { name: string; target: string; start(): Promise<Forge> }[] = [
  {
    name: 'GitHub',
    target: 'github',
    async start() {
      const emulator = await startGithubEmulator();
      const token = 'ghp_resume_alice';
      emulator.state.tokens.set(token, { id: 1, login: 'alice' });
      // may delete repositories (the `delete_repo` scope): a cancel removes what it made
      emulator.state.deleteRepoTokens.add(token);
      // a new repository's git endpoint answers 404 for a moment (docs/targets/github.md finding
      // 10): the first run waits it out before it hashes, where it is paused
      emulator.state.newRepoGitDelay = 2;
      const text = (files: Record<string, Buffer>) => Object.fromEntries(Object.entries(files).map(([name, bytes]) => [name, bytes.toString('utf8')]));
      return {
        target: (config) => createGithubTarget({ ...config, remotes: { ...config.remotes, githubApiUrl: emulator.url } }, new MemorySecretStore(), { writeSpacingMs: 0, maxRateWaitMs: 5000 }),
        token,
        repos: () => emulator.state.repos.map((repo) => ({ id: `r${repo.id}`, name: repo.name, files: text(emulator.state.files(repo)) })),
        pushedBlobs: () => emulator.state.pushes.map((push) => push.blobs),
        async deleteByOwner(id) {
          const repo = emulator.state.repos.find((r) => `r${r.id}` === id)!;
          emulator.state.repos.splice(emulator.state.repos.indexOf(repo), 1);
        },
        close: () => emulator.close(),
      };
    },
  },
  {
    name: 'GitLab (delayed deletion)',
    target: 'gitlab',
    async start() {
      const emulator = await startGitlabEmulator();
      const token = 'glpat-resume-alice';
      emulator.state.tokens.set(token, { id: 7, username: 'alice', name: 'Alice' });
      // newer GitLab: a deleted project stays, renamed and marked, for days (test/emulators/gitlab/server.ts)
      emulator.state.delayedDeletion = true;
      const text = (files: Record<string, Buffer>) => Object.fromEntries(Object.entries(files).map(([name, bytes]) => [name, bytes.toString('utf8')]));
      return {
        target: (config) => createGitlabTarget({ ...config, remotes: { ...config.remotes, gitlabUrl: emulator.url } }, new MemorySecretStore(), { maxRateWaitMs: 5000, ratePerSecond: 1000 }),
        token,
        repos: () => emulator.state.projects.filter((p) => p.markedForDeletionOn === null).map((p) => ({ id: `p${p.id}`, name: p.name, files: text(emulator.state.files(p)) })),
        pushedBlobs: () => emulator.state.pushes.map((push) => push.blobs),
        async deleteByOwner(id) {
          // the owner's DELETE, as GitLab's UI sends it: marked for deletion, not gone
          const response = await fetch(`${emulator.url}/api/v4/projects/${id.slice(1)}`, { method: 'DELETE', headers: { 'private-token': token } });
          expect(response.status).toBe(202);
        },
        close: () => emulator.close(),
      };
    },
  },
];

for (const kind of FORGES) {
  describe(`a transfer to a new ${kind.name} repository stopped before its push`, () => {
    let root: string;
    let core: FerryCore;
    let forge: Forge;
    let config: FerryConfig;
    let hold = new Hold();

    beforeAll(async () => {
      ({ root, config } = await freshWorld(kind.target, { Study: study }));
      forge = await kind.start();
      core = await heldCore(config, (c) => forge.target(c), () => hold);
    });
    afterEach(() => hold.release());
    afterAll(async () => {
      await core?.close();
      await forge?.close();
      if (root) await rm(root, { recursive: true, force: true });
    });

    const tokens = () => ({ source: core.accessKey, destination: forge.token });

    async function submit(): Promise<string> {
      const source = { target: 'held', resourceId: encodeLocalId('Study') };
      const job = await core.jobs.submit({
        kind: 'transfer',
        target: kind.target,
        resource_id: null,
        source: { target: 'held', resource_id: source.resourceId },
        params: { source, containerId: null, duplicateAction: 'update', provenance: false },
        tokens: tokens(),
      });
      return job.ticket_number;
    }

    const finished = (ticket: string) => until<Job>(`job ${ticket} to end`, () => ((job) => job && isFinishedStatus(job.status) && job)(core.jobs.get(ticket)));

    /** Starts the upload and pauses it while the held file is being hashed: the repository exists, nothing is pushed. */
    async function pausedAfterCreate(name: string): Promise<{ ticket: string; made: { id: string; name: string; files: Record<string, string> } }> {
      const before = new Set(forge.repos().map((repo) => repo.id));
      hold = new Hold();
      const ticket = await submit();
      await until('the held file to be reached', () => hold.reached);
      const pausing = core.jobs.pause(ticket);
      hold.release();
      await pausing;
      await until('the job to be paused', () => core.jobs.get(ticket)?.status === 'paused');
      const made = forge.repos().filter((repo) => !before.has(repo.id));
      // kept, as a pause keeps a new record, and still empty: the push never started
      expect(made.map((repo) => repo.name)).toEqual([name]);
      expect(made[0]!.files).toEqual({});
      return { ticket, made: made[0]! };
    }

    it('paused after the repository was made, pushes into it when resumed', { timeout: 60_000 }, async () => {
      const pushesBefore = forge.pushedBlobs().length;
      const { ticket, made } = await pausedAfterCreate('Study');
      expect(forge.pushedBlobs().length).toBe(pushesBefore);

      await core.jobs.resume(ticket);
      const job = await finished(ticket);
      expect(job.status, job.error ?? '').toBe('succeeded');
      // the same repository: no "Study-2" next to it
      expect(job.report?.new_resource?.id).toBe(made.id);
      expect(forge.repos().filter((repo) => repo.name.startsWith('Study')).map((repo) => repo.id)).toEqual([made.id]);
      // every file there once, in one push that carried each of them
      expect(forge.repos().find((repo) => repo.id === made.id)!.files).toEqual(study);
      expect(forge.pushedBlobs().slice(pushesBefore)).toEqual([FILES]);
      expect(job.report!.resources_created.filter((p) => p !== 'Study').sort()).toEqual(Object.keys(study).map((name) => `Study/${name}`));
    });

    it('resumed into a repository that already holds what its push would have put, sends nothing again', { timeout: 60_000 }, async () => {
      // the first run's push landed, but the job never heard (Ferry killed right after it):
      // the same files, written into the repository outside the job
      const { ticket, made } = await pausedAfterCreate('Study-2');
      const landed = await forge.target(config).write({ token: forge.token, signal: new AbortController().signal }, made.id, entriesFrom(study), writeOptions('update'));
      expect(landed.created).toHaveLength(FILES);
      const pushesBefore = forge.pushedBlobs().length;

      await core.jobs.resume(ticket);
      const job = await finished(ticket);
      expect(job.status, job.error ?? '').toBe('succeeded');
      expect(job.report?.new_resource?.id).toBe(made.id);
      // found there with the same bytes: left as it is, no second push, no "Study-3"
      expect(forge.pushedBlobs().length).toBe(pushesBefore);
      expect(job.report!.resources_ignored.sort()).toEqual(Object.keys(study).map((name) => `Study/${name}`));
      expect(forge.repos().find((repo) => repo.id === made.id)!.files).toEqual(study);
      expect(forge.repos().filter((repo) => repo.name.startsWith('Study')).map((repo) => repo.name).sort()).toEqual(['Study', 'Study-2']);
      await forge.deleteByOwner(made.id);
    });

    it('paused, then its repository deleted by its owner: the resumed run makes a new one', { timeout: 60_000 }, async () => {
      // the first test's "Study" is still there
      const { ticket, made } = await pausedAfterCreate('Study-2');
      await forge.deleteByOwner(made.id);

      await core.jobs.resume(ticket);
      const job = await finished(ticket);
      expect(job.status, job.error ?? '').toBe('succeeded');
      // a deleted repository is never pushed into, not even one GitLab keeps marked for deletion
      expect(job.report?.new_resource?.id).not.toBe(made.id);
      const now = forge.repos().filter((repo) => repo.id === job.report?.new_resource?.id);
      expect(now.map((repo) => repo.files)).toEqual([study]);
      // the deleted one's name is free again (GitLab renames a project it keeps), so the new one takes it
      expect(now[0]!.name).toBe('Study-2');
      await forge.deleteByOwner(now[0]!.id);
    });

    it('cancelled after the repository was made, removes it again', { timeout: 60_000 }, async () => {
      const before = forge.repos().length;
      hold = new Hold();
      const ticket = await submit();
      await until('the held file to be reached', () => hold.reached);
      const cancelled = core.jobs.cancel(ticket);
      hold.release();
      await cancelled;
      const job = await finished(ticket);
      expect(job.status).toBe('cancelled');
      // nothing left behind (GitLab: marked for deletion, under another name)
      expect(forge.repos().length).toBe(before);
    });

    it('Ferry stopped after the repository was made: the job, resumed after the restart, pushes into it', { timeout: 60_000 }, async () => {
      const before = new Set(forge.repos().map((repo) => repo.id));
      const pushesBefore = forge.pushedBlobs().length;
      hold = new Hold();
      const ticket = await submit();
      await until('the held file to be reached', () => hold.reached);
      const closing = core.close();
      hold.release();
      await closing;
      // a stop of Ferry keeps it, as a pause does
      const made = forge.repos().filter((repo) => !before.has(repo.id));
      expect(made.map((repo) => repo.files)).toEqual([{}]);

      // the restart: the same data directory; the in-memory keychain kept no token, so the job
      // is resumed with the tokens as a person would (POST /jobs/<t>/resume/)
      core = await heldCore(config, (c) => forge.target(c), () => hold);
      const restarted = await finished(ticket);
      const job = restarted.status === 'succeeded' ? restarted : await finished((await core.jobs.resumeFinished(ticket, tokens())).ticket_number);
      expect(job.status, job.error ?? '').toBe('succeeded');
      expect(job.report?.new_resource?.id).toBe(made[0]!.id);
      expect(forge.repos().filter((repo) => !before.has(repo.id)).map((repo) => repo.files)).toEqual([study]);
      expect(forge.pushedBlobs().slice(pushesBefore)).toEqual([FILES]);
    });
  });
}
