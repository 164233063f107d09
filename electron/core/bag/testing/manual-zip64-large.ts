// Manual check, too slow for CI (minutes, ~5 GB of temp disk): a bag holding one file
// over 4 GiB, STORED, so sizes and offsets both need ZIP64. Checks it with `unzip -t`
// and reads it back through openUploadZip (full bag validation = every byte hashed).
//   npx tsx electron/core/bag/testing/manual-zip64-large.ts [GiB, default 4.5]
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { DEFAULT_LIMITS } from '../../limits.js';
import { writeBagZip } from '../bag-writer.js';
import { openUploadZip } from '../upload-reader.js';
import { memoryReadResult } from './folder-source.js';
import { run } from '../../zip/testing/zip-inspect.js';

async function main(): Promise<void> {
  const size = Math.round(Number(process.argv[2] ?? 4.5) * 1024 ** 3);
  const work = await mkdtemp(path.join(tmpdir(), 'ferry-zip64-large-'));
  try {
    const sparse = path.join(work, 'big.bin');
    await writeFile(sparse, '');
    await truncate(sparse, size);
    const zipPath = path.join(work, 'big.zip');
    let started = Date.now();
    const read = memoryReadResult('Big', [
      { path: 'Big/big.bin', kind: 'file', size, mtime: null, hashes: {}, open: async () => createReadStream(sparse, { highWaterMark: 1024 * 1024 }) },
      { path: 'Big/after.txt', kind: 'file', size: 6, mtime: null, hashes: {}, open: async () => createReadStream(sparse, { start: 0, end: 5 }) },
    ]);
    await pipeline(writeBagZip(read, { targetName: 't', resourceId: 'big', bagName: 'bag', compressionLevel: 0 }), createWriteStream(zipPath));
    console.log(`written in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    started = Date.now();
    const { stdout } = await run('unzip', ['-t', zipPath]);
    console.log(stdout.trim().split('\n').at(-1), `(${((Date.now() - started) / 1000).toFixed(1)} s)`);
    started = Date.now();
    const archive = await openUploadZip(zipPath, DEFAULT_LIMITS);
    console.log(`openUploadZip: kind ${archive.kind}, ${archive.fileCount} files, ${archive.totalBytes} bytes, validated in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    if (archive.totalBytes !== size + 6) throw new Error('size mismatch');
    await archive.close();
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

await main();
