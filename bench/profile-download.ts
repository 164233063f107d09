// Ad-hoc: time (and with --cpu-prof, profile) bag downloads of a local folder, in process:
// wall time and CPU time of the whole process (all threads) per round.
// node --import tsx bench/profile-download.ts <workspace> <folder> <out.zip> [rounds]
import { createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { performance } from 'node:perf_hooks';
import { LocalTarget, encodeLocalId } from '../electron/core/targets/local/index.js';
import { writeBagZip, bagNameFor } from '../electron/core/bag/bag-writer.js';

const [root, folder, out, rounds = '1'] = process.argv.slice(2) as [string, string, string, string?];
const target = new LocalTarget({ root });
const ctx = { token: '', signal: new AbortController().signal };
for (let round = 0; round < Number(rounds); round++) {
  const start = performance.now();
  const cpu = process.cpuUsage();
  const read = await target.read(ctx, encodeLocalId(folder));
  await pipeline(writeBagZip(read, { targetName: 'local', resourceId: 'x', bagName: bagNameFor('local', 'x') }), createWriteStream(out));
  const used = process.cpuUsage(cpu);
  console.log(`${((performance.now() - start) / 1000).toFixed(3)} s wall, ${((used.user + used.system) / 1e6).toFixed(3)} s CPU (${(used.user / 1e6).toFixed(3)} user)`);
}

// CPU time per thread (Linux): which thread is the bottleneck
if (process.env.THREADS) {
  const { readdirSync, readFileSync } = await import('node:fs');
  for (const tid of readdirSync('/proc/self/task')) {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    if (ticks > 5) console.log(`${tid} ${comm}: ${(ticks / 100).toFixed(2)} s`);
  }
}
