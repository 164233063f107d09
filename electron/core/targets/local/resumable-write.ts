// A large file written into the workspace by a job that can resume goes on, in a later run,
// from what is already safely on disk instead of from byte 0 (docs/architecture.md "Resume").
//
// Its temporary has a name fixed by the job and the destination (keptPartialName), so the
// next run finds it. Every MARK_EVERY_MS, and when the job stops to run again (a pause,
// Ferry stopping: isShutdownAbort), the bytes written so far are fdatasync'd and only then
// recorded in the job's journal with their CRC-32 (WriteOptions.partials): a length that was
// not on disk is never trusted, and a crash loses at most the bytes since the last mark. A
// cancel or a failure removes the partial, as any temporary.
//
// A later run trusts the partial only when the journal recorded it for the same source bytes
// (JournaledEntries), the source can start a read mid-file (Entry.openFrom), and the file at
// that name is a regular file of ours (O_NOFOLLOW, one link, our uid) at least as long as the
// record: it is cut to the recorded length and the source read from there. The kept bytes are
// read back through the job's watchers (jobs/open-from.ts), so the whole-file checks cover
// them; if their CRC-32 is not the recorded one (changed on disk since), the partial is
// removed and the file written again from byte 0.

import { constants } from 'node:fs';
import { open, unlink, type FileHandle } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { crc32 } from '../../crc32.js';
import { CancelledError } from '../../errors.js';
import { HashingPassThrough } from '../../hashing.js';
import { isShutdownAbort } from '../../jobs/service.js';
import { giveBack } from '../../read-buffers.js';
import { writeAllAt } from './file-sink.js';
import type { Entry, KeptPartial, PartialFiles } from '../../target.js';

/** Files at least this large are written resumably, when the job keeps partials: re-sending less is not worth a mark. */
export const RESUMABLE_FILE_BYTES = 64 * 1024 * 1024;
/**
 * time between two durable marks while a file is written: at most this much of the transfer is
 * lost to a crash. A mark is an fdatasync, which waits for the disk: one per 64 MiB made a 1 GiB
 * local copy wait for its disk where `cp` waits for the page cache (docs/performance.md), while a
 * file written within this time pays none.
 */
const MARK_EVERY_MS = 5_000;
/** bytes read back at once from a kept partial */
const READ_BACK_BYTES = 1024 * 1024;

const NOFOLLOW = constants.O_NOFOLLOW ?? 0;

/** True when `entry` is written resumably by a write with these partials. */
export function isResumable(entry: Entry, partials: PartialFiles | undefined): partials is PartialFiles {
  // a source that cannot start a read mid-file (a remote's download, a ZIP entry) would send the whole file again anyway
  return partials !== undefined && entry.openFrom !== undefined && entry.size !== null && entry.size >= RESUMABLE_FILE_BYTES;
}

export interface ResumableFile {
  entry: Entry;
  /** the partial's absolute path (keptPartialName, in the destination's folder; walk.ts hides it) */
  partial: string;
  partials: PartialFiles;
  algorithms: readonly string[];
  signal: AbortSignal;
  /** fsync before returning (a replacement, renamed over data) */
  sync: boolean;
}

/** The kept bytes differ from those recorded: the partial was changed since. */
class PartialChanged extends Error {}

/**
 * Writes the entry's bytes into `file.partial` (on from a kept partial where one can be
 * trusted) and returns the digests of the whole file and its length. On a pause or a stop of
 * Ferry the partial stays, its durable length recorded; on anything else it is removed.
 */
export async function writeResumable(file: ResumableFile): Promise<{ digests: Record<string, string> | null; bytes: number }> {
  const { entry, partials } = file;
  const kept = partials.kept(entry.path);
  const handle = kept !== null && kept.bytes > 0 && kept.bytes <= entry.size! ? await reopenKept(file.partial, kept.bytes) : null;
  if (handle !== null) {
    try {
      return await writeFrom(file, handle, kept);
    } catch (error) {
      if (!(error instanceof PartialChanged)) throw error;
      // the partial was removed: this file is written again from byte 0
    }
  }
  // a partial no record vouches for (a crash before its first mark, or a record for other source bytes) is this job's: it goes
  await unlink(file.partial).catch(() => undefined);
  return writeFrom(file, await open(file.partial, constants.O_RDWR | constants.O_CREAT | constants.O_EXCL | NOFOLLOW, 0o644), null);
}

/** The partial, opened for writing and cut to `bytes`, when it is a file only this write can have made; else null. */
async function reopenKept(partial: string, bytes: number): Promise<FileHandle | null> {
  let handle: FileHandle;
  try {
    handle = await open(partial, constants.O_RDWR | NOFOLLOW);
  } catch {
    return null;
  }
  try {
    const stat = await handle.stat();
    const ours = stat.isFile() && stat.nlink === 1 && (process.getuid === undefined || stat.uid === process.getuid()) && stat.size >= bytes;
    if (ours) {
      await handle.truncate(bytes);
      return handle;
    }
  } catch {
    // unreadable: not trusted
  }
  await handle.close().catch(() => undefined);
  return null;
}

