// Ad-hoc: what a fresh buffer per chunk costs against one used again (fast path
// 'reused-read-buffers', docs/performance.md): a 16 MiB file read 1 MiB at a time, eight
// times, into a new buffer per read or into the same one, each chunk then copied into a
// SharedArrayBuffer as the hash workers' ring takes it; prints each one's speed.
// node --import tsx bench/probe-read-buffers.ts
import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

const CHUNK = 1024 * 1024;
const root = await mkdtemp(path.join(os.tmpdir(), 'ferry-read-buffers-'));
const file = path.join(root, 'large.bin');
await writeFile(file, randomBytes(16 * CHUNK));
const ring = new Uint8Array(new SharedArrayBuffer(4 * CHUNK));

function measure(fresh: boolean): string {
  const fd = openSync(file, 'r');
  const reused = Buffer.allocUnsafeSlow(CHUNK);
  let readNs = 0n;
  let copyNs = 0n;
  let bytes = 0;
  try {
    for (let round = 0; round < 8; round++) {
      for (let position = 0, slot = 0; ; slot = (slot + 1) % 4) {
        const chunk = fresh ? Buffer.allocUnsafeSlow(CHUNK) : reused;
        let start = process.hrtime.bigint();
        const read = readSync(fd, chunk, 0, CHUNK, position);
        readNs += process.hrtime.bigint() - start;
        if (read === 0) break;
        position += read;
        bytes += read;
        start = process.hrtime.bigint();
        ring.set(chunk.subarray(0, read), slot * CHUNK);
        copyNs += process.hrtime.bigint() - start;
      }
    }
  } finally {
    closeSync(fd);
  }
  const rate = (ns: bigint) => `${(bytes / 2 ** 20 / (Number(ns) / 1e9)).toFixed(0)} MiB/s`;
  return `read ${rate(readNs)}, copy into the ring ${rate(copyNs)}`;
}

for (let i = 0; i < 2; i++) {
  console.log(`a fresh buffer per chunk: ${measure(true)}`);
  console.log(`one buffer used again:    ${measure(false)}`);
}
await rm(root, { recursive: true, force: true });
