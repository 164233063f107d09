// A job host for the crash test: starts a job service in `dir`, submits one upload whose
// executor reports progress and then hangs, prints the ticket, and waits to be killed.
import { createJobService } from '../service.js';
import { emptyReport } from '../types.js';

const dir = process.argv[2];
if (!dir) throw new Error('usage: crashing-host <dir>');
const jobs = createJobService({ dir, concurrency: 1, retentionMs: 3_600_000, accessKey: 'c'.repeat(64), progressIntervalMs: 0 });
jobs.register('upload', async (ctx) => {
  ctx.progress({ files_done: 3, files_total: 10 });
  await new Promise(() => undefined); // hangs until the process is killed
  return emptyReport();
});
await jobs.start();
const job = await jobs.submit({ kind: 'upload', target: 'memory', resource_id: null, params: { n: 7 }, tokens: { destination: 'crash-token' } });
const deadline = Date.now() + 10_000;
while (jobs.get(job.ticket_number)?.progress.files_done !== 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
await new Promise((r) => setTimeout(r, 100)); // let the running state reach the disk
process.stdout.write(`${job.ticket_number}\n`);
setInterval(() => undefined, 1000);
