// Ad-hoc: the bench's local → local transfer, local → WebDAV (Apache mod_dav, `webdav`; no
// reference), WebDAV → local (`webdav-back`, after `webdav`; no reference) and stored-ZIP upload,
// each round followed by its reference (rclone copy, unzip),
// on one server that runs the given rows one after the other
// (as the bench's transfer group does), printing each round's time, the server's CPU seconds
// and its peak RSS so far. Extra server settings are passed through, so an on/off pair is two
// runs of this (docs/performance.md, "Local → local, the stored ZIP and peak memory").
// node --import tsx bench/probe-transfer.ts [--rounds N] [--rows transfer,webdav,webdav-back,stored] [--texts N] [--binaries N] [--env NAME=VALUE …] [--node-arg=--flag …] [--smaps file] [--output file] [--no-reference] [--threads] [--memory-log file]
import { spawn } from 'node:child_process';
import { lstat, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import type { ResourceSummary } from '../shared/api.js';
import { startFerryProcess } from '../test/support/ferry-process.js';
import { startApacheWebdav, type ApacheWebdav } from '../test/webdav/apache-webdav.js';
import { makeMixedFolder } from './data.js';
import { afterIdleCollection, JobEvents } from './job-events.js';
import { postZip } from './post-zip.js';
import { setAsideIn } from './set-aside.js';

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    rows: { type: 'string', default: 'transfer,stored' },
    /** the mixed folder's small text files (the bench's 1,200) and 16 MiB random files (its 4): `--binaries 0` times the small files alone, `--texts 0` the large ones */
    texts: { type: 'string', default: '1200' },
    binaries: { type: 'string', default: '4' },
    env: { type: 'string', multiple: true },
    'node-arg': { type: 'string', multiple: true },
    /** write the server's /proc/<pid>/smaps here as it was at the highest RSS seen (sampled every 20 ms): what held its memory at its peak; the sampling costs CPU, so time without it */
    smaps: { type: 'string' },
    /** write the server's output (stdout and stderr: --node-arg=--trace-gc lines) here at the end */
    output: { type: 'string' },
    'no-reference': { type: 'boolean', default: false },
    /** print each round's server CPU by thread (user + system seconds), from /proc/<pid>/task */
    threads: { type: 'boolean', default: false },
    /** write the server's process.memoryUsage() every 5 ms to this file (bench/memory-log.mjs): which memory grew, and when */
    'memory-log': { type: 'string' },
    /** print when the files of each round were made (their ctimes: the first, each tenth, the last, and the large files') against the round's start and end: the time before the first file, after the last, and where the large ones fell */
    timeline: { type: 'boolean', default: false },
    /** run `sync` before each timed run (Ferry's and the reference's): neither starts with the other's unwritten data to flush */
    'sync-before': { type: 'boolean', default: false },
    /** move each round's copies aside instead of removing them (set-aside.ts; all are removed at the end) */
    'keep-copies': { type: 'boolean', default: false },
    /** leave the probe's folder in place at the end (its path is printed), for a series of probes none of which should follow another's removal */
    leave: { type: 'boolean', default: false },
  },
});
const root = await mkdtemp(path.join(os.tmpdir(), 'ferry-probe-'));
const workspace = path.join(root, 'workspace');
const source = path.join(workspace, 'Transfer');
await makeMixedFolder(source, { textFiles: Number(args.texts), maxTextBytes: 40 * 1024, binaries: Number(args.binaries), binaryBytes: 16 * 1024 * 1024 }, 11);
const storedZip = path.join(root, 'stored.zip');
await run('zip', ['-q', '-0', '-r', storedZip, 'Transfer'], workspace);
const env = Object.fromEntries((args.env ?? []).map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]));
const memoryLog = args['memory-log'] ? { env: { FERRY_MEMORY_LOG: path.resolve(args['memory-log']) }, nodeArgs: [`--import=${pathToFileURL(path.resolve('bench/memory-log.mjs')).href}`] } : { env: {}, nodeArgs: [] };
const server = await startFerryProcess({ dataDir: path.join(root, 'data'), workspace, built: true, env: { ...env, ...memoryLog.env }, nodeArgs: [...(args['node-arg'] ?? []), ...memoryLog.nodeArgs] });

const setAside = setAsideIn(root);
/** `folder` made empty: removed, or with --keep-copies moved aside (set-aside.ts) */
async function clear(folder: string): Promise<void> {
  if (args['keep-copies']) await setAside(folder);
  else await rm(folder, { recursive: true, force: true });
}

function run(cmd: string, argv: string[], cwd?: string): Promise<void> {
  return new Promise((resolve, reject) => spawn(cmd, argv, { cwd, stdio: 'ignore' }).on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} exited with ${code}`)))));
}
async function api<T>(pathname: string, init: RequestInit = {}): Promise<T> {
  const response = await fetch(new URL(pathname, server.url), { ...init, headers: { authorization: `Bearer ${server.accessKey}`, 'service-source-token': server.accessKey, 'service-destination-token': server.accessKey, ...(init.headers as Record<string, string>) } });
  if (!response.ok) throw new Error(`${pathname}: HTTP ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}
