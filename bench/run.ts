import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import type { Job, ResourceSummary } from '../shared/api.js';
import { startFerryProcess, type FerryProcess } from '../test/support/ferry-process.js';
import { writeManyEntriesZip } from '../test/support/many-entries-zip.js';
import { makeIncompressibleFolder, makeManyFiles, makeMixedFolder, writeIncompressible } from './data.js';
import { startRcloneWebdav } from '../test/webdav/rclone-webdav.js';
import { apacheUnavailableReason, startApacheWebdav } from '../test/webdav/apache-webdav.js';
import { renderChart } from './chart.js';
import { afterIdleCollection, JobEvents } from './job-events.js';
import { setAsideIn } from './set-aside.js';
import { fileCreationNote } from './file-creation.js';
import { curlAvailable, postZip } from './post-zip.js';
import { startLatencyProxy } from '../test/support/latency-proxy.js';
import { Latency } from '../test/emulators/shared/latency.js';
import { startOsfEmulator } from '../test/emulators/osf/emulator.js';
import { startInvenioEmulator } from '../test/emulators/invenio/emulator.js';
import { OSF_IN_FLIGHT } from '../electron/core/targets/osf/osf-target.js';
import { INVENIO_IN_FLIGHT } from '../electron/core/targets/invenio/invenio-target.js';
import { WEBDAV_IN_FLIGHT } from '../electron/core/targets/webdav/webdav-target.js';

// `npm run bench`: Ferry against the tools people would use instead, on the same data in
// the same run. Every row is a median over several runs and a ratio to its reference.

const { values: args } = parseArgs({
  options: {
    smoke: { type: 'boolean', default: false },
    full: { type: 'boolean', default: false },
    runs: { type: 'string' },
    scale: { type: 'string', default: '1' },
    out: { type: 'string', default: 'bench-results' },
    keep: { type: 'boolean', default: false },
    /** run only these groups (repeatable): download, upload, transfer, rclone, latency, hashing, listing, api, memory */
    only: { type: 'string', multiple: true },
    /** serve from the TypeScript sources (tsx) instead of the built CLI, e.g. to measure uncommitted work without rebuilding out/ */
    source: { type: 'boolean', default: false },
    /** the download client: curl (default, when installed) or fetch (Node, in the bench process) */
    client: { type: 'string', default: 'curl' },
  },
});

const GROUPS = ['download', 'upload', 'transfer', 'rclone', 'latency', 'hashing', 'listing', 'api', 'memory'] as const;
type Group = (typeof GROUPS)[number];
const only = new Set<string>(args.only ?? GROUPS);
for (const group of only) if (!(GROUPS as readonly string[]).includes(group)) throw new Error(`--only ${group}: expected one of ${GROUPS.join(', ')}`);
const wanted = (group: Group) => only.has(group);
/** rows each group adds */
const ROWS: Record<Group, number> = { download: 6, upload: 1, transfer: 6, rclone: 1, latency: 3, hashing: 1, listing: 2, api: 2, memory: 2 };

const scale = Number(args.scale);
/** the round trip added to every request of the latency rows (issue #18) */
const LATENCY_MS = 50;
const MiB = 1024 * 1024;
const sizes = args.smoke
  ? { latencyFiles: 40, transferTexts: 30, transferBinaries: 1, transferBinaryBytes: 1 * MiB, textFiles: 40, maxTextBytes: 8 * 1024, binaries: 2, binaryBytes: 1 * MiB, incompressible: [2, 1 * MiB], hashBytes: 4 * MiB, listFiles: 2_000, archiveEntries: 2_000, memoryBytes: 8 * MiB, cannonSeconds: 1, runs: 1 }
  : {
      // the engine issue's latency rows: a 1,000-file upload to each remote target
      latencyFiles: Math.round(1000 * scale),
      // the engine issue's measurement: 1,000-1,500 text files of ~20 KB plus 4-8 random 16 MiB files
      transferTexts: Math.round(1200 * scale),
      transferBinaries: 4,
      transferBinaryBytes: Math.round(16 * MiB * scale),
      textFiles: Math.round(3000 * scale),
      maxTextBytes: 24 * 1024,
      binaries: 4,
      binaryBytes: Math.round(48 * MiB * scale),
      incompressible: [8, Math.round(24 * MiB * scale)],
      hashBytes: Math.round(512 * MiB * scale),
      listFiles: 100_000,
      archiveEntries: 100_000,
      memoryBytes: args.full ? 2048 * MiB : Math.round(512 * MiB * scale),
      cannonSeconds: 3,
      runs: 3,
    };
const runs = args.runs ? Number(args.runs) : sizes.runs;
const listingRuns = args.smoke ? runs : Math.max(runs, 7);

interface Row {
  name: string;
  ferry_seconds: number;
  reference: string;
  reference_seconds: number;
  /** ferry / reference for times (lower is better); for throughput rows, ferry / reference rps */
  ratio: number;
  goal: string;
  met: boolean | null;
  note?: string;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

/** Seconds for the table: three decimals, or three significant digits for a request's few microseconds. */
const seconds = (value: number) => (value > 0 && value < 0.01 ? value.toPrecision(3) : value.toFixed(3));

/**
 * A new mtime on every file of a folder (none of Ferry's remembered digests answers then),
 * then a wait until the change has settled: Ferry remembers no digests of a file changed in
 * the last 2 s, so a download right after would remember nothing.
 */
async function newMtimes(folder: string, touch: number): Promise<void> {
  const mtime = new Date(Date.now() - 1000 * touch);
  for (const entry of await readdir(folder, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) await utimes(path.join(entry.parentPath, entry.name), mtime, mtime);
  }
  // the inodes' writeback now, not during the download that follows
  await command('sync', ['-f', folder]);
  await new Promise((resolve) => setTimeout(resolve, 2500));
}

/** Seconds `fn` took, and what it answered. */
async function timedJob<T>(fn: () => Promise<T>): Promise<{ seconds: number; result: T }> {
  const start = performance.now();
  const result = await fn();
  return { seconds: (performance.now() - start) / 1000, result };
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  return (await timedJob(fn)).seconds;
}

async function repeat(count: number, fn: () => Promise<unknown>): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) times.push(await timed(fn));
  return times;
}

async function medianOf(fn: () => Promise<unknown>, before?: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    await before?.();
    times.push(await timed(fn));
  }
  return median(times);
}

/** CPU seconds (user + system, all threads) a process has used so far (Linux /proc). */
async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * Runs a command in a shell and gives the CPU seconds it used (the shell's children's
 * user + system time, read from /proc after they were waited for).
 */
async function commandCpu(cmd: string, argv: string[], cwd?: string): Promise<number> {
  const line = [cmd, ...argv.map((arg) => `'${arg.replace(/'/g, `'\\''`)}'`)].join(' ');
  const stat = await new Promise<string>((resolve, reject) => {
    const child = spawn('sh', ['-c', `${line} && cat /proc/$$/stat`], { cwd, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${cmd} exited with ${code}`))));
  });
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[13]) + Number(fields[14])) / 100;
}

