import { Readable } from 'node:stream';
import { fastPathOn } from '../fast-paths.js';
import type { Entry, ReadWhole } from '../target.js';

// A small file handed from a reader to a writer as one buffer, with its digests, instead of
// a stream: an upload of thousands of small files otherwise pays per file for a chain of
// streams (read, inflate, CRC, hash, gather), an AbortSignal and a pipeline, and that work,
// not the bytes, set its pace. A reader offers it as the entry's optional `readWhole`
// (target.ts; a writer that does not know it still uses open()); the job runner's
// WatchedEntries passes it on with its fixity check and progress in the same call.

/** Files up to this size may be offered whole (a reader decides; the bytes are held in memory). */
export const WHOLE_FILE_MAX_BYTES = 1024 * 1024;

/** The entry's readWhole, unless fast path 'whole-small-files' is off. */
export function readWholeOf(entry: Entry): ReadWhole | null {
  if (!fastPathOn('whole-small-files')) return null;
  return entry.readWhole ?? null;
}

export function withReadWhole<T extends Entry>(entry: T, readWhole: ReadWhole): T {
  entry.readWhole = readWhole;
  return entry;
}

/** See Entry.opensIndependently. */
export function opensIndependently(entry: Entry): boolean {
  return entry.opensIndependently === true;
}

/**
 * The entry's bytes for a writer that sends a stream (a remote upload's request body): a small
 * file read whole and passed on as one chunk, so its checks and digests (the job's fixity
 * check, the provenance record) come from that read, hashed where it was read (a local file:
 * on a file worker thread), not from a chain of hashing streams made for each file on the main
 * thread; any other file, its own open(). A file that fails its check is refused here, before
 * a byte is sent (its stream would have failed at its end).
 */
export async function openWhole(entry: Entry): Promise<Readable> {
  const readWhole = readWholeOf(entry);
  if (!readWhole) return entry.open();
  const { bytes } = await readWhole([]);
  return Readable.from([bytes], { objectMode: false });
}
