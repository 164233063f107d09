// Ad-hoc: a local → local transfer of one large random file (1 GiB by default) through the API,
// each round followed by `cp -r` of the same file, printing the job's time, the server's CPU
// seconds and the load (docs/performance.md, "Resume within a large local file").
// node --import tsx bench/probe-large-file.ts [--rounds N] [--mib N] [--env NAME=VALUE …]
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import type { Job, ResourceSummary } from '../shared/api.js';
import { startFerryProcess } from '../test/support/ferry-process.js';

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    mib: { type: 'string', default: '1024' },
    env: { type: 'string', multiple: true },
  },
});
const root = await mkdtemp(path.join(os.tmpdir(), 'ferry-large-'));
const workspace = path.join(root, 'workspace');
await mkdir(path.join(workspace, 'Big'), { recursive: true });
spawnSync('sh', ['-c', `head -c ${Number(args.mib) * 1024 * 1024} /dev/urandom > "${path.join(workspace, 'Big', 'big.bin')}"`]);
const env = Object.fromEntries((args.env ?? []).map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]));
const server = await startFerryProcess({ dataDir: path.join(root, 'data'), workspace, built: true, env });
const headers = { authorization: `Bearer ${server.accessKey}`, 'service-source-token': server.accessKey, 'service-destination-token': server.accessKey };
const api = async <T>(pathname: string, init: RequestInit = {}): Promise<T> => {
  const response = await fetch(new URL(pathname, server.url), { ...init, headers: { ...headers, ...(init.headers as Record<string, string>) } });
  if (!response.ok) throw new Error(`${pathname}: HTTP ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
};
const topLevelId = async (title: string) => (await api<ResourceSummary[]>('api_v1/targets/local/resources/?container=None')).find((resource) => resource.title === title)!.id;
const cpuSeconds = () => {
  const fields = readFileSync(`/proc/${server.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
};
const sourceId = await topLevelId('Big');
for (let round = 0; round < Number(args.rounds); round++) {
  await rm(path.join(workspace, 'Into'), { recursive: true, force: true });
  await mkdir(path.join(workspace, 'Into'));
  spawnSync('sync');
  const into = await topLevelId('Into');
  const cpuBefore = cpuSeconds();
  const start = performance.now();
  const { ticket_number: ticket } = await api<{ ticket_number: string }>(`api_v1/targets/local/resources/${encodeURIComponent(into)}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'duplicate-file-action': 'update' },
    body: JSON.stringify({ source_target_name: 'local', source_resource_id: sourceId }),
  });
  for (;;) {
    const job = await api<Job>(`api_v1/jobs/${ticket}/`);
    if (job.status === 'succeeded') break;
    if (job.status !== 'queued' && job.status !== 'running') throw new Error(`job ${job.status}: ${job.error ?? ''}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const ferry = (performance.now() - start) / 1000;
  const cpu = cpuSeconds() - cpuBefore;
  await rm(path.join(root, 'cp'), { recursive: true, force: true });
  spawnSync('sync');
  const cpStart = performance.now();
  spawnSync('cp', ['-r', path.join(workspace, 'Big'), path.join(root, 'cp')]);
  const cp = (performance.now() - cpStart) / 1000;
  console.log(`round ${round}: Ferry ${ferry.toFixed(2)} s (server CPU ${cpu.toFixed(2)} s), cp -r ${cp.toFixed(2)} s; load ${os.loadavg()[0]!.toFixed(2)}`);
}
server.child.kill('SIGINT');
await server.exited;
await rm(root, { recursive: true, force: true });