function command(cmd: string, argv: string[], cwd?: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', [cmd, ...argv.map((arg) => `'${arg.replace(/'/g, `'\\''`)}'`)].join(' ')], { cwd, stdio: ['ignore', 'ignore', 'inherit'] });
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} exited with ${code}`))));
  });
}

function peakRssBytes(pid: number): Promise<number> {
  return readFile(`/proc/${pid}/status`, 'utf8').then((status) => Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024);
}

async function api<T>(server: FerryProcess, pathname: string, init: RequestInit = {}): Promise<T> {
  const response = await fetch(new URL(pathname, server.url), { ...init, headers: { authorization: `Bearer ${server.accessKey}`, ...(init.headers as Record<string, string>) } });
  if (!response.ok) throw new Error(`${pathname}: HTTP ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

async function topLevelId(server: FerryProcess, target: string, title: string): Promise<string> {
  const listing = await api<ResourceSummary[]>(server, `api_v1/targets/${target}/resources/?container=None`, { headers: { 'service-source-token': server.accessKey } });
  const found = listing.find((resource) => resource.title === title);
  if (!found) throw new Error(`${title} not found on ${target}`);
  return found.id;
}


/**
 * GET .zip/ into a file. The client is curl when installed (as a person would download, and
 * it costs the two shared cores little), else Node's fetch in this process. The key goes to
 * curl on stdin (`-K -`), never on its command line.
 */
/** Returns the CPU seconds the client used (curl's; 0 for fetch, which shares this process). */
async function downloadTo(server: FerryProcess, target: string, id: string, file: string): Promise<number> {
  const url = new URL(`api_v1/targets/${target}/resources/${encodeURIComponent(id)}.zip/`, server.url);
  if (args.client === 'curl' && curlAvailable) {
    return new Promise<number>((resolve, reject) => {
      const child = spawn('sh', ['-c', `curl -sS --fail -K - -o "$0" "$1" && cat /proc/$$/stat`, file, url.href], { stdio: ['pipe', 'pipe', 'inherit'] });
      let out = '';
      child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
      child.stdin!.end(`header = "service-source-token: ${server.accessKey}"\n`);
      child.on('exit', (code) => {
        if (code !== 0) return reject(new Error(`download: curl exited with ${code}`));
        const fields = out.slice(out.lastIndexOf(')') + 2).split(' ');
        resolve((Number(fields[13]) + Number(fields[14])) / 100);
      });
    });
  }
  const response = await fetch(url, { headers: { 'service-source-token': server.accessKey } });
  if (!response.ok || !response.body) throw new Error(`download: HTTP ${response.status}`);
  await pipeline(Readable.fromWeb(response.body as unknown as WebReadableStream), createWriteStream(file));
  return 0;
}

/**
 * GET a listing and read it to its end, as `find | wc -l` reads find's output to its end:
 * curl into /dev/null when installed (its parse is the client's business, and JSON.parse of
 * 22 MB in this process would be timed as Ferry's), else fetch, reading the bytes unparsed.
 * Returns the bytes received; rowsIn() checks the rows outside the timing.
 */
async function listingBytes(server: FerryProcess, pathname: string): Promise<number> {
  const url = new URL(pathname, server.url);
  if (args.client === 'curl' && curlAvailable) {
    return new Promise<number>((resolve, reject) => {
      const child = spawn('curl', ['-sS', '--fail', '-K', '-', '-o', '/dev/null', '-w', '%{size_download}', url.href], { stdio: ['pipe', 'pipe', 'inherit'] });
      let out = '';
      child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
      child.stdin!.end(`header = "service-source-token: ${server.accessKey}"\n`);
      child.on('exit', (code) => (code === 0 ? resolve(Number(out)) : reject(new Error(`listing: curl exited with ${code}`))));
    });
  }
  const response = await fetch(url, { headers: { 'service-source-token': server.accessKey } });
  if (!response.ok) throw new Error(`${pathname}: HTTP ${response.status}`);
  return (await response.arrayBuffer()).byteLength;
}

/** A timed listing's median, its first (cold: nothing cached yet) time, and a check of its rows. */
async function timedListing(server: FerryProcess, pathname: string, expectedRows: number, before?: () => Promise<unknown>): Promise<{ median: number; first: number }> {
  const times: number[] = [];
  // a listing takes a fraction of a second: more runs than the long rows, for a steadier median
  for (let i = 0; i < listingRuns; i++) {
    await before?.();
    times.push(await timed(async () => {
      if ((await listingBytes(server, pathname)) < expectedRows * 50) throw new Error(`${pathname}: too few bytes for ${expectedRows} rows`);
    }));
  }
  const rows = (await api<ResourceSummary[]>(server, pathname, { headers: { 'service-source-token': server.accessKey } })).length;
  if (rows !== expectedRows) throw new Error(`${pathname}: ${rows} rows, expected ${expectedRows}`);
  return { median: median(times), first: times[0]! };
}

/** POSTs a ZIP as multipart (post-zip.ts: with curl when installed, as for downloads, else fetch in this process). Returns the ticket. */
async function postZipTo(server: FerryProcess, containerId: string, zip: string): Promise<string> {
  return postZip(new URL(`api_v1/targets/local/resources/${encodeURIComponent(containerId)}/`, server.url).href, zip, server.accessKey, args.client === 'curl');
}

/** POSTs a ZIP and waits for its job's end, followed by the server's job events as the app follows it. */
async function uploadAndWait(server: FerryProcess, containerId: string, zip: string): Promise<Job> {
  const events = await JobEvents.of(server);
  const ticket = await postZipTo(server, containerId, zip);
  const job = await events.end(ticket);
  // completed_with_errors, failed, cancelled: some file did not arrive
  if (job.status !== 'succeeded') throw new Error(`upload job ${job.status}: ${job.error}`);
  // a fast wrong answer is no answer: every file written, every hash checked and equal
  const report = job.report;
  if (!report) throw new Error('upload job succeeded without a report');
  if (report.failed_fixity.length > 0) throw new Error(`upload: ${report.failed_fixity.length} files failed their fixity check, e.g. ${JSON.stringify(report.failed_fixity[0])}`);
  if (report.file_errors.length > 0) throw new Error(`upload: ${report.file_errors.length} per-file errors, e.g. ${JSON.stringify(report.file_errors[0])}`);
  return job;
}

/**
 * POSTs a transfer and waits for its job's end, from the server's job events; a job that
 * ends any other way than succeeded, or with a per-file error, stops the bench.
 */
