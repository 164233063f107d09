// Ad-hoc: profile the server (node --cpu-prof, main thread) during the bench's local → local
// transfer and stored-ZIP upload rows, and print where its time went (self time by function)
// with each run's wall time, peak RSS and the server's CPU seconds.
// node --import tsx bench/profile-transfer.ts [--rounds N] [--only transfer|stored] [--source] [--trace-gc] [--node-arg=--flag …]
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import type { Job, ResourceSummary } from '../shared/api.js';
import { startFerryProcess, type FerryProcess } from '../test/support/ferry-process.js';
import { makeMixedFolder } from './data.js';
import { JobEvents } from './job-events.js';
import { postZip } from './post-zip.js';

const { values: args } = parseArgs({ options: { rounds: { type: 'string', default: '3' }, only: { type: 'string' }, source: { type: 'boolean', default: false }, keep: { type: 'boolean', default: false }, 'trace-gc': { type: 'boolean', default: false }, 'node-arg': { type: 'string', multiple: true } } });
const rounds = Number(args.rounds);
const root = await mkdtemp(path.join(os.tmpdir(), 'ferry-profile-'));
const profileDir = path.join(root, 'profiles');
const workspace = path.join(root, 'workspace');
await mkdir(workspace, { recursive: true });
await makeMixedFolder(path.join(workspace, 'Transfer'), { textFiles: 1200, maxTextBytes: 40 * 1024, binaries: 4, binaryBytes: 16 * 1024 * 1024 }, 11);
const storedZip = path.join(root, 'stored.zip');
await new Promise((resolve) => spawn('zip', ['-q', '-0', '-r', storedZip, 'Transfer'], { cwd: workspace, stdio: 'ignore' }).on('exit', resolve));

const server = await startFerryProcess({ dataDir: path.join(root, 'data'), workspace, built: !args.source, env: process.env, nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, ...(args['trace-gc'] ? ['--trace-gc'] : []), ...(args['node-arg'] ?? [])] });

async function api<T>(pathname: string, init: RequestInit = {}): Promise<T> {
  const response = await fetch(new URL(pathname, server.url), { ...init, headers: { authorization: `Bearer ${server.accessKey}`, 'service-source-token': server.accessKey, 'service-destination-token': server.accessKey, ...(init.headers as Record<string, string>) } });
  if (!response.ok && response.status !== 202) throw new Error(`${pathname}: HTTP ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}
const topLevelId = async (title: string) => (await api<ResourceSummary[]>('api_v1/targets/local/resources/?container=None')).find((r) => r.title === title)!.id;
/** the job's end, from the job events as the bench follows it */
async function waitFor(ticket: string): Promise<Job> {
  const job = await (await JobEvents.of(server)).end(ticket);
  if (job.status !== 'succeeded') throw new Error(`job ${job.status}: ${job.error}`);
  return job;
}
const cpu = async (p: FerryProcess) => {
  const fields = (await readFile(`/proc/${p.pid}/stat`, 'utf8')).split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
};
const rss = async () => Number(/VmHWM:\s+(\d+)/.exec(await readFile(`/proc/${server.pid}/status`, 'utf8'))![1]) / 1024;

async function measure(label: string, before: () => Promise<void>, run: () => Promise<unknown>): Promise<void> {
  for (let i = 0; i < rounds; i++) {
    await before();
    const cpuBefore = await cpu(server);
    const start = performance.now();
    await run();
    const seconds = (performance.now() - start) / 1000;
    console.log(`${label}: ${seconds.toFixed(3)} s, server CPU ${((await cpu(server)) - cpuBefore).toFixed(2)} s, peak RSS so far ${(await rss()).toFixed(0)} MiB, load ${os.loadavg()[0]!.toFixed(2)}`);
  }
}

const sourceId = await topLevelId('Transfer');
if (args.only !== 'stored') {
  const into = path.join(workspace, 'Into');
  await mkdir(into);
  const intoId = await topLevelId('Into');
  // the bench's reference, timed the same way between Ferry's rounds (the ratio is what moves least with the load)
  const rcloneOut = path.join(root, 'rclone-out');
  await measure('rclone copy (reference)', () => rm(rcloneOut, { recursive: true, force: true }), () => new Promise((resolve, reject) => spawn('rclone', ['copy', path.join(workspace, 'Transfer'), rcloneOut, '--config', '/dev/null'], { stdio: 'ignore' }).on('exit', (code) => (code === 0 ? resolve(code) : reject(new Error(`rclone exited ${code}`))))));
  await measure('transfer local → local', async () => {
    await rm(into, { recursive: true, force: true });
    await mkdir(into);
  }, async () => {
    const { ticket_number: ticket } = await api<{ ticket_number: string }>(`api_v1/targets/local/resources/${encodeURIComponent(intoId)}/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'duplicate-file-action': 'update' },
      body: JSON.stringify({ source_target_name: 'local', source_resource_id: sourceId }),
    });
    await waitFor(ticket);
  });
}
if (args.only !== 'transfer') {
  const stored = path.join(workspace, 'Stored');
  await mkdir(stored);
  const storedId = await topLevelId('Stored');
  const unzipDir = path.join(root, 'unzipped');
  await measure('unzip (reference)', () => rm(unzipDir, { recursive: true, force: true }), () => new Promise((resolve) => spawn('unzip', ['-q', '-o', storedZip, '-d', unzipDir], { stdio: 'ignore' }).on('exit', resolve)));
  await measure('stored ZIP upload', async () => {
    await rm(stored, { recursive: true, force: true });
    await mkdir(stored);
  }, async () => {
    const posted = performance.now();
    const ticket = await postZip(new URL(`api_v1/targets/local/resources/${encodeURIComponent(storedId)}/`, server.url).href, storedZip, server.accessKey, true);
    const spooled = performance.now();
    await waitFor(ticket);
    console.log(`  (spooled in ${((spooled - posted) / 1000).toFixed(3)} s, job ${((performance.now() - spooled) / 1000).toFixed(3)} s)`);
  });
}