const topLevelId = async (title: string) => (await api<ResourceSummary[]>('api_v1/targets/local/resources/?container=None')).find((resource) => resource.title === title)!.id;
/** the job's end, from the job events as the bench follows it; a job with any failed file stops the probe */
async function waitFor(ticket: string): Promise<void> {
  const job = await (await JobEvents.of(server)).end(ticket);
  if (job.status !== 'succeeded') throw new Error(`job ${job.status}: ${job.error ?? 'a file failed'}`);
  if (job.report && job.report.failed_fixity.length + job.report.file_errors.length > 0) throw new Error('a file failed');
}
const proc = (name: string) => readFile(`/proc/${server.pid}/${name}`, 'utf8');
const cpuSeconds = async () => {
  const fields = (await proc('stat')).split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
};
/** user and system CPU seconds by thread */
const threadSeconds = async (): Promise<Map<string, { user: number; system: number }>> => {
  const byName = new Map<string, { user: number; system: number }>();
  for (const task of await readdir(`/proc/${server.pid}/task`).catch(() => [] as string[])) {
    const stat = await readFile(`/proc/${server.pid}/task/${task}/stat`, 'utf8').catch(() => null);
    if (stat === null) continue;
    // on Node 20 every thread is called `node`: the main thread is told by its tid, the others by theirs
    const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const name = task === String(server.pid) ? 'main' : `${comm}#${task}`;
    const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
    const seconds = byName.get(name) ?? { user: 0, system: 0 };
    seconds.user += Number(fields[11]) / 100;
    seconds.system += Number(fields[12]) / 100;
    byName.set(name, seconds);
  }
  return byName;
};
const threadDelta = (before: Map<string, { user: number; system: number }>, after: Map<string, { user: number; system: number }>) =>
  [...after]
    .map(([name, t]) => [name, t.user - (before.get(name)?.user ?? 0), t.system - (before.get(name)?.system ?? 0)] as const)
    .filter(([, user, system]) => user + system > 0)
    .sort((a, b) => b[1] + b[2] - (a[1] + a[2]))
    .map(([name, user, system]) => `${name} ${user.toFixed(2)}u+${system.toFixed(2)}s`)
    .join(', ');
// the server's smaps at the highest RSS the sampler saw (its VmHWM moment, within 20 ms)
let peakSmaps = { rssKiB: 0, text: '' };
const smapsSampler = args.smaps
  ? setInterval(() => {
      void (async () => {
        const rssKiB = Number(/VmRSS:\s+(\d+)/.exec(await proc('status'))![1]);
        if (rssKiB > peakSmaps.rssKiB) peakSmaps = { rssKiB, text: await proc('smaps') };
      })().catch(() => undefined);
    }, 20)
  : null;
const peakMiB = async () => Number(/VmHWM:\s+(\d+)/.exec(await proc('status'))![1]) / 1024;

/** One transfer round without a reference (the WebDAV rows): its time, the server's CPU for it and the peak so far. */
async function timedTransfer(label: string, url: string, source: { source_target_name: string; source_resource_id: string }, tokens: Record<string, string>): Promise<void> {
  const cpuBefore = await cpuSeconds();
  const threadsBefore = args.threads ? await threadSeconds() : null;
  const start = performance.now();
  await waitFor((await api<{ ticket_number: string }>(url, { method: 'POST', headers: { 'content-type': 'application/json', 'duplicate-file-action': 'update', ...tokens }, body: JSON.stringify(source) })).ticket_number);
  const seconds = (performance.now() - start) / 1000;
  await afterIdleCollection();
  if (threadsBefore) console.log(`  threads: ${threadDelta(threadsBefore, await threadSeconds())}`);
  console.log(`${label}: ${seconds.toFixed(3)} s (server CPU ${((await cpuSeconds()) - cpuBefore).toFixed(2)} s); peak RSS so far ${(await peakMiB()).toFixed(0)} MiB; load ${os.loadavg()[0]!.toFixed(2)}`);
}

/** when the regular files below `folder` were made (ctime: the first, each tenth, the last, and those over 1 MiB), in seconds from `startedAt`, and the end */
async function timeline(folder: string, startedAt: number, endedAt: number): Promise<string> {
  const times: number[] = [];
  const large: number[] = [];
  for (const name of await readdir(folder, { recursive: true })) {
    const facts = await lstat(path.join(folder, name));
    if (!facts.isFile()) continue;
    times.push(facts.ctimeMs);
    if (facts.size > 1024 * 1024) large.push(facts.ctimeMs);
  }
  times.sort((a, b) => a - b);
  large.sort((a, b) => a - b);
  const at = (ms: number) => ((ms - startedAt) / 1000).toFixed(3);
  const tenth = (k: number) => at(times[Math.min(times.length - 1, Math.floor((times.length * k) / 10))]!);
  return `${times.length} files, first at ${at(times[0]!)} s, tenths ${[1, 2, 3, 4, 5, 6, 7, 8, 9].map(tenth).join(' ')}, last at ${at(times[times.length - 1]!)} s, end at ${at(endedAt)} s; large files at ${large.map(at).join(' ')}`;
}

