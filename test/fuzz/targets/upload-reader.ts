import { createHash } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DEFAULT_LIMITS } from '../../../electron/core/limits.js';
import type { Entry } from '../../../electron/core/target.js';
import { openUploadZip, type UploadArchive } from '../../../electron/core/bag/upload-reader.js';
import { READ_CONCURRENCY, forEachConcurrently } from './concurrently.js';
import { Finding, assertSafePath, expectFerryError } from './verdict.js';

// Fuzz target 1: an uploaded ZIP, as an `upload` job treats it (jobs/executors.ts): the
// spooled file opened with openUploadZip under the default limits (central directory,
// hostile names, bombs, and for a bag the full validation of bag-validator.ts), then every
// entry taken and every file's bytes read, a few at a time, as a writer does.

export type UploadVerdict = 'accepted' | 'refused' | 'refused-while-reading';

let serial = 0;

export async function checkUploadReader(bytes: Uint8Array, scratchDir: string): Promise<UploadVerdict> {
  const file = join(scratchDir, `upload-${process.pid}-${serial++}.zip`);
  await writeFile(file, bytes);
  try {
    let archive: UploadArchive;
    try {
      archive = await openUploadZip(file, DEFAULT_LIMITS);
    } catch (error) {
      expectFerryError(error, 'openUploadZip');
      return 'refused';
    }
    try {
      return await readEverything(archive);
    } finally {
      await archive.close();
    }
  } finally {
    await rm(file, { force: true });
  }
}

async function readEverything(archive: UploadArchive): Promise<UploadVerdict> {
  const seen = new Set<string>();
  const files: Entry[] = [];
  for await (const entry of archive.entries()) {
    assertSafePath(entry.path, 'the upload reader');
    if (seen.has(entry.path)) throw new Finding(`the upload reader handed out "${entry.path}" twice`);
    const parent = entry.path.includes('/') ? entry.path.slice(0, entry.path.lastIndexOf('/')) : null;
    if (parent !== null && !seen.has(parent)) throw new Finding(`the upload reader handed out "${entry.path}" before its folder`);
    seen.add(entry.path);
    if (entry.kind === 'file') files.push(entry);
  }
  if (files.length !== archive.fileCount) throw new Finding(`the upload reader counted ${archive.fileCount} files but handed out ${files.length}`);
  // a writer reads a few files at once (the local target does), so reads overlap here too
  let refused = false;
  let bytesTotal = 0;
  await forEachConcurrently(files, READ_CONCURRENCY, async (entry) => {
    const algorithms = Object.keys(entry.hashes);
    const hashes = algorithms.map((algorithm) => createHash(algorithm));
    let size = 0;
    try {
      for await (const chunk of await entry.open()) {
        size += (chunk as Buffer).length;
        for (const hash of hashes) hash.update(chunk as Buffer);
      }
    } catch (error) {
      // a damaged entry is found while its bytes pass (CRC, sizes, inflate): the job fails then
      expectFerryError(error, `reading "${entry.path}"`);
      refused = true;
      return;
    }
    if (size !== entry.size) throw new Finding(`"${entry.path}" gave ${size} bytes, but the reader announced ${entry.size}`);
    bytesTotal += size;
    // a bag was validated before it was handed out: its manifests' hashes are the bytes'
    algorithms.forEach((algorithm, i) => {
      const actual = hashes[i]!.digest('hex');
      if (actual !== entry.hashes[algorithm]) {
        throw new Finding(`"${entry.path}" has ${algorithm} ${actual}, but the accepted bag's manifest says ${entry.hashes[algorithm]}`);
      }
    });
  });
  if (refused) return 'refused-while-reading';
  if (bytesTotal !== archive.totalBytes) throw new Finding(`the upload reader announced ${archive.totalBytes} bytes but gave ${bytesTotal}`);
  return 'accepted';
}
