// Issue #9 part 4 — load: one `ferry serve` (a child process, as users run it) serves many
// concurrent bag downloads, uploads into distinct containers, and some listing/detail/job
// requests, for a fixed time, driven by autocannon. Then: zero failed requests, every
// uploaded file's hashes right, sampled downloads valid bags of the source bytes, the
// workspace outside the upload folders unchanged, and the server's memory bounded.
// Short in `npm test`; FERRY_STRESS=1 gives the figures (50 + 10 for 60 s).
import autocannon, { type Client, type Result } from 'autocannon';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job, ResourceSummary } from '../../../shared/api.js';
import { snapshotTree } from '../../api/harness.js';
import { builtCliAvailable, startFerryProcess, type FerryProcess } from '../../support/ferry-process.js';
import { byMode, modeTimeout, stressRun } from '../../support/stress.js';
import { BOUNDARY, MemorySampler, checkDownloadedBag, makeLoadWorkspace, makeUploadTemplate, multipartBody, sha256, type LoadWorkspace, type UploadTemplate } from './load-fixtures.js';

// FERRY_LOAD_SECONDS / _DOWNLOADS / _UPLOADS override the sizes (to explore; the figures use the defaults)
const knob = (name: string, fallback: number) => Number(process.env[`FERRY_LOAD_${name}`] ?? fallback);
const SIZE = {
  seconds: knob('SECONDS', byMode(10, 60)),
  downloadConnections: knob('DOWNLOADS', byMode(8, 50)),
  uploadConnections: knob('UPLOADS', byMode(2, 10)),
  browseConnections: byMode(1, 2),
  downloadFolders: byMode(3, 4),
  // half text, half random: over 2 MiB so each half (> 1 MiB) takes the bag writer's streamed
  // large-file path, whose per-file buffers are what memory scales with
  folderBytes: byMode(2.25 * 1024 * 1024, 3 * 1024 * 1024),
  uploadBytes: byMode(256 * 1024, 512 * 1024),
  /** a bag built while 49 others are: seconds, not the default 10 */
  requestTimeoutSeconds: 60,
};
/**
 * The server's memory budget: a base plus a fixed amount per connection, never growing with
 * time or bytes served (the timeline check below catches creep). Measured peaks (built CLI):
 * - before issue 8's speed work: 262 MiB for 8 + 2 connections, 413-572 MiB for 50 + 10, at
 *   18 and 10 MiB/s served;
 * - after it: 302-357 MiB for 8 + 2, 774-832 MiB for 50 + 10, at 55-63 and 81-89 MiB/s: six to
 *   eight times the throughput for about 10 MiB more per download connection (2 MiB reads and
 *   a 2 MiB output buffer per download instead of 1 MiB each) and a larger base (two
 *   file-writing worker threads, ~9 MiB each idle). Most of the rest is the bag writer's 6 MiB
 *   shared-memory ring per large file in flight (bag-workers.ts), kept for reuse: as many as
 *   were ever in flight at once. A plateau, not a climb.
 */
const RSS_BUDGET_MiB = 280 + 11 * SIZE.downloadConnections + 8 * SIZE.uploadConnections;
const MiB = 1024 * 1024;