async function transferAndWait(server: FerryProcess, destination: string, containerId: string | null, source: { target: string; id: string; token?: string }, destinationToken: string): Promise<Job> {
  const events = await JobEvents.of(server);
  const url = new URL(`api_v1/targets/${destination}/resources/${containerId === null ? '' : `${encodeURIComponent(containerId)}/`}`, server.url);
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'service-source-token': source.token ?? server.accessKey, 'service-destination-token': destinationToken, 'duplicate-file-action': 'update' },
    body: JSON.stringify({ source_target_name: source.target, source_resource_id: source.id }),
  });
  if (response.status !== 202) throw new Error(`transfer to ${destination}: HTTP ${response.status} ${await response.text()}`);
  const { ticket_number: ticket } = (await response.json()) as { ticket_number: string };
  const job = await events.end(ticket);
  if (job.status !== 'succeeded') throw new Error(`transfer to ${destination}: job ${job.status}: ${job.error}`);
  if (job.report && (job.report.failed_fixity.length > 0 || job.report.file_errors.length > 0)) throw new Error(`transfer to ${destination}: ${JSON.stringify(job.report.file_errors[0] ?? job.report.failed_fixity[0])}`);
  return job;
}

/** The files below `folder` that a job carried, not counting the provenance record it writes beside them. */
async function filesBelow(folder: string): Promise<number> {
  return (await readdir(folder, { recursive: true, withFileTypes: true })).filter((entry) => entry.isFile() && entry.name !== PROVENANCE_RECORD).length;
}

/** rclone's environment for a WebDAV remote named `dav` (rclone.org/docs/#config-file: RCLONE_CONFIG_<NAME>_<OPTION>). */
async function rcloneWebdavEnv(url: string, user: string, password: string): Promise<NodeJS.ProcessEnv> {
  const obscured = await new Promise<string>((resolve, reject) => {
    const child = spawn('rclone', ['obscure', '-'], { stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stdin!.end(password);
    child.on('exit', (code) => (code === 0 ? resolve(out.trim()) : reject(new Error(`rclone obscure exited with ${code}`))));
  });
  return { ...process.env, RCLONE_CONFIG_DAV_TYPE: 'webdav', RCLONE_CONFIG_DAV_URL: url, RCLONE_CONFIG_DAV_VENDOR: 'other', RCLONE_CONFIG_DAV_USER: user, RCLONE_CONFIG_DAV_PASS: obscured };
}

function rcloneCopy(from: string, to: string, env: NodeJS.ProcessEnv = process.env, config = '/dev/null'): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('rclone', ['copy', from, to, '--config', config], { stdio: ['ignore', 'ignore', 'inherit'], env });
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`rclone copy ${from} ${to} exited with ${code}`))));
  });
}

/** what every upload and transfer writes at the top of what it wrote (docs/provenance.md) */
const PROVENANCE_RECORD = 'ferry-provenance.json';

const rcloneAvailable = spawnSync('rclone', ['version'], { stdio: 'ignore' }).status === 0;

async function fileDigests(file: string): Promise<Record<string, string>> {
  const md5 = createHash('md5');
  const sha256 = createHash('sha256');
  for await (const chunk of createReadStream(file, { highWaterMark: 1024 * 1024 })) {
    md5.update(chunk as Buffer);
    sha256.update(chunk as Buffer);
  }
  return { md5: md5.digest('hex'), sha256: sha256.digest('hex') };
}

/** Every row must hold real measurements; anything else means the benchmark itself is broken. */
function checkRows(rows: Row[], expected: number): void {
  const broken = rows.filter((row) => !Number.isFinite(row.ferry_seconds) || row.ferry_seconds <= 0 || !Number.isFinite(row.ratio) || row.ratio <= 0 || !Number.isFinite(row.reference_seconds));
  if (rows.length !== expected) throw new Error(`expected ${expected} rows, measured ${rows.length}`);
  if (broken.length > 0) throw new Error(`rows without a real measurement: ${broken.map((row) => row.name).join('; ')}`);
}

