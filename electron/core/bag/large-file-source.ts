import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { fastPathOn } from '../fast-paths.js';
import type { DirectFile, ReadResult } from '../target.js';
import type { LargeFileJob } from './bag-workers.js';

/**
 * Asks the read's target to let Ferry open its files itself, by path (ReadResult.directFiles):
 * true if it will, and fast path 'direct-file-reads' is on. Its file entries then carry
 * `direct`: the bag workers read its small files, and a large file is read straight into the
 * workers' shared memory. Call before iterating.
 */
export function askDirectFiles(read: ReadResult): boolean {
  return fastPathOn('direct-file-reads') && read.directFiles?.() === true;
}

/** A chunk of a large file, already handed to its job's workers. */
export interface LargeChunk {
  bytes: Buffer;
  /** present when the bytes are on loan: frees their memory once the output has sent them */
  giveBack?: () => void;
}

/** A large file's bytes, read in order for one job. */
export interface LargeFileSource {
  /** up to `bytes` of the file's start, to choose STORE or DEFLATE (not consumed) */
  head(bytes: number): Promise<Buffer>;
  /** The next chunk, handed to `job`'s workers; with `lend`, it may be on loan (see LargeChunk). Null at the end. */
  next(job: LargeFileJob, lend: boolean): Promise<LargeChunk | null>;
  /** Stops reading (any time; again is harmless). */
  close(): void;
}

// never follow a symlink; never wait on a FIFO that took a file's place (as the bag workers open small files)
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/**
 * A local file read with positioned reads into the job's shared slots: its bytes are never
 * copied in this thread, and no buffer is made per chunk (2 GiB of chunks would be 2 GiB of
 * short-lived memory, each 64 MiB of it a full garbage collection).
 */
export async function openDirectSource(direct: DirectFile): Promise<LargeFileSource> {
  let handle: FileHandle;
  try {
    handle = await open(direct.absolutePath, OPEN_FLAGS);
  } catch (error) {
    throw direct.toError(error);
  }
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    handle.close().catch(() => undefined);
  };
  try {
    if (!(await handle.stat()).isFile()) throw direct.toError(Object.assign(new Error('no longer a regular file'), { code: 'ENOENT' }));
  } catch (error) {
    close();
    throw error;
  }
  let position = 0;
  /** As many bytes as fit, short only at the end of the file. */
  const readInto = async (into: Buffer, at: number): Promise<number> => {
    let filled = 0;
    while (filled < into.length) {
      let n: number;
      try {
        ({ bytesRead: n } = await handle.read(into, filled, into.length - filled, at + filled));
      } catch (error) {
        throw direct.toError(error);
      }
      if (n === 0) break;
      filled += n;
    }
    return filled;
  };
  return {
    async head(bytes) {
      const into = Buffer.allocUnsafe(bytes);
      return into.subarray(0, await readInto(into, 0));
    },
    async next(job, lend) {
      const chunk = await job.fill((into) => readInto(into, position), lend);
      if (chunk) position += chunk.bytes.length;
      return chunk;
    },
    close,
  };
}

/** A target's stream of a large file: each chunk is copied into the job's shared slots. */
export function streamSource(stream: Readable): LargeFileSource {
  // read straight through (no stream in between: a PassThrough's 16 KiB buffer would stop
  // the file's read-ahead at every chunk)
  const chunks = stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const early: Buffer[] = [];
  return {
    async head(bytes) {
      let have = 0;
      while (have < bytes) {
        const next = await chunks.next();
        if (next.done) break;
        early.push(next.value);
        have += next.value.length;
      }
      const head = early.length === 1 ? early[0]! : Buffer.concat(early);
      return head.subarray(0, bytes);
    },
    async next(job) {
      const next = early.length > 0 ? { done: false as const, value: early.shift()! } : await chunks.next();
      if (next.done) return null;
      await job.write(next.value);
      return { bytes: next.value };
    },
    close() {
      // a file left part-read (an error, a cancel) is closed now
      if (!stream.readableEnded) stream.destroy();
    },
  };
}