async function writeFrom(file: ResumableFile, handle: FileHandle, kept: KeptPartial | null): Promise<{ digests: Record<string, string> | null; bytes: number }> {
  const { entry, signal } = file;
  const offset = kept?.bytes ?? 0;
  /** bytes in the partial, those recorded durable, and the CRC-32 of the first `written` */
  const state = { written: offset, durable: offset, crc: kept?.crc32 ?? 0, pending: null as Promise<unknown> | null, markedAt: performance.now() };
  let source: Readable;
  try {
    source = kept !== null ? await entry.openFrom!(offset, readBack(handle, kept)) : await entry.open();
  } catch (error) {
    throw await abandon(file, handle, state, error);
  }
  // A stream that is already hashing (the job's fixity check) computes the digests asked for
  // too, when asked before its first byte: the bytes are hashed once (see writer.ts).
  const upstream = source instanceof HashingPassThrough && source.addAlgorithms(file.algorithms) ? source : null;
  const hasher = upstream ?? new HashingPassThrough(file.algorithms);
  // the stream is the whole file: its first `offset` bytes are the partial's own, already there
  const sink = async (stream: AsyncIterable<Buffer>) => {
    let at = 0;
    for await (const chunk of stream) {
      const skip = Math.min(chunk.length, Math.max(0, offset - at));
      at += chunk.length;
      const piece = chunk.subarray(skip);
      if (piece.length === 0) continue;
      const write = writeAllAt(handle, piece, state.written);
      state.pending = write;
      await write;
      state.written += piece.length;
      state.crc = crc32(piece, state.crc);
      // the last holder of these bytes (read-buffers.ts)
      giveBack(chunk);
      if (performance.now() - state.markedAt >= MARK_EVERY_MS && !signal.aborted) await mark(file, handle, state);
    }
  };
  try {
    if (upstream) await pipeline(source, sink, { signal });
    else await pipeline(source, hasher, sink, { signal });
    if (file.sync) await handle.sync();
    await handle.close();
  } catch (error) {
    throw await abandon(file, handle, state, error);
  }
  return { digests: hasher.digests, bytes: hasher.bytes };
}

/** The partial's first `kept.bytes`, read back; ends in PartialChanged when their CRC-32 is not the recorded one. */
function readBack(handle: FileHandle, kept: KeptPartial): Readable {
  async function* bytes(): AsyncGenerator<Buffer> {
    let crc = 0;
    for (let at = 0; at < kept.bytes; ) {
      const buffer = Buffer.allocUnsafe(Math.min(READ_BACK_BYTES, kept.bytes - at));
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, at);
      if (bytesRead === 0) throw new PartialChanged();
      const chunk = buffer.subarray(0, bytesRead);
      crc = crc32(chunk, crc);
      at += bytesRead;
      // the last kept chunk passes only once the whole prefix matched
      if (at === kept.bytes && crc !== kept.crc32) throw new PartialChanged();
      yield chunk;
    }
  }
  return Readable.from(bytes(), { objectMode: false });
}

/** What is written so far is on disk, then recorded. */
async function mark(file: ResumableFile, handle: FileHandle, state: { written: number; durable: number; crc: number; markedAt: number }): Promise<void> {
  const { written, crc } = state;
  await handle.datasync();
  file.partials.keep(file.entry.path, { bytes: written, crc32: crc, file: file.partial });
  state.durable = written;
  state.markedAt = performance.now();
}

/**
 * The write stopped. A job that runs again later (paused, Ferry stopping) keeps the partial,
 * made durable and recorded; anything else removes it. A changed partial is removed too.
 */
async function abandon(file: ResumableFile, handle: FileHandle, state: { written: number; durable: number; crc: number; markedAt: number; pending: Promise<unknown> | null }, error: unknown): Promise<unknown> {
  await state.pending?.catch(() => undefined);
  const changed = error instanceof PartialChanged || (error as { cause?: unknown } | null)?.cause instanceof PartialChanged;
  if (!changed && isShutdownAbort(file.signal) && state.written > 0) {
    try {
      if (state.written > state.durable) await mark(file, handle, state);
      await handle.close();
      return new CancelledError();
    } catch {
      // it cannot be kept durable: it goes
    }
  }
  await handle.close().catch(() => undefined);
  await unlink(file.partial).catch(() => undefined);
  if (changed) return new PartialChanged();
  return file.signal.aborted ? new CancelledError() : error;
}