async function requestsPerSecond(url: string, headers: Record<string, string> = {}): Promise<number> {
  const result = await autocannon({ url, connections: 10, duration: sizes.cannonSeconds, headers });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx answers and ${result.errors} errors under load`);
  return result.requests.average;
}

/** The first answer of `url`, which must be a 200 (read to its end). */
async function firstAnswer(url: string): Promise<void> {
  const response = await fetch(url);
  await response.arrayBuffer();
  if (response.status !== 200) throw new Error(`${url}: HTTP ${response.status}`);
}

async function startBareFastify(): Promise<{ url: string; stop(): void }> {
  const child = spawn(process.execPath, [path.resolve('bench/bare-fastify.mjs')], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.once('data', (chunk: Buffer) => resolve(chunk.toString().trim()));
    child.once('exit', (code) => reject(new Error(`bare fastify exited ${code}`)));
  });
  return { url, stop: () => child.kill('SIGTERM') };
}

async function main(): Promise<void> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'ferry-bench-'));
  // What a timed run made is moved aside before the next, not removed (set-aside.ts), and the
  // file system synced; all go with `root` at the end.
  const moveAside = setAsideIn(root);
  const setAside = async (folder: string) => {
    await moveAside(folder);
    await command('sync', ['-f', root]);
  };
  const rows: Row[] = [];
  const servers: FerryProcess[] = [];
  const serve = async (name: string, extraArgs: string[] = []) => {
    const dataDir = path.join(root, `${name}-data`);
    const workspace = path.join(root, `${name}-workspace`);
    await mkdir(workspace, { recursive: true });
    const server = await startFerryProcess({ dataDir, workspace, built: !args.source, extraArgs });
    servers.push(server);
    return { server, workspace, dataDir };
  };
  const add = (row: Row) => {
    rows.push(row);
    console.log(`  ${row.name}: ${seconds(row.ferry_seconds)} vs ${row.reference} ${seconds(row.reference_seconds)} → ${row.ratio.toFixed(2)} (${row.goal}${row.met === null ? '' : row.met ? ', met' : ', NOT met'})`);
  };
  // each run's new mtime makes the server read again (no cache keyed on it answers)
  let touch = 0;
  try {
    console.log(`Benchmark data in ${root} (${args.smoke ? 'smoke' : args.full ? 'full' : 'quick'} sizes, ${runs} run(s) each)`);
    const { server, workspace } = await serve('main');

    // ---- download and upload, on a mixed and an incompressible folder
    if (wanted('download') || wanted('upload')) {
    const mixedBytes = await makeMixedFolder(path.join(workspace, 'Mixed'), sizes);
    const incompressibleBytes = await makeIncompressibleFolder(path.join(workspace, 'Incompressible'), sizes.incompressible[0]!, sizes.incompressible[1]!);
    // Untimed, of another folder (nothing of the timed ones remembered): a process's first
    // download also starts its worker threads and warms the JIT, which is not what the rows measure.
    await makeMixedFolder(path.join(workspace, 'Warm-up'), { ...sizes, textFiles: Math.min(sizes.textFiles, 200), binaries: 1, binaryBytes: 2 * MiB }, 7);
    await downloadTo(server, 'local', await topLevelId(server, 'local', 'Warm-up'), path.join(root, 'warm-up.zip'));
    for (const [folder, bytes] of [['Mixed', mixedBytes], ['Incompressible', incompressibleBytes]] as const) {
      const id = await topLevelId(server, 'local', folder);
      const out = path.join(root, `${folder}.zip`);
      const referenceZip = path.join(root, `${folder}-ref.zip`);
      // Interleaved rounds (zip -r, Ferry, zip -0, Ferry again), medians of each: on a shared
      // machine a neighbour's burst then tends to hit all of them rather than one side of a
      // ratio. Each round starts with new mtimes on every file, so no digest Ferry remembers
      // answers the first download; the second takes the ones the first remembered (see
      // "Downloads" in bench/README.md).
      const firstTimes: number[] = [];
      const againTimes: number[] = [];
      const deflateTimes: number[] = [];
      const storeTimes: number[] = [];
      let deflatedBytes = 0;
      // CPU seconds too: on a shared machine they move far less with the neighbours' load than wall time
      const firstCpu: number[] = [];
      const againCpu: number[] = [];
      const storeCpu: number[] = [];
      const ferryDownload = async (times: number[], cpu: number[]) => {
        // as zip's output is removed before it runs: truncating the last ZIP (~10 ms) is not the download's
        await rm(out, { force: true });
        const serverBefore = await cpuSeconds(server.pid);
        let clientCpu = 0;
        times.push(await timed(async () => (clientCpu = await downloadTo(server, 'local', id, out))));
        cpu.push((await cpuSeconds(server.pid)) - serverBefore + clientCpu);
      };
      for (let round = 0; round < (wanted('download') ? runs : 1); round++) {
        await newMtimes(path.join(workspace, folder), ++touch);
        if (wanted('download')) {
          // zip -r first: after the settle wait's idle seconds the machine is slower for a moment (both Ferry and zip)
          await rm(referenceZip, { force: true });
          deflateTimes.push(await timed(() => command('zip', ['-q', '-r', referenceZip, folder], workspace)));
          deflatedBytes = (await stat(referenceZip)).size;
        }
        await ferryDownload(firstTimes, firstCpu);
        if (!wanted('download')) break; // only the ZIP is needed, for the upload rows
        await rm(referenceZip, { force: true });
        let zipCpu = 0;
        storeTimes.push(await timed(async () => (zipCpu = await commandCpu('zip', ['-q', '-0', '-r', referenceZip, folder], workspace))));
        storeCpu.push(zipCpu);
        await ferryDownload(againTimes, againCpu);
      }
      // a fast broken ZIP is no answer: Info-ZIP must read every entry and its CRC
      await command('unzip', ['-tqq', out]);
      if (wanted('download')) {
        const first = median(firstTimes);
        const again = median(againTimes);
        const zipDeflate = median(deflateTimes);
        const zipStore = median(storeTimes);
        const roundRatios = (times: number[]) => times.map((time, i) => (time / storeTimes[i]!).toFixed(2)).join(' ');
        const label = `download ${folder.toLowerCase()} (${(bytes / MiB).toFixed(0)} MiB)`;
        const mixed = folder === 'Mixed';
        add({ name: `${label} vs zip -r`, ferry_seconds: first, reference: 'zip -r', reference_seconds: zipDeflate, ratio: first / zipDeflate, goal: mixed ? '≤ 0.33 (3× faster)' : 'informational', met: mixed ? first * 3 <= zipDeflate : null, note: `first download; ZIP ${((await stat(out)).size / MiB).toFixed(1)} MiB vs zip -r ${(deflatedBytes / MiB).toFixed(1)} MiB` });
        add({ name: `${label} vs zip -0 -r, first download`, ferry_seconds: first, reference: 'zip -0 -r', reference_seconds: zipStore, ratio: first / zipStore, goal: mixed ? '≤ 1.3' : 'informational', met: mixed ? first <= 1.3 * zipStore : null, note: `every byte hashed; per round ${roundRatios(firstTimes)}; CPU s ${median(firstCpu).toFixed(2)} vs ${median(storeCpu).toFixed(2)}` });
        add({ name: `${label} vs zip -0 -r, again`, ferry_seconds: again, reference: 'zip -0 -r', reference_seconds: zipStore, ratio: again / zipStore, goal: mixed ? '≤ 1.3' : 'informational', met: mixed ? again <= 1.3 * zipStore : null, note: `digests remembered, CRC-32 checked; per round ${roundRatios(againTimes)}; CPU s ${median(againCpu).toFixed(2)}` });
      }

      if (folder === 'Mixed' && wanted('upload')) {
        let n = 0;
        const uploads = path.join(workspace, 'Uploads');
        await mkdir(uploads, { recursive: true });
        const uploadsId = await topLevelId(server, 'local', 'Uploads');
        const expectedFiles = sizes.textFiles + sizes.binaries;
        const uploadCreation = fileCreationNote(workspace);
        const upload = await medianOf(async () => {
          const job = await uploadAndWait(server, uploadsId, out);
          const files = job.progress.files_done;
          if (files !== expectedFiles) throw new Error(`upload: the job wrote ${files} files, the bag holds ${expectedFiles}`);
        }, async () => {
          await afterIdleCollection();
          await setAside(uploads);
          await mkdir(uploads, { recursive: true });
          n++;
        });
        await afterIdleCollection();
        const written = (await readdir(uploads, { recursive: true, withFileTypes: true })).filter((dirent) => dirent.isFile() && dirent.name !== PROVENANCE_RECORD).length;
        if (written !== expectedFiles) throw new Error(`upload: ${written} files on disk after the last run, the bag holds ${expectedFiles}`);
        const unzipDir = path.join(root, 'unzipped');
        const unzip = await medianOf(() => command('unzip', ['-q', '-o', out, '-d', unzipDir]), () => setAside(unzipDir));
        add({ name: `upload mixed bag (${(bytes / MiB).toFixed(0)} MiB) until the job ends`, ferry_seconds: upload, reference: 'unzip', reference_seconds: unzip, ratio: upload / unzip, goal: '≤ 1.3', met: upload <= 1.3 * unzip, note: `${n} uploads; ${uploadCreation}` });
      }
    }

    }

    // ---- transfers between targets, against rclone copy (and unzip for a stored ZIP)
    if (wanted('transfer')) {
      if (!rcloneAvailable) throw new Error('the transfer rows compare with rclone: install it (apt-get install rclone)');
      const apacheReason = apacheUnavailableReason();
      if (apacheReason) throw new Error(`the WebDAV rows need Apache: ${apacheReason}`);
      const spec = { textFiles: sizes.transferTexts, maxTextBytes: 40 * 1024, binaries: sizes.transferBinaries, binaryBytes: sizes.transferBinaryBytes };
      const from = await serve('transfer');
      const source = path.join(from.workspace, 'Transfer');
      const transferBytes = await makeMixedFolder(source, spec, 11);
      const fileCount = spec.textFiles + spec.binaries;
      const label = `${fileCount} files, ${(transferBytes / MiB).toFixed(0)} MiB`;
      const sourceId = await topLevelId(from.server, 'local', 'Transfer');
      // the server's high-water mark after each row: the memory row's note says which row reached it
      const peaks: { row: string; bytes: number }[] = [];
      const notePeak = async (row: string) => peaks.push({ row, bytes: await peakRssBytes(from.server.pid) });
      const check = async (folder: string, what: string) => {
        const found = await filesBelow(folder).catch(async () => {
          throw new Error(`${what}: nothing arrived at ${folder}; beside it: ${(await readdir(path.dirname(folder), { recursive: true }).catch(() => [])).slice(0, 10).join(', ')}`);
        });
        if (found !== fileCount) throw new Error(`${what}: ${found} files arrived of ${fileCount}`);
      };

      // local → local: into a fresh folder of the same workspace; rclone copy into a fresh folder
      const into = path.join(from.workspace, 'Into');
      const rcloneOut = path.join(root, 'rclone-out');
      const fresh = async () => {
        await setAside(into);
        await mkdir(into);
        await setAside(rcloneOut);
      };
      await fresh();
      const intoId = await topLevelId(from.server, 'local', 'Into');
      // where both copies make their files (the workspace and the bench's folder hold them both)
      const localCreation = fileCreationNote(from.workspace);
      const ferryLocal: number[] = [];
      const rcloneLocal: number[] = [];
      for (let round = 0; round < runs; round++) {
        await fresh();
        ferryLocal.push(await timed(() => transferAndWait(from.server, 'local', intoId, { target: 'local', id: sourceId }, from.server.accessKey)));
        await afterIdleCollection();
        await check(path.join(into, 'Transfer'), 'local → local');
        rcloneLocal.push(await timed(() => rcloneCopy(source, rcloneOut)));
        await check(rcloneOut, 'rclone copy');
      }
      const local = median(ferryLocal);
      const rcloneLocalTime = median(rcloneLocal);
      add({ name: `transfer local → local (${label})`, ferry_seconds: local, reference: 'rclone copy', reference_seconds: rcloneLocalTime, ratio: local / rcloneLocalTime, goal: '≤ 1.0', met: local <= rcloneLocalTime, note: localCreation });
      await notePeak('local → local');

      // local → WebDAV, on Apache mod_dav and on rclone serve webdav, each against rclone copy to the same server
      const apache = await startApacheWebdav();
      const rcloneDav = await startRcloneWebdav();
      try {
        const servers = [
          { name: 'Apache mod_dav', url: apache.url, user: apache.username, password: apache.password, dataDir: apache.dataDir },
          { name: 'rclone serve webdav', url: rcloneDav.url, user: rcloneDav.username, password: rcloneDav.password, dataDir: rcloneDav.dataDir },
        ];
        for (const dav of servers) {
          const token = JSON.stringify({ url: dav.url, username: dav.user, password: dav.password });
          const env = await rcloneWebdavEnv(dav.url, dav.user, dav.password);
          const ferryTimes: number[] = [];
          const rcloneTimes: number[] = [];
          const clear = async () => {
            for (const name of await readdir(dav.dataDir)) await setAside(path.join(dav.dataDir, name));
          };
          for (let round = 0; round < runs; round++) {
            await clear();
            ferryTimes.push(await timed(() => transferAndWait(from.server, 'webdav', null, { target: 'local', id: sourceId }, token)));
            await afterIdleCollection();
            await check(path.join(dav.dataDir, 'Transfer'), `local → WebDAV (${dav.name})`);
            await clear();
            rcloneTimes.push(await timed(() => rcloneCopy(source, 'dav:Transfer', env)));
            await check(path.join(dav.dataDir, 'Transfer'), `rclone copy to WebDAV (${dav.name})`);
          }
          const ferry = median(ferryTimes);
          const reference = median(rcloneTimes);
          add({ name: `transfer local → WebDAV, ${dav.name} (${label})`, ferry_seconds: ferry, reference: 'rclone copy', reference_seconds: reference, ratio: ferry / reference, goal: '≤ 0.8', met: ferry <= 0.8 * reference });
          await notePeak(`local → WebDAV, ${dav.name}`);

          if (dav.name === 'Apache mod_dav') {
            // WebDAV → local: the folder the last rclone copy left on the server, into fresh local folders
            const davSourceId = (await api<ResourceSummary[]>(from.server, 'api_v1/targets/webdav/resources/?container=None', { headers: { 'service-source-token': token } })).find((node) => node.title === 'Transfer')?.id;
            if (!davSourceId) throw new Error('WebDAV → local: the Transfer folder is not listed on the server');
            const backTimes: number[] = [];
            const rcloneBack: number[] = [];
            for (let round = 0; round < runs; round++) {
              await fresh();
              backTimes.push(await timed(() => transferAndWait(from.server, 'local', intoId, { target: 'webdav', id: davSourceId, token }, from.server.accessKey)));
              await afterIdleCollection();
              await check(path.join(into, 'Transfer'), 'WebDAV → local');
              rcloneBack.push(await timed(() => rcloneCopy('dav:Transfer', rcloneOut, env)));
              await check(rcloneOut, 'rclone copy from WebDAV');
            }
            const back = median(backTimes);
            const reference = median(rcloneBack);
            add({ name: `transfer WebDAV (Apache) → local (${label})`, ferry_seconds: back, reference: 'rclone copy', reference_seconds: reference, ratio: back / reference, goal: '≤ 0.8', met: back <= 0.8 * reference });
            await notePeak('WebDAV (Apache) → local');
          }
        }
      } finally {
        await apache.stop();
        await rcloneDav.stop();
      }

      // a plain stored ZIP (zip -0) uploaded until its job ends, against unzip of the same ZIP
      const storedZip = path.join(root, 'transfer-stored.zip');
      await rm(storedZip, { force: true });
      await command('zip', ['-q', '-0', '-r', storedZip, 'Transfer'], from.workspace);
      const uploads = path.join(from.workspace, 'Stored');
      const storedCreation = fileCreationNote(from.workspace);
      const upload = await medianOf(async () => {
        const job = await uploadAndWait(from.server, await topLevelId(from.server, 'local', 'Stored'), storedZip);
        if (job.progress.files_done !== fileCount) throw new Error(`stored ZIP upload: ${job.progress.files_done} files written of ${fileCount}`);
      }, async () => {
        await afterIdleCollection();
        await setAside(uploads);
        await mkdir(uploads);
      });
      await afterIdleCollection();
      await check(uploads, 'stored ZIP upload');
      const unzipDir = path.join(root, 'unzipped-stored');
      const unzip = await medianOf(() => command('unzip', ['-q', '-o', storedZip, '-d', unzipDir]), () => setAside(unzipDir));
      add({ name: `upload a stored ZIP (zip -0, ${label}) until the job ends`, ferry_seconds: upload, reference: 'unzip', reference_seconds: unzip, ratio: upload / unzip, goal: '≤ 1.0', met: upload <= unzip, note: storedCreation });
      await notePeak('stored ZIP');

      // one server ran every row of this group (local → local, to and from
      // WebDAV, the stored-ZIP uploads), one after the other: its high-water mark over them all
      const transferPeak = await peakRssBytes(from.server.pid);
      add({ name: 'peak server RSS through the transfer rows', ferry_seconds: local, reference: 'limit 200 MB', reference_seconds: 0, ratio: transferPeak / MiB, goal: '< 200 MB', met: transferPeak < 200 * 1000 * 1000, note: `${(transferPeak / MiB).toFixed(0)} MiB peak (VmHWM), reached in ${peaks.find((peak) => peak.bytes === transferPeak)?.row ?? 'no row'}; after each row: ${peaks.map((peak) => (peak.bytes / MiB).toFixed(0)).join(', ')} MiB` });
    }

    // ---- remote → remote on one rclone engine: Ferry hands the copy to rclone (sync/copy as an
    // rc job, then checks the listings); the reference is the same copy as `rclone copy` by hand.
    // Two local-backend remotes, so the row measures Ferry's share and not a network.
    if (wanted('rclone')) {
      if (!rcloneAvailable) throw new Error('the remote → remote row compares with rclone: install it (apt-get install rclone)');
      const spec = { textFiles: sizes.transferTexts, maxTextBytes: 40 * 1024, binaries: sizes.transferBinaries, binaryBytes: sizes.transferBinaryBytes };
      const sourceRoot = path.join(root, 'rclone-source');
      const transferBytes = await makeMixedFolder(path.join(sourceRoot, 'Transfer'), spec, 11);
      const fileCount = spec.textFiles + spec.binaries;
      const label = `${fileCount} files, ${(transferBytes / MiB).toFixed(0)} MiB`;
      const landing = path.join(root, 'rclone-landing');
      await mkdir(landing, { recursive: true });
      const config = path.join(root, 'rclone.conf');
      await writeFile(config, `[src]\ntype = alias\nremote = ${sourceRoot}\n\n[dst]\ntype = alias\nremote = ${landing}\n`, { mode: 0o600 });
      const dataDir = path.join(root, 'rclone-data');
      const engineWorkspace = path.join(root, 'rclone-workspace');
      await mkdir(engineWorkspace, { recursive: true });
      const viaRclone = await startFerryProcess({ dataDir, workspace: engineWorkspace, built: !args.source, env: { FERRY_RCLONE_CONFIG: config } });
      servers.push(viaRclone);
      const remoteSourceId = await topLevelId(viaRclone, 'rclone-src', 'Transfer');
      // the last copy set aside and written back before the next starts: neither copies beside the other's writeback
      const clear = async () => {
        for (const name of await readdir(landing)) await setAside(path.join(landing, name));
      };
      const check = async (what: string) => {
        const found = await filesBelow(path.join(landing, 'Transfer'));
        if (found !== fileCount) throw new Error(`${what}: ${found} files arrived of ${fileCount}`);
      };
      const ferryTimes: number[] = [];
      const byHand: number[] = [];
      const viaFerry = async () => {
        await clear();
        ferryTimes.push(await timed(() => transferAndWait(viaRclone, 'rclone-dst', null, { target: 'rclone-src', id: remoteSourceId }, viaRclone.accessKey)));
        await afterIdleCollection();
        await check('remote → remote (rclone job)');
      };
      const viaHand = async () => {
        await clear();
        byHand.push(await timed(() => rcloneCopy('src:Transfer', 'dst:Transfer', process.env, config)));
        await check('rclone copy remote → remote');
      };
      // which goes first alternates: the first copy of a run is slower for either (caches)
      for (let round = 0; round < runs; round++) {
        for (const copy of round % 2 === 0 ? [viaFerry, viaHand] : [viaHand, viaFerry]) await copy();
      }
      const ferry = median(ferryTimes);
      const reference = median(byHand);
      const perRound = ferryTimes.map((time, i) => (time / byHand[i]!).toFixed(2)).join(' ');
      add({ name: `transfer remote → remote through Ferry (rclone job) (${label})`, ferry_seconds: ferry, reference: 'rclone copy', reference_seconds: reference, ratio: ferry / reference, goal: '≤ 1.1', met: ferry <= 1.1 * reference, note: `per round ${perRound}; load ${os.loadavg()[0]!.toFixed(2)}` });
    }

    // ---- the write pipeline against a remote's round trip (issue #18): every request to each
    // remote target held 50 ms, a transfer of small files local → target; the time against the
    // ideal of the target's declared requests in flight, request after request
    if (wanted('latency')) {
      const apacheReason = apacheUnavailableReason();
      if (apacheReason) throw new Error(`the latency rows' WebDAV server is Apache: ${apacheReason}`);
      const latency = new Latency(LATENCY_MS);
      const osf = await startOsfEmulator({ latency, defaultPageSize: 100 });
      // an instance that takes the whole upload in one record (RDM_RECORDS_MAX_FILES_COUNT is its own setting)
      const invenio = await startInvenioEmulator({ latency, maxFiles: sizes.latencyFiles + 1 });
      // htpasswd's own default hash (APR1 MD5), not the tests' bcrypt: Basic auth checks the password
      // on every request, and bcrypt's ~1.4 ms of Apache's CPU a request, on the two cores Ferry
      // shares with it, is the server's time, not Ferry's (bench/README.md)
      const apache = await startApacheWebdav({ passwordHash: 'md5' });
      const dav = await startLatencyProxy(apache.url, latency);
      try {
        const osfToken = osf.state.addToken(osf.state.addUser('Bench Researcher').id);
        const dataDir = path.join(root, 'latency-data');
        const latencyWorkspace = path.join(root, 'latency-workspace');
        await mkdir(latencyWorkspace, { recursive: true });
        // the rate budgets lifted (OSF 5, InvenioRDM 2 requests a second by default): these rows measure what is in flight
        const remote = await startFerryProcess({
          dataDir,
          workspace: latencyWorkspace,
          built: !args.source,
          extraArgs: ['--osf-api-url', osf.apiUrl, '--invenio-url', invenio.url],
          env: { FERRY_OSF_RATE_PER_SECOND: '100000', FERRY_INVENIO_RATE_PER_SECOND: '100000' },
        });
        servers.push(remote);
        await makeMixedFolder(path.join(latencyWorkspace, 'Small'), { textFiles: sizes.latencyFiles, maxTextBytes: 4 * 1024, binaries: 0, binaryBytes: 0 }, 13);
        const smallId = await topLevelId(remote, 'local', 'Small');
        const destinations = [
          { name: 'OSF (emulator)', target: 'osf', token: osfToken, inFlight: OSF_IN_FLIGHT.files },
          { name: 'InvenioRDM (emulator)', target: 'invenio', token: 'invenio-token', inFlight: INVENIO_IN_FLIGHT.files },
          { name: 'WebDAV (Apache mod_dav)', target: 'webdav', token: JSON.stringify({ url: dav.url, username: apache.username, password: apache.password }), inFlight: WEBDAV_IN_FLIGHT.files },
        ];
        for (const destination of destinations) {
          const times: number[] = [];
          const requests: number[] = [];
          let most = 0;
          let mean = 0;
          let requestMs = 0;
          let connections = 0;
          // Apache makes a file a PUT on disk; the emulators keep theirs in memory
          const serverCreation = destination.target === 'webdav' ? `; Apache's folder: ${fileCreationNote(path.dirname(apache.dataDir))}` : '';
          for (let round = 0; round < runs; round++) {
            latency.reset();
            // a new top-level resource each round (a project, a draft, a folder): nothing to compare against
            const job = await timedJob(() => transferAndWait(remote, destination.target, null, { target: 'local', id: smallId }, destination.token));
            if (job.result.progress.files_done !== sizes.latencyFiles) throw new Error(`latency, ${destination.name}: ${job.result.progress.files_done} files written of ${sizes.latencyFiles}`);
            times.push(job.seconds);
            requests.push(latency.requests);
            most = Math.max(most, latency.mostUnderWay);
            mean = Math.max(mean, latency.averageUnderWay());
            requestMs = Math.max(requestMs, latency.meanRequestMs());
            connections = Math.max(connections, latency.connections);
          }
          const time = median(times);
          const sent = median(requests);
          const ideal = (sent / destination.inFlight) * (LATENCY_MS / 1000);
          add({
            name: `upload ${sizes.latencyFiles} small files to ${destination.name}, ${LATENCY_MS} ms a request`,
            ferry_seconds: time,
            reference: `ideal: requests ÷ ${destination.inFlight} × ${LATENCY_MS} ms`,
            reference_seconds: ideal,
            ratio: time / ideal,
            goal: '≤ 1.2',
            met: time <= 1.2 * ideal,
            note: `${sent} requests, ${(sent / sizes.latencyFiles).toFixed(2)} a file; at most ${most} under way, ${mean.toFixed(1)} on average, each ${requestMs.toFixed(0)} ms on average; ${connections} connections; load ${os.loadavg()[0]!.toFixed(2)}${serverCreation}`,
          });
        }
      } finally {
        await dav.close();
        await apache.stop();
        await invenio.close();
        await osf.close();
      }
    }

    // ---- hashing for detail
    if (wanted('hashing')) {
    const hashFolder = path.join(workspace, 'Hashing');
    const hashFile = path.join(hashFolder, 'large.bin');
    await writeIncompressible(hashFile, 'hashing', sizes.hashBytes);
    const hashFolderId = await topLevelId(server, 'local', 'Hashing');
    const children = await api<ResourceSummary[]>(server, `api_v1/targets/local/resources/?container=${encodeURIComponent(hashFolderId)}`, { headers: { 'service-source-token': server.accessKey } });
    const fileId = children[0]!.id;
    const detail = await medianOf(
      () => api(server, `api_v1/targets/local/resources/${encodeURIComponent(fileId)}.json/`, { headers: { 'service-source-token': server.accessKey } }),
      // A new mtime invalidates the (path, size, mtime) cache, so each run hashes for real.
      () => utimes(hashFile, new Date(), new Date(Date.now() - 1000 * ++touch)),
    );
    const sums = await medianOf(() => command(`md5sum '${hashFile}' >/dev/null && sha256sum '${hashFile}' >/dev/null`, []));
    const shown = await api<{ hashes: Record<string, string> }>(server, `api_v1/targets/local/resources/${encodeURIComponent(fileId)}.json/`, { headers: { 'service-source-token': server.accessKey } });
    const truth = await fileDigests(hashFile);
    if (shown.hashes.md5 !== truth.md5 || shown.hashes.sha256 !== truth.sha256) throw new Error(`detail hashes ${JSON.stringify(shown.hashes)} differ from ${JSON.stringify(truth)}`);
    add({ name: `detail hashes md5+sha256 (${(sizes.hashBytes / MiB).toFixed(0)} MiB)`, ferry_seconds: detail, reference: 'md5sum; sha256sum', reference_seconds: sums, ratio: detail / sums, goal: '< 1', met: detail < sums });

    }

    // ---- listing
    if (wanted('listing')) {
    const list = await serve('listing');
    await makeManyFiles(path.join(list.workspace, 'Many'), sizes.listFiles);
    // As a workspace is between a user's listings: not written to in the last seconds (a folder
    // changed within SETTLED_NS is listed afresh every time, see electron/core/targets/local/listing.ts).
    await new Promise((resolve) => setTimeout(resolve, 2500));
    // every file, plus the top folder and its 100 subfolders
    const listing = await timedListing(list.server, 'api_v1/targets/local/resources/', sizes.listFiles + 101);
    const find = median(await repeat(listingRuns, () => command(`find '${list.workspace}' | wc -l >/dev/null`, [])));
    add({ name: `list ${sizes.listFiles} files (GET resources/)`, ferry_seconds: listing.median, reference: 'find | wc -l', reference_seconds: find, ratio: listing.median / find, goal: '≤ 2', met: listing.median <= 2 * find, note: `first listing (nothing cached) ${listing.first.toFixed(3)} s = ${(listing.first / find).toFixed(2)}×` });

    const libraryDir = path.join(root, 'library');
    await mkdir(libraryDir, { recursive: true });
    const archive = path.join(libraryDir, 'many.zip');
    await writeManyEntriesZip(archive, sizes.archiveEntries, (i) => `many/d${i % 100}/f${i}.txt`);
    const lib = await serve('offline', ['--library', libraryDir]);
    const fresh = async () => {
      // A new mtime makes the server read the central directory again (no index cache).
      await utimes(archive, new Date(), new Date(Date.now() - 1000 * ++touch));
    };
    // the archive's top folder, 'many', its 100 folders and the entries
    const offline = (await timedListing(lib.server, 'api_v1/targets/offline/resources/', sizes.archiveEntries + 102, fresh)).median;
    const unzipList = median(await repeat(listingRuns, () => command(`unzip -l '${archive}' >/dev/null`, [])));
    add({ name: `list a ${sizes.archiveEntries}-entry archive (offline)`, ferry_seconds: offline, reference: 'unzip -l', reference_seconds: unzipList, ratio: offline / unzipList, goal: '≤ 2', met: offline <= 2 * unzipList });

    }

    // ---- API overhead
    if (wanted('api')) {
    const bare = await startBareFastify();
    try {
      // interleaved rounds, medians: on a shared machine a neighbour's burst then hits both sides
      const ferryRounds: number[] = [];
      const bareRounds: number[] = [];
      for (let round = 0; round < runs; round++) {
        ferryRounds.push(await requestsPerSecond(`${server.url}api_v1/targets/`));
        bareRounds.push(await requestsPerSecond(`${bare.url}api_v1/targets/`));
      }
      const ferryRps = median(ferryRounds);
      const bareRps = median(bareRounds);
      add({ name: 'GET /api_v1/targets/ requests per second', ferry_seconds: 1 / ferryRps, reference: 'bare Fastify route', reference_seconds: 1 / bareRps, ratio: ferryRps / bareRps, goal: '≥ 0.8 of bare', met: ferryRps >= 0.8 * bareRps, note: `${ferryRps.toFixed(0)} vs ${bareRps.toFixed(0)} req/s` });
    } finally {
      bare.stop();
    }

    // start until the first answer: `ferry serve` (its launcher, the server it relaunches with
    // the memory settings, every route declared) against a bare Fastify process, interleaved;
    // the desktop app's window waits for the same start
    const ferryStarts: number[] = [];
    const bareStarts: number[] = [];
    const startCpu: number[] = [];
    for (let round = 0; round < runs; round++) {
      const ferry = await timedJob(async () => {
        const { server: fresh } = await serve(`start-${round}`);
        await firstAnswer(`${fresh.url}api_v1/targets/`);
        return fresh;
      });
      ferryStarts.push(ferry.seconds);
      startCpu.push(await cpuSeconds(ferry.result.pid));
      ferry.result.child.kill('SIGINT');
      await ferry.result.exited;
      const reference = await timedJob(async () => {
        const fresh = await startBareFastify();
        await firstAnswer(`${fresh.url}api_v1/targets/`);
        return fresh;
      });
      bareStarts.push(reference.seconds);
      reference.result.stop();
    }
    const ferryStart = median(ferryStarts);
    const bareStart = median(bareStarts);
    add({ name: 'server start until its first answer (ferry serve)', ferry_seconds: ferryStart, reference: 'bare Fastify process', reference_seconds: bareStart, ratio: ferryStart / bareStart, goal: 'informational', met: null, note: `server CPU until then ${median(startCpu).toFixed(2)} s; per round ${ferryStarts.map((t) => t.toFixed(2)).join(', ')} s` });

    }

    // ---- peak memory: a fresh server per direction, so the high-water mark is that operation's
    if (wanted('memory')) {
    const memoryLabel = `${(sizes.memoryBytes / MiB).toFixed(0)} MiB`;
    const down = await serve('memory-down');
    await makeIncompressibleFolder(path.join(down.workspace, 'Big'), 4, Math.round(sizes.memoryBytes / 4));
    const bigZip = path.join(root, 'big.zip');
    const bigId = await topLevelId(down.server, 'local', 'Big');
    const downSeconds = await timed(() => downloadTo(down.server, 'local', bigId, bigZip));
    const downPeak = await peakRssBytes(down.server.pid);
    add({ name: `peak server RSS, ${memoryLabel} download`, ferry_seconds: downSeconds, reference: 'limit 200 MB', reference_seconds: 0, ratio: downPeak / MiB, goal: '< 200 MB', met: downPeak < 200 * 1000 * 1000, note: `${(downPeak / MiB).toFixed(0)} MiB peak` });
    const up = await serve('memory-up');
    await mkdir(path.join(up.workspace, 'Target'), { recursive: true });
    const targetId = await topLevelId(up.server, 'local', 'Target');
    const upSeconds = await timed(() => uploadAndWait(up.server, targetId, bigZip));
    const upPeak = await peakRssBytes(up.server.pid);
    add({ name: `peak server RSS, ${memoryLabel} upload`, ferry_seconds: upSeconds, reference: 'limit 200 MB', reference_seconds: 0, ratio: upPeak / MiB, goal: '< 200 MB', met: upPeak < 200 * 1000 * 1000, note: `${(upPeak / MiB).toFixed(0)} MiB peak` });

    }

    checkRows(rows, [...only].reduce((sum, group) => sum + ROWS[group as Group], 0));
    await report(rows);
  } finally {
    // each server ends before its data is removed: one still writing (a job's record, a
    // remembered digest) under a removal makes it fail with ENOTEMPTY
    await Promise.all(
      servers.map(
        (server) =>
          new Promise<void>((resolve) => {
            if (server.child.exitCode !== null || server.child.signalCode !== null) return resolve();
            const force = setTimeout(() => server.child.kill('SIGKILL'), 5000);
            server.child.once('exit', () => {
              clearTimeout(force);
              resolve();
            });
            server.child.kill('SIGTERM');
          }),
      ),
    );
    if (!args.keep) await rm(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  }
}

