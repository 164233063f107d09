// Issue #9, part 1: a generated corpus of malformed and malicious ZIPs, (a) each uploaded
// through the real HTTP API into a workspace that already holds files, and (b) all dropped
// into the offline library. The service must stay up, refuse or fail with a clear sentence
// or write exactly the right files, and leave everything outside the container as it was.
// Short run (npm test): a stratified sample of every category. FERRY_STRESS=1: the whole corpus.
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isFinishedStatus, type Job, type ResourceDetail, type ResourceSummary } from '../../../shared/api.js';
import { encodeLocalId } from '../../../electron/core/targets/local/ids.js';
import { LocalTarget } from '../../../electron/core/targets/local/local-target.js';
import { createOfflineTarget } from '../../../electron/core/targets/offline/index.js';
import { snapshotTree, startFerry, uploadForm, writeTree, type Ferry } from '../../api/harness.js';
import { byMode, modeTimeout, stressRun } from '../../support/stress.js';
import { filesUnder, isTemporaryName, Problems, sentenceProblem, writtenProblem, type Outcome } from './checks.js';
import { buildCorpus, stratifiedSample, type Expectation, type HostileArchive } from './corpus.js';

const SEED = 0x5eed_0009;
/** Low limits keep the bombs cheap and unambiguous (deflate tops out near 1:1032). */
const LIMITS = { maxEntries: 5000, maxCompressionRatio: 200, maxTotalUncompressedBytes: 1024 ** 3 };
const JOB_DEADLINE_MS = byMode(30_000, 120_000);
const PER_CATEGORY = 4;
/** Library archives per server in the long run: every look-up scans the whole library folder. */
const LIBRARY_BATCH = byMode(1000, 250);

const EXISTING = {
  'Data/keep.txt': 'a file whose name a top-level upload of "Data" would take\n',
  'notes.txt': 'outside every container\n',
  'Project/sub/results.csv': 'id,value\n1,2\n',
  'Project/.hidden': 'hidden\n',
};

let corpus: HostileArchive[];
let chosen: HostileArchive[];

beforeAll(async () => {
  corpus = await buildCorpus(SEED, { maxEntries: LIMITS.maxEntries });
  chosen = stressRun ? corpus : stratifiedSample(corpus, PER_CATEGORY);
}, 120_000);

