// Issue #9 part 3: SIGKILL `ferry serve` at random (seeded) moments during uploads,
// transfers and downloads kept in the library, restart it on the same data directory each
// time, and check that nothing was lost or left half-done. See README.md here.
import { openAsBlob } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Job, ResourceSummary } from '../../../shared/api.js';
import { byMode, modeTimeout, stressRun } from '../../support/stress.js';
import { startOsfEmulator, type OsfEmulator } from '../../emulators/osf/emulator.js';
import { chooseCli, Ferry } from './server.js';
import {
  bagManifest,
  between,
  buildZip,
  bytesFrom,
  hiddenOnly,
  isVisiblePath,
  pick,
  seededRandom,
  sha256,
  snapshot,
  visibleTree,
  zipIsWhole,
  type Snapshot,
} from './world.js';

const KILLS = byMode(5, 50);
const SMALL_FILES = byMode(24, 80);
const BIG_FILES = 2;
const BIG_BYTES = () => between(random, 1, 4) * 1024 * 1024;
const JOB_DEADLINE_MS = 90_000;
const UNEXPECTED = /unexpected error inside Ferry/;

const seed = Number(process.env.FERRY_CRASH_SEED ?? Math.floor(Math.random() * 2 ** 31));
const random = seededRandom(seed);

type Kind = 'upload' | 'transfer' | 'download';
type Variant = 'into-update' | 'into-ignore' | 'top-level' | 'to-osf';

/** What one round may do to the workspace, and what it must have done if its job succeeded. */
interface Expectation {
  kind: Kind;
  variant: Variant | 'keep';
  /** the destination folder for into-* variants ('' unused for top-level) */
  container: string;
  /** path below the destination (or below the new top folder) → sha256 */
  files: Map<string, string>;
  /** top-level variants: names the new folder may take */
  topName?: RegExp;
}

interface Phase {
  killAfterMs: number;
  acknowledged: boolean;
  finishedBeforeKill: boolean;
}