server.child.kill('SIGINT');
await server.exited;
// the last collections: how big the JS heap got (the rest of the RSS is buffers, threads and code)
if (args['trace-gc']) {
  const collections = server.output().split('\n').filter((line) => /Mark-Compact|Scavenge/.test(line));
  console.log(collections.slice(-12).join('\n'));
  // how many collections of each kind in each isolate (the main thread's and each worker's), and their pauses added up
  const isolates = new Set(collections.map((line) => /^\[\d+:(0x[0-9a-f]+)\]/.exec(line)?.[1] ?? '?'));
  for (const isolate of isolates) {
    for (const kind of ['Scavenge', 'Mark-Compact']) {
      const lines = collections.filter((line) => line.includes(`:${isolate}]`) && line.includes(kind));
      if (lines.length === 0) continue;
      const pauses = lines.map((line) => Number(/, ([\d.]+) \/ [\d.]+ ms/.exec(line)?.[1] ?? 0));
      console.log(`isolate ${isolate}: ${kind} ${lines.length} collections, ${pauses.reduce((sum, ms) => sum + ms, 0).toFixed(0)} ms of pauses`);
      if (process.env.FERRY_PROFILE_GC_LINES) for (const line of lines) console.log(`  ${line}`);
    }
  }
}
interface ProfileNode { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }
for (const name of await readdir(profileDir)) {
  const profile = JSON.parse(await readFile(path.join(profileDir, name), 'utf8')) as { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const frame = byId.get(id)!.callFrame;
    const key = `${frame.functionName || '(anonymous)'} ${frame.url.replace(/^.*\/(out|electron|node_modules)\//, '$1/')}:${frame.lineNumber + 1}`;
    const delta = profile.timeDeltas[i] ?? 0;
    self.set(key, (self.get(key) ?? 0) + delta);
    total += delta;
  });
  console.log(`\n${name}: ${(total / 1e6).toFixed(2)} s sampled`);
  for (const [key, micros] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 40)) console.log(`${(micros / 1000).toFixed(0).padStart(7)} ms  ${key}`);
}
if (!args.keep) await rm(root, { recursive: true, force: true });
else console.log(`kept ${root}`);