async function report(rows: Row[]): Promise<void> {
  const header = ['benchmark', 'ferry s', 'reference', 'ref s', 'ratio', 'goal', 'met', 'note'];
  const lines = rows.map((row) => [row.name, seconds(row.ferry_seconds), row.reference, seconds(row.reference_seconds), row.ratio.toFixed(2), row.goal, row.met === null ? '—' : row.met ? 'yes' : 'NO', row.note ?? '']);
  const widths = header.map((title, column) => Math.max(title.length, ...lines.map((line) => line[column]!.length)));
  const format = (cells: string[]) => `| ${cells.map((cell, column) => cell.padEnd(widths[column]!)).join(' | ')} |`;
  console.log(`\n${format(header)}\n|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|\n${lines.map(format).join('\n')}`);
  console.log('(ratio: Ferry time / reference time; for requests per second, Ferry / bare; for memory rows, MiB)');
  await mkdir(args.out!, { recursive: true });
  const result = { date: new Date().toISOString(), mode: args.smoke ? 'smoke' : args.full ? 'full' : 'quick', runs, cpus: os.cpus().length, node: process.version, rows };
  const json = path.join(args.out!, 'bench.json');
  await writeFile(json, `${JSON.stringify(result, null, 2)}\n`);
  console.log(`Wrote ${json}`);
  const png = path.join(args.out!, 'bench.png');
  const chart = await renderChart(rows, png);
  console.log(chart ? `Wrote ${png}` : `No PNG chart: ${chart === null ? 'no Chromium found' : 'rendering failed'} (the SVG is beside it)`);
}

main().catch((error: unknown) => {
  console.error(`Benchmark failed: ${error instanceof Error ? error.stack : String(error)}`);
  process.exit(1);
});
