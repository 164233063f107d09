// Ad-hoc, preloaded into the server by `bench/probe-transfer.ts --memory-log FILE`: writes the
// server's process.memoryUsage() every 5 ms (ms since start, RSS, V8's heap committed and used,
// memory outside the heap, of it ArrayBuffers; MiB) to FILE, so a peak can be told apart: the
// heap's garbage, or buffers outside it. Only the main thread of the process that serves logs:
// the relaunched child (the launcher of `ferry serve` and the worker threads are preloaded too),
// or the launcher itself with FERRY_MEMORY_SETTINGS=off.
import { openSync, writeSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';

const file = process.env.FERRY_MEMORY_LOG;
const serves = process.env.FERRY_LAUNCHED_BY !== undefined || process.env.FERRY_MEMORY_SETTINGS === 'off';
if (file && isMainThread && serves) {
  const out = openSync(file, 'w');
  const started = Date.now();
  const mib = (bytes) => (bytes / 1048576).toFixed(0);
  writeSync(out, 'ms rss heapTotal heapUsed external arrayBuffers\n');
  setInterval(() => {
    const used = process.memoryUsage();
    writeSync(out, `${Date.now() - started} ${mib(used.rss)} ${mib(used.heapTotal)} ${mib(used.heapUsed)} ${mib(used.external)} ${mib(used.arrayBuffers)}\n`);
  }, 5).unref();
}