describe(`load: ${SIZE.downloadConnections} downloads + ${SIZE.uploadConnections} uploads for ${SIZE.seconds} s on one ferry serve`, () => {
  let root: string;
  let workspace: string;
  let ferry: FerryProcess;
  let layout: LoadWorkspace;
  let template: UploadTemplate;
  const ids = new Map<string, string>(); // top-level title → id

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'ferry-load-'));
    workspace = path.join(root, 'workspace');
    await mkdir(workspace);
    layout = await makeLoadWorkspace(workspace, { downloadFolders: SIZE.downloadFolders, folderBytes: SIZE.folderBytes, uploadContainers: SIZE.uploadConnections });
    await mkdir(path.join(root, 'template'));
    template = await makeUploadTemplate(path.join(root, 'template'), SIZE.uploadBytes);
    const built = builtCliAvailable();
    if (!built) console.log('load test: out/main/cli.js missing (run `npx electron-vite build`); serving from source through tsx instead');
    ferry = await startFerryProcess({ dataDir: path.join(root, 'data'), workspace, built });
    const response = await fetch(new URL('/api_v1/targets/local/resources/', ferry.url), { headers: { 'service-source-token': ferry.accessKey } });
    expect(response.status).toBe(200);
    for (const item of (await response.json()) as ResourceSummary[]) if (item.container === 'None') ids.set(item.title, item.id);
  }, 120_000);

  afterAll(async () => {
    if (ferry && ferry.child.exitCode === null) {
      ferry.child.kill('SIGTERM');
      const timer = setTimeout(() => ferry.child.kill('SIGKILL'), 10_000);
      await ferry.exited;
      clearTimeout(timer);
    }
    if (root) await rm(root, { recursive: true, force: true });
  }, 60_000);

  it(
    'serves every request, stores every upload byte-exact, keeps downloads valid and memory bounded',
    async () => {
      const url = ferry.url.replace(/\/$/, '');
      const key = ferry.accessKey;
      const untouched = await snapshotTree(workspace);
      const downloadTitles = [...layout.downloadFolders.keys()];
      const sampler = new MemorySampler(ferry.pid);
      sampler.start();

      // --- downloads: each connection cycles through the folders' bag downloads
      const downloads = runCannon({
        title: 'downloads',
        url,
        connections: SIZE.downloadConnections,
        duration: SIZE.seconds,
        timeout: SIZE.requestTimeoutSeconds,
        headers: { 'service-source-token': key },
        requests: downloadTitles.map((title) => ({ method: 'GET', path: `/api_v1/targets/local/resources/${ids.get(title)}.zip/` })),
        // autocannon keeps every body as a string for onResponse; downloads don't need it
        setupClient: discardBodies,
      });

      // --- uploads: one connection per container, every upload a new batch folder
      const tickets = new Map<string, { container: string; batch: string }>();
      const uploadBytesPerRequest = multipartBody(template.zip).length;
      const uploads = layout.uploadContainers.map((container, connection) => {
        let n = 0;
        return runCannon({
          title: `uploads into ${container}`,
          url,
          connections: 1,
          duration: SIZE.seconds,
          timeout: SIZE.requestTimeoutSeconds,
          requests: [
            {
              method: 'POST',
              path: `/api_v1/targets/local/resources/${ids.get(container)}/`,
              setupRequest: (request, context) => {
                const batch = template.batchName(connection, n++);
                (context as { batch?: string }).batch = batch;
                return {
                  ...request,
                  headers: {
                    'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
                    'service-destination-token': key,
                    'duplicate-file-action': 'ignore',
                  },
                  body: multipartBody(template.zipFor(batch)),
                };
              },
              onResponse: (status, body, context) => {
                if (status !== 202) return;
                const ticket = (JSON.parse(body) as { ticket_number: string }).ticket_number;
                tickets.set(ticket, { container, batch: (context as { batch?: string }).batch! });
              },
            },
          ],
        });
      });

      // --- browsing: listing, details, job states, as the UI would while this goes on
      const someDownload = ids.get(downloadTitles[0]!)!;
      const browse = runCannon({
        title: 'listing/detail/jobs',
        url,
        connections: SIZE.browseConnections,
        duration: SIZE.seconds,
        timeout: SIZE.requestTimeoutSeconds,
        headers: { 'service-source-token': key, authorization: `Bearer ${key}` },
        requests: [
          { method: 'GET', path: '/api_v1/targets/' },
          { method: 'GET', path: `/api_v1/targets/local/resources/${someDownload}.json/` },
          { method: 'GET', path: `/api_v1/targets/local/resources/${ids.get(layout.uploadContainers[0]!)}.json/` },
          { method: 'GET', path: '/api_v1/targets/local/resources/' },
          { method: 'GET', path: '/api_v1/jobs/' },
        ],
      });

      // --- meanwhile, sample downloads to disk and check them as bags of the source bytes
      const sampled = sampleDownloads(url, key, root, layout, ids, SIZE.seconds * 1000);

      const [downloadResult, browseResult, ...uploadResults] = await Promise.all([downloads, browse, ...uploads]);
      const sample = await sampled;

      // every job the acknowledged uploads started, and any a cut-off last request started, finishes
      const jobs = await waitForAllJobs(url, key, 10 * 60_000);
      const peakMiB = await sampler.stop();

      const all = [downloadResult!, browseResult!, ...uploadResults];
      const failed = all.reduce((sum, result) => sum + result.errors + result.timeouts + result.non2xx + result.mismatches + result.resets, 0);
      const describeFailures = all
        .filter((result) => result.errors + result.timeouts + result.non2xx > 0)
        .map((result) => `${result.title}: ${result.errors} errors, ${result.timeouts} timeouts, ${result.non2xx} non-2xx (${JSON.stringify(result.statusCodeStats)})`);
      const downloadsDone = downloadResult!.requests.total;
      const uploadsDone = uploadResults.reduce((sum, result) => sum + result.requests.total, 0);
      const total = downloadsDone + uploadsDone + browseResult!.requests.total;
      const downMiBs = downloadResult!.throughput.total / MiB / SIZE.seconds;
      const upMiBs = (tickets.size * uploadBytesPerRequest) / MiB / SIZE.seconds;
      console.log(
        `FIGURE: load${stressRun ? '' : ' (short)'}: ${total} requests (${downloadsDone} downloads, ${uploadsDone} uploads, ${browseResult!.requests.total} listing/detail/job) in ${SIZE.seconds} s, ` +
          `${failed} failed, ${downMiBs.toFixed(1)} MiB/s down, ${upMiBs.toFixed(1)} MiB/s up, peak RSS ${peakMiB.toFixed(0)} MiB ` +
          `(${SIZE.downloadConnections} download + ${SIZE.uploadConnections} upload + ${SIZE.browseConnections} browse connections; ${sample.bags} downloads sampled, ${jobs.length} jobs)`,
      );
      const latency = (label: string, results: Result[]) => {
        const worst = results.reduce((a, b) => (b.latency.p99 > a.latency.p99 ? b : a));
        return `${label} p50 ${Math.round(results[0]!.latency.p50)} ms, p99 ${Math.round(worst.latency.p99)} ms`;
      };
      console.log(`load latency: ${latency('downloads', [downloadResult!])}; ${latency('uploads', uploadResults)}; ${latency('listing/detail/job', [browseResult!])}`);
      console.log(`load: server RSS every 5 s (MiB): ${sampler.timeline.join(' ')}; budget ${RSS_BUDGET_MiB} MiB`);

      expect(describeFailures).toEqual([]);
      expect(failed).toBe(0);
      expect(downloadsDone).toBeGreaterThan(0);
      expect(tickets.size).toBeGreaterThan(0);
      expect(tickets.size).toBe(uploadsDone);
      expect(sample.errors).toEqual([]);
      expect(sample.bags).toBeGreaterThan(0);

      // every job succeeded: none stuck, none failed, none cancelled
      const notSucceeded = jobs.filter((job) => job.status !== 'succeeded').map((job) => `${job.ticket_number}: ${job.status} ${job.error ?? ''}`);
      expect(notSucceeded).toEqual([]);
      for (const ticket of tickets.keys()) expect(jobs.some((job) => job.ticket_number === ticket)).toBe(true);

      // every acknowledged upload's files, byte-exact, and nothing else in its container
      const problems: string[] = [];
      for (const { container, batch } of tickets.values()) {
        for (const [relative, expected] of template.files) {
          const actual = await readFile(path.join(workspace, container, batch, relative)).then(sha256, () => 'missing');
          if (actual !== expected) problems.push(`${container}/${batch}/${relative}: ${actual}`);
        }
      }
      const acknowledged = new Set([...tickets.values()].map(({ container, batch }) => `${container}/${batch}`));
      let unacknowledged = 0;
      for (const container of layout.uploadContainers) {
        for (const name of await readdir(path.join(workspace, container))) {
          if (name === 'README.txt' || acknowledged.has(`${container}/${name}`)) continue;
          // the request in flight when autocannon stopped may have been received in full:
          // its job ran, so its files must be complete too
          unacknowledged++;
          for (const [relative, expected] of template.files) {
            const actual = await readFile(path.join(workspace, container, name, relative)).then(sha256, () => 'missing');
            if (actual !== expected) problems.push(`${container}/${name}/${relative} (request cut off by the end of the run): ${actual}`);
          }
        }
      }
      expect(problems).toEqual([]);
      expect(unacknowledged).toBeLessThanOrEqual(SIZE.uploadConnections);

      // everything that was there before is byte-for-byte the same (no temp files left either)
      const after = await snapshotTree(workspace);
      for (const [relative, state] of Object.entries(untouched)) expect(after[relative], relative).toBe(state);
      const strays = Object.keys(after).filter((relative) => !(relative in untouched) && !/^inbox-\d+\/batch-\d+(\/|$)/.test(relative));
      expect(strays).toEqual([]);

      expect(peakMiB).toBeGreaterThan(0);
      expect(peakMiB, `peak RSS over the budget of ${RSS_BUDGET_MiB} MiB`).toBeLessThan(RSS_BUDGET_MiB);
      // steady, not creeping: the second half of the run peaks no higher than the first (a leak would)
      const timeline = sampler.timeline;
      if (timeline.length >= 6) {
        const half = Math.floor(timeline.length / 2);
        const firstHalf = Math.max(...timeline.slice(0, half));
        expect(Math.max(...timeline.slice(half)), `RSS grew through the run: ${timeline.join(' ')}`).toBeLessThanOrEqual(firstHalf * 1.2 + 16);
      }
      expect(ferry.child.exitCode).toBeNull();
    },
    modeTimeout(120_000, 15 * 60_000),
  );
});

