import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Entry } from '../target.js';
import { writeBagZip } from './bag-writer.js';
import { memoryReadResult } from './testing/folder-source.js';

// The writer must not hold a file in memory: 300 MB go through while the process grows by
// far less. (A sparse file stands in for compressible data, a generated stream for
// incompressible data, so nothing big is written to disk.)

const MiB = 1024 * 1024;
let work: string;
beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'ferry-bag-memory-'));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

function fileEntry(entryPath: string, open: () => Readable, size: number): Entry {
  return { path: entryPath, kind: 'file', size, mtime: null, hashes: {}, open: async () => open() };
}

it('streams 300 MB through the writer with RSS growth well under 100 MB', { timeout: 120_000 }, async () => {
  const sparse = path.join(work, 'sparse.bin');
  await writeFile(sparse, '');
  await truncate(sparse, 150 * MiB);
  const block = randomBytes(MiB);
  const randomStream = () => {
    let left = 150;
    return new Readable({
      read() {
        setImmediate(() => this.push(left-- > 0 ? block : null));
      },
    });
  };

  const baseline = process.memoryUsage().rss;
  let peak = baseline;
  let zipBytes = 0;
  const counter = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      zipBytes += chunk.length;
      peak = Math.max(peak, process.memoryUsage().rss);
      callback();
    },
  });
  const read = memoryReadResult('Big', [
    fileEntry('Big/zeros.bin', () => createReadStream(sparse, { highWaterMark: MiB }), 150 * MiB),
    fileEntry('Big/noise.bin', randomStream, 150 * MiB),
  ]);
  await pipeline(writeBagZip(read, { targetName: 't', resourceId: 'big', bagName: 'bag' }), counter);

  const growth = (peak - baseline) / MiB;
  console.log(`memory test: RSS growth ${growth.toFixed(1)} MiB, ZIP ${(zipBytes / MiB).toFixed(1)} MiB`);
  expect(growth).toBeLessThan(100);
  // the noise was stored (≈150 MiB), the zeros deflated to almost nothing
  expect(zipBytes).toBeGreaterThan(150 * MiB);
  expect(zipBytes).toBeLessThan(152 * MiB);
});