describe('crashes: SIGKILL during uploads, transfers and downloads kept in the library', () => {
  let dir: string;
  let server: Ferry | null = null;
  let osf: OsfEmulator | null = null;
  const outputs: string[] = [];
  afterAll(async () => {
    if (server?.alive) await server.kill();
    await osf?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it(`survives ${KILLS} kills and restarts`, { timeout: modeTimeout(120_000, 1_800_000) }, async () => {
    const cli = chooseCli();
    console.log(`crashes: seed ${seed} (FERRY_CRASH_SEED=${seed} repeats the schedule); ${cli.built ? 'built CLI' : 'CLI from source via tsx'}: ${cli.why}`);
    dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-crashes-'));
    const dataDir = path.join(dir, 'data');
    const workspace = path.join(dir, 'workspace');
    const library = path.join(dataDir, 'library');
    const zipPath = path.join(dir, 'upload.zip');
    const stage = path.join(dir, 'stage');

    // The workspace a person already has: everything here must survive every crash.
    const sourceFiles = new Map<string, Buffer>();
    for (let i = 0; i < SMALL_FILES; i++) sourceFiles.set(`small/s-${String(i).padStart(3, '0')}.txt`, bytesFrom(random, between(random, 1, 48 * 1024)));
    for (let i = 0; i < BIG_FILES; i++) sourceFiles.set(`big-${i}.bin`, bytesFrom(random, BIG_BYTES()));
    for (const [relative, bytes] of sourceFiles) {
      await mkdir(path.dirname(path.join(workspace, 'SourceA', relative)), { recursive: true });
      await writeFile(path.join(workspace, 'SourceA', relative), bytes);
    }
    const sourceHashes = new Map([...sourceFiles].map(([relative, bytes]) => [relative, sha256(bytes)]));
    sourceFiles.clear();
    await mkdir(path.join(workspace, 'Existing', 'keep'), { recursive: true });
    await writeFile(path.join(workspace, 'Existing', 'keep', 'never-touched.txt'), 'no upload carries this name\n');
    await mkdir(path.join(workspace, 'Dest'), { recursive: true });
    await writeFile(path.join(workspace, 'notes.txt'), 'unrelated\n');

    // An emulated OSF as a remote destination: it outlives every kill (it is another service).
    osf = await startOsfEmulator();
    const osfUser = osf.state.addUser('Crash Tester');
    const osfToken = osf.state.addToken(osfUser.id);
    const osfNode = osf.state.addNode({ title: 'Crash project', owner: osfUser.id });

    const start = async (): Promise<Ferry> => {
      const started = await Ferry.start({ dataDir, workspace, built: cli.built, extraArgs: ['--osf-api-url', osf!.apiUrl] });
      outputs.push('');
      const index = outputs.length - 1;
      started.process.child.stdout?.on('data', () => (outputs[index] = started.output()));
      started.process.child.stderr?.on('data', () => (outputs[index] = started.output()));
      outputs[index] = started.output();
      return started;
    };
    server = await start();
    const topIds = async (ferry: Ferry) =>
      new Map((await ferry.json<ResourceSummary[]>('api_v1/targets/local/resources/?container=None')).map((resource) => [resource.title, resource.id]));
    const ids = await topIds(server);
    const osfProjects = await (await server.fetch('api_v1/targets/osf/resources/?container=None', { headers: { 'service-source-token': osfToken } })).json() as ResourceSummary[];
    const osfProjectId = osfProjects.find((project) => project.title === 'Crash project')?.id;
    expect(osfProjectId, 'the OSF emulator project is listed').toBeDefined();

    // ---- the three kinds of work -----------------------------------------------------------

    const prepareUpload = async (variant: Variant, round: number): Promise<Expectation> => {
      const files = new Map<string, Buffer>();
      const prefix = variant === 'top-level' ? 'Upload/' : '';
      // the same names every round: later rounds meet the files earlier ones wrote
      for (let i = 0; i < SMALL_FILES; i++) files.set(`${prefix}batch/b-${String(i).padStart(3, '0')}.bin`, bytesFrom(random, between(random, 1, 32 * 1024)));
      for (let i = 0; i < BIG_FILES; i++) files.set(`${prefix}big-${i}.bin`, bytesFrom(random, BIG_BYTES()));
      // and some new names, in a new folder
      for (let i = 0; i < 4; i++) files.set(`${prefix}round-${round}/n-${i}.txt`, bytesFrom(random, between(random, 0, 4096)));
      await buildZip(stage, zipPath, files);
      const hashes = new Map([...files].map(([relative, bytes]) => [relative.slice(prefix.length), sha256(bytes)]));
      return variant === 'top-level'
        ? { kind: 'upload', variant, container: '', files: hashes, topName: /^Upload( \(\d+\))?$/ }
        : { kind: 'upload', variant, container: 'Existing', files: hashes };
    };

    const prepareTransfer = async (variant: Variant): Promise<Expectation> => {
      if (variant === 'to-osf') return { kind: 'transfer', variant, container: '', files: new Map([...sourceHashes].map(([relative, hash]) => [`SourceA/${relative}`, hash])) };
      // a person edits some files the transfer will meet, so 'update' has something to replace
      const copies = path.join(workspace, 'Dest', 'SourceA');
      for (const relative of sourceHashes.keys()) {
        if (random() < 0.3) {
          const file = path.join(copies, relative);
          await mkdir(path.dirname(file), { recursive: true });
          await writeFile(file, `edited by hand in round ${random()}\n`);
        }
      }
      const files = new Map([...sourceHashes].map(([relative, hash]) => [`SourceA/${relative}`, hash]));
      return variant === 'top-level'
        ? { kind: 'transfer', variant, container: '', files: new Map(sourceHashes), topName: /^SourceA \(\d+\)$/ }
        : { kind: 'transfer', variant, container: 'Dest', files };
    };

    /** Starts the work; resolves when the client side is done (or cut off by the kill). */
    const begin = (ferry: Ferry, expectation: Expectation, phase: Phase): Promise<string | null> => {
      const action = expectation.variant === 'into-ignore' ? 'ignore' : 'update';
      // the check below compares exactly the files the work names: no provenance record beside them
      const headers = { 'service-destination-token': ferry.key, 'service-source-token': ferry.key, 'duplicate-file-action': action, 'ferry-provenance': 'off' };
      const into =
        expectation.variant === 'to-osf'
          ? `${encodeURIComponent(osfProjectId!)}/`
          : expectation.container === ''
            ? ''
            : `${encodeURIComponent(ids.get(expectation.container)!)}/`;
      const destinationTarget = expectation.variant === 'to-osf' ? 'osf' : 'local';
      if (expectation.variant === 'to-osf') headers['service-destination-token'] = osfToken;
      const acknowledged = async (response: Response): Promise<string> => {
        const body = (await response.json()) as { ticket_number?: string; error?: string };
        if (response.status !== 202) throw new Error(`expected 202, got ${response.status}: ${body.error}`);
        phase.acknowledged = true;
        return body.ticket_number!;
      };
      if (expectation.kind === 'upload') {
        return (async () => {
          const form = new FormData();
          form.set('service-file', await openAsBlob(zipPath), 'upload.zip');
          return acknowledged(await ferry.fetch(`api_v1/targets/local/resources/${into}`, { method: 'POST', headers, body: form }));
        })();
      }
      if (expectation.kind === 'transfer') {
        return (async () => {
          const body = JSON.stringify({ source_target_name: 'local', source_resource_id: ids.get('SourceA') });
          return acknowledged(
            await ferry.fetch(`api_v1/targets/${destinationTarget}/resources/${into}`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body }),
          );
        })();
      }
      return (async () => {
        const response = await ferry.fetch(`api_v1/targets/local/resources/${encodeURIComponent(ids.get('SourceA')!)}.zip/?keep=1`, {
          headers: { 'service-source-token': ferry.key },
        });
        if (response.status !== 200) throw new Error(`download: ${response.status} ${await response.text()}`);
        phase.acknowledged = true;
        await response.arrayBuffer();
        return null;
      })();
    };

    const waitForJobs = async (ferry: Ferry): Promise<Job[]> => {
      const deadline = Date.now() + JOB_DEADLINE_MS;
      for (;;) {
        const jobs = await ferry.jobs();
        const open = jobs.filter((job) => job.status === 'queued' || job.status === 'running');
        if (open.length === 0) return jobs;
        if (Date.now() > deadline) {
          throw new Error(`jobs stuck ${JOB_DEADLINE_MS / 1000} s after the restart: ${open.map((job) => `${job.kind} ${job.ticket_number} ${job.status}`).join(', ')}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };

    // ---- the checks after every restart -----------------------------------------------------

    const problems: string[] = [];
    const fail = (round: number, message: string) => {
      const problem = `round ${round} (seed ${seed}): ${message}`;
      console.log(`crashes: PROBLEM ${problem}`);
      problems.push(problem);
    };
    const seenTickets = new Set<string>();
    const figures = { osf: 0, kills: 0, upload: 0, transfer: 0, download: 0, recoveryKills: 0, beforeAck: 0, afterFinish: 0, hiddenLeft: 0, succeeded: 0, failed: 0, filesLost: 0, stuck: 0 };
    const failures = new Map<string, number>();

    const checkRound = async (ferry: Ferry, round: number, before: Snapshot, expectation: Expectation | null): Promise<void> => {
      let jobs: Job[];
      try {
        jobs = await waitForJobs(ferry);
      } catch (error) {
        figures.stuck += 1;
        fail(round, (error as Error).message);
        jobs = await ferry.jobs();
      }
      const fresh = jobs.filter((job) => !seenTickets.has(job.ticket_number));
      for (const job of fresh) seenTickets.add(job.ticket_number);
      if (fresh.length > 1) fail(round, `${fresh.length} new jobs from one request`);
      const job = fresh[0] ?? null;
      if (job) {
        if (job.status === 'succeeded') figures.succeeded += round > 0 ? 1 : 0;
        else if (job.status === 'failed') {
          figures.failed += 1;
          failures.set(job.error ?? '(none)', (failures.get(job.error ?? '(none)') ?? 0) + 1);
          const error = job.error ?? '';
          if (!/\w+ \w+ \w+/.test(error) || UNEXPECTED.test(error) || error.includes(dir) || /\n\s+at /.test(error)) {
            fail(round, `job ${job.ticket_number} failed without a readable reason: ${JSON.stringify(error)}`);
          }
        } else if (job.status !== 'queued' && job.status !== 'running') fail(round, `job ended ${job.status}`);
      }

      if (expectation?.variant === 'to-osf') checkOsf(round, job);
      const after = await snapshot(workspace);
      // Nothing a person already had may change, except a file this round may replace.
      const mayReplace = (file: string): Set<string> | null => {
        if (!expectation || expectation.container === '' || !file.startsWith(`${expectation.container}/`)) return null;
        if (expectation.variant === 'into-ignore') return null;
        const hash = expectation.files.get(file.slice(expectation.container.length + 1));
        return hash ? new Set([hash]) : null;
      };
      for (const [file, hash] of before) {
        if (!isVisiblePath(file)) continue;
        const now = after.get(file);
        if (now === undefined) {
          figures.filesLost += 1;
          fail(round, `${file} was there before the crash and is gone`);
        } else if (now !== hash && !mayReplace(file)?.has(now)) {
          figures.filesLost += 1;
          fail(round, `${file} changed to bytes that are neither its old ones nor the upload's`);
        }
      }
      // Every new visible file is one the round may create, whole.
      const topsBefore = new Set([...before.keys()].map((file) => file.split('/')[0]!));
      const newTops = new Set<string>();
      for (const [file, hash] of after) {
        if (before.has(file) || !isVisiblePath(file)) continue;
        let expected: string | undefined;
        if (expectation?.topName) {
          const [top, ...rest] = file.split('/');
          if (!topsBefore.has(top!) && expectation.topName.test(top!)) {
            newTops.add(top!);
            expected = expectation.files.get(rest.join('/'));
          }
        } else if (expectation && file.startsWith(`${expectation.container}/`)) {
          expected = expectation.files.get(file.slice(expectation.container.length + 1));
        }
        if (expected === undefined) fail(round, `unexpected visible file ${file}`);
        else if (expected !== hash) fail(round, `${file} is not whole (its bytes differ from the source's)`);
      }
      if (expectation?.topName && newTops.size > 1) {
        fail(round, `one ${expectation.kind} left ${newTops.size} new top-level folders: ${[...newTops].join(', ')} (a resumed job must not leave a partial copy beside a whole one)`);
      }
      // A succeeded job did everything it reported, and everything it was asked.
      if (job?.status === 'succeeded' && expectation && expectation.kind !== 'download') {
        const report = job.report!;
        if (report.file_errors.length > 0) fail(round, `succeeded with file errors: ${JSON.stringify(report.file_errors.slice(0, 3))}`);
        let base = expectation.container;
        if (expectation.topName) {
          base = report.new_resource?.title ?? '';
          if (!expectation.topName.test(base)) fail(round, `new resource named '${base}'`);
        }
        for (const [relative, hash] of expectation.files) {
          const file = `${base}/${relative}`;
          const now = after.get(file);
          const old = before.get(file);
          const wanted = expectation.variant === 'into-ignore' && old !== undefined ? old : hash;
          if (now !== wanted) fail(round, `${file}: the job succeeded but the file ${now === undefined ? 'is missing' : 'has the wrong bytes'}`);
        }
        for (const reported of [...report.resources_created, ...report.resources_updated]) {
          const file = expectation.container === '' ? reported : `${expectation.container}/${reported}`;
          if (!after.has(file) && !(await isFolder(path.join(workspace, file)))) fail(round, `reported ${file} is not there`);
        }
      }
      // No temporary file visible, on disk or through the API.
      const hidden = hiddenOnly(after);
      figures.hiddenLeft = Math.max(figures.hiddenLeft, hidden.length);
      for (const file of hidden) if (!/(^|\/)\.ferry-\d+-[0-9a-f]+\.part$/.test(file)) fail(round, `unknown hidden file ${file}`);
      const tree = await visibleTree(workspace);
      const listed = await listedPaths(ferry);
      for (const entry of listed) if (!tree.files.has(entry) && !tree.folders.has(entry)) fail(round, `the API lists '${entry}', which a person cannot see`);
      for (const entry of [...tree.files, ...tree.folders]) if (!listed.has(entry)) fail(round, `the API does not list '${entry}'`);
      await checkLibrary(ferry, round);
      // Outside the workspace too: once every job has ended, no spooled upload is left.
      const spooled = await readdir(path.join(dataDir, 'spool')).catch(() => [] as string[]);
      if (spooled.length > 0) fail(round, `spooled uploads left after every job ended: ${spooled.join(', ')}`);
    };

    /** Every file in the OSF project is whole (each version one of SourceA's files); a succeeded job put all of them there. */
    const checkOsf = (round: number, job: Job | null) => {
      const state = osf!.state;
      const pathOf = (fileId: string): string => {
        const file = state.files.get(fileId)!;
        if (file.parentId === null) return '';
        const parent = pathOf(file.parentId);
        return parent === '' ? file.name : `${parent}/${file.name}`;
      };
      const present = new Set<string>();
      for (const file of state.files.values()) {
        if (file.nodeId !== osfNode.id || file.kind !== 'file') continue;
        const relative = pathOf(file.id);
        present.add(relative);
        const expected = sourceHashes.get(relative.replace(/^SourceA\//, ''));
        if (!relative.startsWith('SourceA/') || expected === undefined) fail(round, `unexpected file on OSF: ${relative}`);
        else if (file.versions.some((version) => version.sha256 !== expected)) fail(round, `OSF holds a version of ${relative} that is not whole`);
      }
      if (job?.status === 'succeeded') {
        for (const relative of sourceHashes.keys()) if (!present.has(`SourceA/${relative}`)) fail(round, `the OSF transfer succeeded but SourceA/${relative} is not on OSF`);
      }
    };

    const isFolder = async (absolute: string) => {
      try {
        await readdir(absolute);
        return true;
      } catch {
        return false;
      }
    };

    const listedPaths = async (ferry: Ferry): Promise<Set<string>> => {
      const all = await ferry.json<ResourceSummary[]>('api_v1/targets/local/resources/');
      const byId = new Map(all.map((resource) => [resource.id, resource]));
      const pathOf = (resource: ResourceSummary): string => {
        const parent = resource.container === 'None' ? undefined : byId.get(resource.container);
        return parent ? `${pathOf(parent)}/${resource.title}` : resource.title;
      };
      return new Set(all.map(pathOf));
    };

    /** The library holds only whole archives of SourceA, and the API lists exactly those. */
    const checkLibrary = async (ferry: Ferry, round: number): Promise<void> => {
      let names: string[] = [];
      try {
        names = await readdir(library);
      } catch {
        /* no download kept yet */
      }
      const visible = names.filter((name) => !name.startsWith('.'));
      // a kept copy cut off by the kill is swept at the next start
      for (const name of names.filter((name) => name.startsWith('.'))) fail(round, `hidden file left in the library after a restart: ${name}`);
      for (const name of visible) {
        const file = path.join(library, name);
        if (!zipIsWhole(file)) {
          fail(round, `the library holds a half-written archive: ${name}`);
          continue;
        }
        const manifest = bagManifest(file);
        const payload = new Map([...(manifest ?? [])].map(([entry, hash]) => [entry.replace(/^data\/(SourceA\/)?/, ''), hash]));
        const whole = payload.size === sourceHashes.size && [...sourceHashes].every(([relative, hash]) => payload.get(relative) === hash);
        if (!whole) fail(round, `the kept archive ${name} does not hold SourceA's files`);
      }
      const listed = await ferry.json<ResourceSummary[]>('api_v1/targets/offline/resources/?container=None');
      if (listed.length !== visible.length) fail(round, `the library lists ${listed.length} archives; ${visible.length} whole ones are on disk`);
      // Checked: a person may now delete them (keeps the long run's disk use flat).
      for (const name of visible) await rm(path.join(library, name), { force: true });
    };

    /** A person tidies up between rounds: new top-level copies are deleted once checked. */
    const tidy = async (before: Snapshot) => {
      const tops = new Set([...before.keys()].map((file) => file.split('/')[0]!));
      for (const name of await readdir(workspace)) {
        if (!tops.has(name) && !name.startsWith('.') && /^(Upload|SourceA)( \(\d+\))?$/.test(name) && name !== 'SourceA') {
          await rm(path.join(workspace, name), { recursive: true, force: true });
        }
      }
    };

    // ---- calibration: each kind once, not killed, to learn how long it takes -----------------

    const duration = new Map<Kind, number>();
    const runWhole = async (expectation: Expectation, round: number) => {
      const before = await snapshot(workspace);
      const phase: Phase = { killAfterMs: Infinity, acknowledged: false, finishedBeforeKill: false };
      const started = Date.now();
      const ticket = await begin(server!, expectation, phase);
      if (ticket) await waitForJobs(server!);
      duration.set(expectation.kind, Math.max(200, Date.now() - started));
      await checkRound(server!, round, before, expectation);
      await tidy(before);
    };
    await runWhole(await prepareUpload('into-update', 0), 0);
    await runWhole(await prepareTransfer('into-update'), 0);
    await runWhole({ kind: 'download', variant: 'keep', container: '', files: new Map() }, 0);
    console.log(`crashes: calibration (ms): ${[...duration].map(([kind, ms]) => `${kind} ${ms}`).join(', ')}`);

    // ---- the kills ------------------------------------------------------------------------------

    const kinds: Kind[] = [];
    while (kinds.length < KILLS) kinds.push(...(['upload', 'transfer', 'download'] as const));
    kinds.length = KILLS;
    for (let i = kinds.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [kinds[i], kinds[j]] = [kinds[j]!, kinds[i]!];
    }

    for (let round = 1; round <= KILLS; round++) {
      const kind = kinds[round - 1]!;
      // the first transfer goes to OSF, so even the short variant kills one remote write
      const variant = kind === 'transfer' && figures.osf === 0 ? 'to-osf' : kind === 'transfer' ? pick(random, ['into-update', 'into-ignore', 'top-level', 'to-osf'] as const) : pick(random, ['into-update', 'into-ignore', 'top-level'] as const);
      const expectation =
        kind === 'upload' ? await prepareUpload(variant, round) : kind === 'transfer' ? await prepareTransfer(variant) : ({ kind, variant: 'keep', container: '', files: new Map() } as Expectation);
      const before = await snapshot(workspace);
      // Early kills (the request being received, spooled, acknowledged) and kills anywhere in the work.
      const killAfterMs = random() < 0.25 ? between(random, 0, 40) : between(random, 0, Math.round(duration.get(kind)! * 1.1));
      const phase: Phase = { killAfterMs, acknowledged: false, finishedBeforeKill: false };
      const work = begin(server!, expectation, phase).then(
        (ticket) => {
          if (!ticket) phase.finishedBeforeKill = true;
          return ticket;
        },
        () => null,
      );
      await new Promise((resolve) => setTimeout(resolve, killAfterMs));
      const current = server!;
      if (phase.acknowledged && kind !== 'download') {
        const jobs = await current.jobs().catch(() => [] as Job[]);
        if (jobs.some((job) => !seenTickets.has(job.ticket_number) && ['succeeded', 'failed'].includes(job.status))) phase.finishedBeforeKill = true;
      }
      await current.kill();
      await work;
      figures.kills += 1;
      figures[kind] += 1;
      if (variant === 'to-osf') figures.osf += 1;
      if (!phase.acknowledged) figures.beforeAck += 1;
      if (phase.finishedBeforeKill) figures.afterFinish += 1;

      server = await start();
      // Sometimes kill it again while it is recovering (resuming the job, sweeping), then restart.
      if (random() < 0.2 && kind !== 'download') {
        await new Promise((resolve) => setTimeout(resolve, between(random, 0, 300)));
        await server.kill();
        figures.recoveryKills += 1;
        server = await start();
      }
      await checkRound(server, round, before, expectation);
      await tidy(before);
    }

    const last = server!;
    server = null;
    expect(await last.stop(), 'the last server stops cleanly on SIGTERM').toBe(0);
    // Every start was clean: no unreadable job file, no unexpected error, no failed save.
    for (const [index, output] of outputs.entries()) {
      const bad = output.split('\n').filter((line) => /unreadable job file|could not save job|failed: |Error|did not stop cleanly/.test(line));
      if (bad.length > 0) problems.push(`server ${index + 1} logged: ${bad.slice(0, 3).join(' | ')}`);
    }

    console.log(
      `crashes: ${figures.kills} kills (+${figures.recoveryKills} during recovery; ${figures.osf} of the transfers to an emulated OSF); ${figures.beforeAck} before the request was acknowledged, ` +
        `${figures.afterFinish} after the work was done; jobs after restart: ${figures.succeeded} succeeded, ${figures.failed} failed; ` +
        `at most ${figures.hiddenLeft} hidden temporary files at once${failures.size ? `; failure reasons: ${[...failures].map(([why, n]) => `${n}x ${why}`).join(' / ')}` : ''}`,
    );
    console.log(
      `FIGURE: crashes: ${figures.kills} kills survived (${figures.upload} uploads, ${figures.transfer} transfers, ${figures.download} library downloads), ` +
        `${figures.filesLost} files lost, ${figures.stuck} jobs stuck${stressRun ? '' : ' [short variant]'}`,
    );
    expect(problems, problems.slice(0, 10).join('\n')).toEqual([]);
  });
});