const figures = { uploaded: 0, refused: 0, failed: 0, succeeded: 0, library: 0, damaged: 0, leftFolders: 0, crashes: 0 };
// An uncaught exception would end a real `ferry serve` (it has no handler). Counted here, for
// the figure; fatal in the long run. KNOWN, not yet fixed (the fix is outside this helper's
// files, see the report): a small damaged entry's stream error reaches the job runner's
// hashing stream (jobs/entry-stream.ts) before the writer listens, so it is uncaught. Timing
// decides whether the short sample meets it, so the short run only prints it for now:
// once fixed, make CRASHES_FAIL always true.
const CRASHES_FAIL = true;
const crashes: string[] = [];
const countCrash = (error: unknown) => {
  figures.crashes++;
  crashes.push(`${currentArchive}: ${error instanceof Error ? error.message : String(error)}`);
};
let currentArchive = '';
beforeAll(() => {
  process.on('uncaughtException', countCrash);
});
afterAll(() => {
  process.off('uncaughtException', countCrash);
  if (figures.uploaded > 0) {
    console.log(
      `FIGURE: hostile zips: ${figures.uploaded} archives uploaded (${figures.refused} refused, ${figures.failed} failed cleanly, ${figures.succeeded} succeeded), ` +
        `${figures.library} dropped in library (${figures.damaged} listed damaged), ${figures.crashes} crashes, workspace unchanged`,
    );
    console.log(`hostile zips: ${figures.leftFolders} failed top-level uploads left the new folder they had claimed`);
    if (crashes.length > 0) console.log(`hostile zips: KNOWN BUG, uncaught exceptions (a real server would have died):\n  ${crashes.join('\n  ')}`);
  }
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitForEnd(ferry: Ferry, ticket: string): Promise<Job | null> {
  const deadline = Date.now() + JOB_DEADLINE_MS;
  for (;;) {
    const response = await ferry.fetch(`/api_v1/jobs/${ticket}/`, { headers: ferry.bearer() });
    const job = (await response.json()) as Job;
    if (isFinishedStatus(job.status)) return job;
    if (Date.now() > deadline) return null;
    await sleep(10);
  }
}

async function expectAlive(ferry: Ferry, problems: Problems, archive: string): Promise<void> {
  const response = await ferry.fetch('/api_v1/targets/', { headers: ferry.auth() });
  if (response.status !== 200) problems.add(archive, `GET /api_v1/targets/ answered ${response.status} afterwards`);
  await response.arrayBuffer();
}

/** A 4xx in the contract's shape with a readable sentence (never a 5xx). */
async function checkErrorResponse(response: Response, ferry: Ferry, problems: Problems, archive: string, what: string): Promise<string | null> {
  const text = await response.text();
  if (response.status >= 500) {
    problems.add(archive, `${what} answered ${response.status}: ${text.slice(0, 300)}`);
    return null;
  }
  let body: { error?: unknown; code?: unknown };
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    problems.add(archive, `${what} answered ${response.status} without JSON: ${text.slice(0, 200)}`);
    return null;
  }
  if (Object.keys(body).sort().join(',') !== 'code,error' || typeof body.code !== 'string') problems.add(archive, `${what}: error shape ${text.slice(0, 200)}`);
  const wrong = sentenceProblem(body.error, [ferry.root]);
  if (wrong) problems.add(archive, `${what}: error ${wrong}`);
  return typeof body.error === 'string' ? body.error : null;
}

/** The first path segment of every expected file: a top-level upload needs exactly one. */
function topsOf(expect: Expectation): Set<string> {
  return new Set(expect.kind === 'refuse' ? [] : Object.keys(expect.files).map((p) => p.split('/')[0]!));
}

describe('hostile ZIP corpus', () => {
  it(
    'every archive uploaded: service up, a clear refusal or exactly the right files, nothing outside the container touched',
    async () => {
      const ferry = await startFerry({ limits: LIMITS, targets: (config) => [new LocalTarget({ root: config.workspace })] });
      const problems = new Problems();
      const messages = new Map<string, number>();
      try {
        await writeTree(ferry.workspace, EXISTING);
        const baseline = await snapshotTree(ferry.workspace);
        const spool = path.join(ferry.dataDir, 'spool');
        for (const [i, archive] of chosen.entries()) {
          const name = archive.id;
          currentArchive = name;
          const started = Date.now();
          // every third archive becomes a new top-level resource (it must hold exactly one top folder)
          const topLevel = i % 3 === 2;
          let expectation = archive.expect;
          if (topLevel && expectation.kind === 'exact' && topsOf(expectation).size !== 1) expectation = { kind: 'refuse' };
          const container = `inbox-${i}`;
          if (!topLevel) await mkdir(path.join(ferry.workspace, container));
          const target = topLevel ? '/api_v1/targets/local/resources/' : `/api_v1/targets/local/resources/${encodeLocalId(container)}/`;

          const response = await ferry.fetch(target, {
            method: 'POST',
            headers: ferry.auth({ 'duplicate-file-action': i % 2 === 0 ? 'ignore' : 'update' }),
            body: uploadForm(archive.build()),
          });
          let outcome: Outcome;
          let job: Job | null = null;
          if (response.status === 202) {
            const { ticket_number: ticket } = (await response.json()) as { ticket_number: string };
            job = await waitForEnd(ferry, ticket);
            if (job === null) {
              problems.add(name, `job ${ticket} still queued/running after ${JOB_DEADLINE_MS} ms`);
              continue;
            }
            if (job.status === 'cancelled') problems.add(name, 'job was cancelled, nobody asked');
            outcome = job.status === 'succeeded' ? 'succeeded' : 'failed';
            if (job.status !== 'succeeded') {
              const wrong = sentenceProblem(job.error, [ferry.root]);
              if (wrong) problems.add(name, `job error ${wrong}`);
              else messages.set(job.error!, (messages.get(job.error!) ?? 0) + 1);
            } else {
              for (const fileError of job.report?.file_errors ?? []) {
                const wrong = sentenceProblem(fileError.error, [ferry.root]);
                if (wrong) problems.add(name, `file error ${wrong}`);
              }
              if ((job.report?.file_errors.length ?? 0) > 0 && expectation.kind === 'exact') problems.add(name, `succeeded with file errors: ${JSON.stringify(job.report?.file_errors.slice(0, 3))}`);
            }
          } else {
            outcome = 'refused';
            if (response.status < 400) problems.add(name, `upload answered ${response.status}`);
            const message = await checkErrorResponse(response, ferry, problems, name, 'upload');
            if (message) messages.set(message, (messages.get(message) ?? 0) + 1);
          }
          figures.uploaded++;
          figures[outcome]++;
          await expectAlive(ferry, problems, name);

          // the workspace: everything that was there is byte for byte as it was
          const after = await snapshotTree(ferry.workspace);
          for (const [key, value] of Object.entries(baseline)) {
            if (after[key] !== value) problems.add(name, `changed outside the container: ${key} (${value} → ${after[key] ?? 'gone'})`);
          }
          const temporary = Object.keys(after).filter((key) => isTemporaryName(key.split('/').pop()!));
          if (temporary.length > 0) problems.add(name, `temporary files left: ${temporary.join(', ')}`);
          const spooled = await readdir(spool).catch(() => []);
          if (spooled.length > 0) problems.add(name, `spool not emptied: ${spooled.join(', ')}`);
          const added = [...new Set(Object.keys(after).filter((key) => !(key in baseline)).map((key) => key.split('/')[0]!))];

          let written: Record<string, string>;
          if (topLevel) {
            // one new folder at most, named like the archive's top folder (or "<name> (2)" when taken)
            if (added.length > 1) problems.add(name, `a top-level upload added ${added.length} entries at the root: ${added.slice(0, 5).join(', ')}`);
            // A failed top-level upload may leave the folder it claimed (empty, or with the
            // files written before the failure: checked below). Counted, reported to the lead
            // (electron/core/targets/local/writer.ts could remove an empty claimed folder).
            if (outcome === 'failed' && added.length > 0) figures.leftFolders++;
            written = {};
            for (const top of added) {
              const original = top.replace(/ \(\d+\)$/, '');
              for (const [relative, hash] of Object.entries(filesUnder(after, top))) written[`${original}/${relative}`] = hash;
              if (after[top]?.startsWith('file:')) written[original] = after[top]!.slice('file:'.length);
            }
            if (outcome === 'succeeded' && job?.report?.new_resource && !added.includes(job.report.new_resource.title)) {
              problems.add(name, `new resource '${job.report.new_resource.title}' is not what appeared: ${added.join(', ')}`);
            }
          } else {
            const strays = added.filter((key) => key !== container);
            if (strays.length > 0) problems.add(name, `wrote outside the container: ${strays.join(', ')}`);
            written = filesUnder(after, container);
          }
          const wrong = writtenProblem(expectation, outcome, written);
          if (wrong) problems.add(name, `${wrong} [${outcome}${job?.error ? `: ${job.error.slice(0, 200)}` : ''}]`);

          for (const top of topLevel ? added : [container]) await rm(path.join(ferry.workspace, top), { recursive: true, force: true });
          if (process.env.HOSTILE_TIMING) console.log(`${Date.now() - started} ms upload ${name}`);
        }
        expect(await snapshotTree(ferry.workspace)).toEqual(baseline);
      } finally {
        await ferry.close();
      }
      if (stressRun) {
        const common = [...messages.entries()].sort((a, b) => b[1] - a[1]).slice(0, 12);
        console.log(`hostile zips: most frequent refusals:\n${common.map(([m, n]) => `  ${n} × ${m.slice(0, 160)}`).join('\n')}`);
      }
      expect(problems.list).toEqual([]);
      if (CRASHES_FAIL) expect(crashes).toEqual([]);
      expect(chosen.map((archive) => archive.category)).toEqual(expect.arrayContaining(['truncated', 'zip-slip', 'bomb', 'bag', 'zip64-lie', 'encrypted', 'look-alike', 'special-entry', 'overlap', 'corrupt-directory', 'random-flip', 'control']));
      if (stressRun) expect(figures.uploaded).toBeGreaterThanOrEqual(1000);
    },
    modeTimeout(120_000, 3_600_000),
  );

  it(
    'the same corpus dropped into the offline library: listed (damaged ones say why), detail and verify answer, nothing hangs',
    async () => {
      const problems = new Problems();
      currentArchive = 'the offline library';
      const crashesBefore = crashes.length;
      for (let start = 0; start < chosen.length; start += LIBRARY_BATCH) {
        const batch = chosen.slice(start, start + LIBRARY_BATCH);
        const ferry = await startFerry({ limits: LIMITS, targets: (config) => [new LocalTarget({ root: config.workspace }), createOfflineTarget(config)] });
        try {
          await checkLibrary(ferry, batch, problems);
        } finally {
          await ferry.close();
        }
      }
      expect(problems.list).toEqual([]);
      if (CRASHES_FAIL) expect(crashes.slice(crashesBefore)).toEqual([]);
    },
    modeTimeout(120_000, 3_600_000),
  );
});

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const LIBRARY_CONCURRENCY = 4;

async function eachConcurrently<T>(items: T[], concurrency: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await task(items[next++]!);
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

/** A title the UI and a writer can use as one name: no separators, no dot segments. */
function unsafeTitle(title: string): boolean {
  return title === '' || /[/\\\0]/.test(title) || /^[. ]+$/.test(title.normalize('NFKC'));
}

async function checkLibrary(ferry: Ferry, batch: HostileArchive[], problems: Problems): Promise<void> {
  const library = path.join(ferry.dataDir, 'library');
  await mkdir(library, { recursive: true });
  const hashes = new Map<string, string>();
  for (const archive of batch) {
    const bytes = archive.build();
    await writeFile(path.join(library, `${archive.id}.zip`), bytes);
    hashes.set(`${archive.id}.zip`, sha256(bytes));
  }
  const list = async (query: string): Promise<ResourceSummary[] | null> => {
    const response = await ferry.fetch(`/api_v1/targets/offline/resources/${query}`, { headers: ferry.auth() });
    if (response.status !== 200) {
      await checkErrorResponse(response, ferry, problems, 'library', `listing ${query}`);
      problems.add('library', `listing ${query} answered ${response.status}`);
      return null;
    }
    return (await response.json()) as ResourceSummary[];
  };

  const tops = (await list('?container=None')) ?? [];
  const byTitle = new Map(tops.map((node) => [node.title, node]));
  const everything = (await list('')) ?? [];
  for (const node of everything) if (unsafeTitle(node.title)) problems.add('library', `lists an unsafe name ${JSON.stringify(node.title)} (${node.id})`);

  // four archives at a time: a library is browsed and verified by more than one client
  await eachConcurrently(batch, LIBRARY_CONCURRENCY, async (archive) => {
    const name = archive.id;
    const started = Date.now();
    const node = byTitle.get(archive.id);
    if (!node) {
      problems.add(name, 'not listed in the library');
      return;
    }
    figures.library++;
    const response = await ferry.fetch(`/api_v1/targets/offline/resources/${node.id}.json/`, { headers: ferry.auth() });
    if (response.status !== 200) {
      problems.add(name, `archive detail answered ${response.status}`);
      await checkErrorResponse(response, ferry, problems, name, 'archive detail');
      return;
    }
    const detail = (await response.json()) as ResourceDetail;
    const state = detail.extra.state;
    if (state !== 'ok' && state !== 'damaged') problems.add(name, `extra.state is ${JSON.stringify(state)}`);
    if (state === 'damaged') {
      figures.damaged++;
      const wrong = sentenceProblem(detail.extra.error, [ferry.root]);
      if (wrong) problems.add(name, `damaged, but its error ${wrong}`);
    } else if (archive.offlineDamaged) problems.add(name, 'must be listed damaged, but is "ok"');

    const children = await ferry.fetch(`/api_v1/targets/offline/resources/?container=${encodeURIComponent(node.id)}`, { headers: ferry.auth() });
    if (children.status !== 200) await checkErrorResponse(children, ferry, problems, name, 'children listing');
    else await children.arrayBuffer();

    // a few of its files: detail reads their bytes (hashes) when the archive has no manifest
    const files = everything.filter((other) => other.kind === 'item' && other.id.startsWith(`${node.id}-`)).slice(0, 3);
    for (const file of files) {
      const fileDetail = await ferry.fetch(`/api_v1/targets/offline/resources/${file.id}.json/`, { headers: ferry.auth() });
      if (fileDetail.status !== 200) await checkErrorResponse(fileDetail, ferry, problems, name, `detail of ${file.title}`);
      else await fileDetail.arrayBuffer();
    }

    const beforeVerify = Date.now();
    const verify = await ferry.fetch(`/api_v1/targets/offline/resources/${node.id}/verify/`, { method: 'POST', headers: ferry.auth() });
    if (verify.status === 202) {
      const { ticket_number: ticket } = (await verify.json()) as { ticket_number: string };
      const job = await waitForEnd(ferry, ticket);
      if (job === null) problems.add(name, `verify job ${ticket} never ended`);
      else if (job.status === 'failed' && !job.report?.failed_files?.length) {
        const wrong = sentenceProblem(job.error, [ferry.root]);
        if (wrong) problems.add(name, `verify failed, its error ${wrong}`);
      } else if (job.status === 'cancelled' || job.status === 'queued' || job.status === 'running') problems.add(name, `verify job ${job.status}`);
      // succeeded, or files failed their checks (completed_with_errors, or failed when all did)
      else for (const failure of job.report?.failed_fixity ?? []) if (failure.algorithm === 'read') {
        const wrong = sentenceProblem(failure.actual, [ferry.root]);
        if (wrong) problems.add(name, `verify read failure ${wrong}`);
      }
    } else await checkErrorResponse(verify, ferry, problems, name, 'verify');
    await expectAlive(ferry, problems, name);
    if (process.env.HOSTILE_TIMING) console.log(`${Date.now() - started} ms (verify ${Date.now() - beforeVerify} ms) ${name}`);
  });
  if (tops.length !== batch.length) problems.add('library', `lists ${tops.length} archives, ${batch.length} were dropped in`);

  // nothing in the library changed or appeared (verify only reads; fixity records live elsewhere)
  const names = (await readdir(library)).sort();
  const temporary = names.filter(isTemporaryName);
  if (temporary.length > 0) problems.add('library', `temporary files left: ${temporary.join(', ')}`);
  for (const file of names) {
    if (!hashes.has(file)) problems.add('library', `a new file appeared: ${file}`);
    else if (sha256(await readFile(path.join(library, file))) !== hashes.get(file)) problems.add(file, 'the archive changed in the library');
  }
}
