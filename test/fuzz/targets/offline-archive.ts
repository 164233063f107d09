import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { DEFAULT_LIMITS } from '../../../electron/core/limits.js';
import { indexArchive } from '../../../electron/core/targets/offline/archive-index.js';
import { SharedZip } from '../../../electron/core/targets/offline/shared-zip.js';
import { READ_CONCURRENCY, forEachConcurrently } from './concurrently.js';
import { Finding, assertSafePath, checkSentence, describe, expectReadRefusal } from './verdict.js';

// Fuzz target 2: a ZIP dropped into the offline library. indexArchive reads its central
// directory (central-directory.ts) and, for a bag, its manifests and provenance; it never
// throws — a bad archive is listed with a `damage` sentence. An archive that is not damaged
// is browsed: every entry's bytes are opened through SharedZip, as the target's read() does.

export type OfflineVerdict = 'listed' | 'damaged' | 'entry-unreadable';

let serial = 0;

export async function checkOfflineArchive(bytes: Uint8Array, scratchDir: string): Promise<OfflineVerdict> {
  const file = join(scratchDir, `library-${process.pid}-${serial++}.zip`);
  await writeFile(file, bytes);
  try {
    let index;
    try {
      index = await indexArchive(file, DEFAULT_LIMITS);
    } catch (error) {
      throw new Finding(`indexArchive threw ${describe(error)}; it should list the archive as damaged`, { cause: error });
    }
    if (index.damage !== null) {
      checkSentence(index.damage, 'indexArchive');
      return 'damaged';
    }
    for (const [path, entry] of index.entries) {
      assertSafePath(path, 'the offline index');
      if (entry.path !== path) throw new Finding(`the offline index keeps "${entry.path}" under "${path}"`);
      const slash = path.lastIndexOf('/');
      const parent = slash < 0 ? '' : path.slice(0, slash);
      if (!index.children.get(parent)?.includes(path)) throw new Finding(`"${path}" is not among its folder's children in the offline index`);
    }
    return await readEntries(file, [...index.entries.values()].flatMap((entry) => (entry.record ? [{ path: entry.path, size: entry.size, record: entry.record }] : [])));
  } finally {
    await rm(file, { force: true });
  }
}

async function readEntries(file: string, records: { path: string; size: number; record: NonNullable<Parameters<SharedZip['open']>[0]> }[]): Promise<OfflineVerdict> {
  const zip = new SharedZip(file);
  let verdict: OfflineVerdict = 'listed';
  try {
    await forEachConcurrently(records, READ_CONCURRENCY, async ({ path, size, record }) => {
      let stream: Readable | undefined;
      let read = 0;
      try {
        stream = await zip.open(record, path);
        for await (const chunk of stream) read += (chunk as Buffer).length;
      } catch (error) {
        expectReadRefusal(error, `reading "${path}" from the library`);
        verdict = 'entry-unreadable';
        return;
      }
      if (read !== size) throw new Finding(`"${path}" gave ${read} bytes from the library, but the index says ${size}`);
    });
  } finally {
    zip.release();
  }
  return verdict;
}
