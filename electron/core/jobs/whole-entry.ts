import { fastPathOn } from '../fast-paths.js';
import type { Entry } from '../target.js';

// A small file handed from a reader to a writer as one buffer, with its digests, instead of
// a stream: an upload of thousands of small files otherwise pays per file for a chain of
// streams (read, inflate, CRC, hash, gather), an AbortSignal and a pipeline, and that work,
// not the bytes, set its pace. A reader offers it under READ_WHOLE (a symbol, so the Entry
// contract is unchanged and a writer that does not know it still uses open()); the job
// runner's WatchedEntries passes it on with its fixity check and progress in the same call.

export const READ_WHOLE = Symbol.for('ferry.readWhole');

/** A file's bytes (all of them, checked as its source checks them) and their digests. */
export interface WholeFile {
  bytes: Buffer;
  /** hex digests: at least the algorithms asked for (lower case names) */
  hashes: Record<string, string>;
}

/** Reads the whole file and hashes it with `algorithms` in the same pass; fails as open()'s stream would. */
export type ReadWhole = (algorithms: readonly string[]) => Promise<WholeFile>;

/** Files up to this size may be offered whole (a reader decides; the bytes are held in memory). */
export const WHOLE_FILE_MAX_BYTES = 1024 * 1024;

export type WholeReadableEntry = Entry & { [READ_WHOLE]?: ReadWhole };

export function readWholeOf(entry: Entry): ReadWhole | null {
  if (!fastPathOn('whole-small-files')) return null;
  return (entry as WholeReadableEntry)[READ_WHOLE] ?? null;
}

export function withReadWhole<T extends Entry>(entry: T, readWhole: ReadWhole): T {
  return Object.assign(entry, { [READ_WHOLE]: readWhole });
}

/**
 * Present (true) on an entry whose open() stream does not depend on the source's iteration:
 * later entries may be taken, opened and read while it is still being read (a ZIP read by
 * its central directory). A writer may then write a large file alongside the files after it.
 */
export const OPENS_INDEPENDENTLY = Symbol.for('ferry.opensIndependently');

export function opensIndependently(entry: Entry): boolean {
  return (entry as Entry & { [OPENS_INDEPENDENTLY]?: boolean })[OPENS_INDEPENDENTLY] === true;
}