const sourceId = await topLevelId('Transfer');
let dav: ApacheWebdav | null = null;
/** the credentials of the WebDAV server as a token */
const davToken = (server: ApacheWebdav) => JSON.stringify({ url: server.url, username: server.username, password: server.password });
for (const row of args.rows!.split(',')) {
  if (row !== 'transfer' && row !== 'stored' && row !== 'webdav' && row !== 'webdav-back') throw new Error(`--rows: transfer, webdav, webdav-back or stored, not ${row}`);
  if (row === 'webdav-back') {
    // WebDAV (Apache) → local, of the folder the webdav row left there
    if (!dav) throw new Error('--rows: webdav-back needs the webdav row before it');
    const token = davToken(dav);
    const davSourceId = (await api<ResourceSummary[]>('api_v1/targets/webdav/resources/?container=None', { headers: { 'service-source-token': token } })).find((node) => node.title === 'Transfer')!.id;
    const into = path.join(workspace, 'Back');
    await mkdir(into, { recursive: true });
    const intoId = await topLevelId('Back');
    for (let round = 0; round < Number(args.rounds); round++) {
      await clear(path.join(into, 'Transfer'));
      await timedTransfer(`webdav-back ${round}`, `api_v1/targets/local/resources/${encodeURIComponent(intoId)}/`, { source_target_name: 'webdav', source_resource_id: davSourceId }, { 'service-source-token': token });
    }
    continue;
  }
  if (row === 'webdav') {
    dav ??= await startApacheWebdav();
    const token = davToken(dav);
    for (let round = 0; round < Number(args.rounds); round++) {
      for (const name of await readdir(dav.dataDir)) await clear(path.join(dav.dataDir, name));
      await timedTransfer(`webdav ${round}`, 'api_v1/targets/webdav/resources/', { source_target_name: 'local', source_resource_id: sourceId }, { 'service-destination-token': token });
    }
    continue;
  }
  const into = path.join(workspace, row === 'stored' ? 'Stored' : 'Into');
  await mkdir(into);
  const intoId = await topLevelId(path.basename(into));
  const url = `api_v1/targets/local/resources/${encodeURIComponent(intoId)}/`;
  for (let round = 0; round < Number(args.rounds); round++) {
    await clear(into);
    await mkdir(into);
    if (args['sync-before']) await run('sync', []);
    const cpuBefore = await cpuSeconds();
    const threadsBefore = args.threads ? await threadSeconds() : null;
    const start = performance.now();
    const startedAt = Date.now();
    let answered = 0;
    if (row === 'stored') {
      const ticket = await postZip(new URL(url, server.url).href, storedZip, server.accessKey, true);
      answered = (performance.now() - start) / 1000;
      await waitFor(ticket);
    } else {
      const body = JSON.stringify({ source_target_name: 'local', source_resource_id: sourceId });
      await waitFor((await api<{ ticket_number: string }>(url, { method: 'POST', headers: { 'content-type': 'application/json', 'duplicate-file-action': 'update' }, body })).ticket_number);
    }
    const ferry = (performance.now() - start) / 1000;
    const endedAt = Date.now();
    if (args.timeline) console.log(`  made: ${await timeline(into, startedAt, endedAt)}`);
    await afterIdleCollection();
    const cpu = (await cpuSeconds()) - cpuBefore;
    if (threadsBefore) console.log(`  threads: ${threadDelta(threadsBefore, await threadSeconds())}`);
    let reference = '';
    if (!args['no-reference']) {
      const out = path.join(root, 'reference');
      await clear(out);
      if (args['sync-before']) await run('sync', []);
      const referenceStart = performance.now();
      const referenceStartedAt = Date.now();
      if (row === 'stored') await run('unzip', ['-q', '-o', storedZip, '-d', out]);
      else await run('rclone', ['copy', source, out, '--config', '/dev/null']);
      const seconds = (performance.now() - referenceStart) / 1000;
      if (args.timeline) console.log(`  reference made: ${await timeline(out, referenceStartedAt, Date.now())}`);
      reference = `, ${row === 'stored' ? 'unzip' : 'rclone copy'} ${seconds.toFixed(3)} s, ratio ${(ferry / seconds).toFixed(2)}`;
    }
    console.log(`${row} ${round}: ${ferry.toFixed(3)} s${answered ? ` (the upload answered at ${answered.toFixed(3)} s)` : ''} (server CPU ${cpu.toFixed(2)} s)${reference}; peak RSS so far ${(await peakMiB()).toFixed(0)} MiB; load ${os.loadavg()[0]!.toFixed(2)}`);
  }
}
if (smapsSampler) clearInterval(smapsSampler);
if (args.smaps) await writeFile(args.smaps, peakSmaps.text);
await dav?.stop();
if (args.output) await writeFile(args.output, server.output());
server.child.kill('SIGINT');
await server.exited;
if (args.leave) console.log(`left in place: ${root}`);
else await rm(root, { recursive: true, force: true });