type CannonOptions = autocannon.Options & { setupClient?: (client: Client) => void };

function runCannon(options: CannonOptions): Promise<Result> {
  return new Promise((resolve, reject) => {
    autocannon(options, (error, result) => (error ? reject(error) : resolve(result)));
  });
}

/** Keeps autocannon from collecting each download's bytes as a string (CPU and memory the server would miss). */
function discardBodies(client: Client): void {
  const internal = client as unknown as { pipelinedRequests: { addBody: (data: Buffer) => void } };
  internal.pipelinedRequests.addBody = () => {};
}

async function sampleDownloads(url: string, key: string, root: string, layout: LoadWorkspace, ids: Map<string, string>, forMs: number): Promise<{ bags: number; errors: string[] }> {
  const dir = await mkdtemp(path.join(root, 'samples-'));
  const titles = [...layout.downloadFolders.keys()];
  const errors: string[] = [];
  let bags = 0;
  const until = Date.now() + forMs;
  for (let n = 0; n === 0 || Date.now() < until; n++) {
    const title = titles[n % titles.length]!;
    try {
      const response = await fetch(`${url}/api_v1/targets/local/resources/${ids.get(title)}.zip/`, { headers: { 'service-source-token': key } });
      if (response.status !== 200) throw new Error(`status ${response.status}: ${await response.text()}`);
      const zipPath = path.join(dir, `${n}.zip`);
      await writeFile(zipPath, Buffer.from(await response.arrayBuffer()));
      await checkDownloadedBag(zipPath, path.join(dir, `${n}`), title, layout.downloadFolders.get(title)!);
      bags++;
      await rm(path.join(dir, `${n}`), { recursive: true });
      await rm(zipPath);
    } catch (error) {
      errors.push(`${title}: ${(error as Error).message}`);
    }
  }
  return { bags, errors };
}

async function waitForAllJobs(url: string, key: string, timeoutMs: number): Promise<Job[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response = await fetch(`${url}/api_v1/jobs/`, { headers: { authorization: `Bearer ${key}` } });
    const jobs = (await response.json()) as Job[];
    if (jobs.every((job) => !['queued', 'running'].includes(job.status))) return jobs;
    if (Date.now() > deadline) throw new Error(`${jobs.filter((job) => ['queued', 'running'].includes(job.status)).length} jobs still unfinished`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
