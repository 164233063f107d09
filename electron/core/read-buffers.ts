// A large local file is read into a few buffers used again and again, not into a fresh buffer
// per chunk (fast path 'reused-read-buffers', docs/performance.md).
//
// Why: a fresh chunk is fresh memory. Its pages are faulted in by the first read into it, and
// the chunk is slow to copy from (the hash workers' ring took ~0.6 GB/s of them in the server;
// `bench/probe-read-buffers.ts`: a read into a new buffer ~0.6 GB/s, into one used again
// ~18 GB/s), and the dead chunks wait for V8 to collect the objects that own them, tens of MiB
// at a time: the largest item of the server's memory at its peak.
//
// The invariant that makes it safe: a chunk is given back only by the last holder of its bytes,
// once it no longer needs them (the local writer when the chunk's write has finished:
// targets/local/file-sink.ts and resumable-write.ts; an upload's request once its socket has
// taken the chunk: remote/streamed-request.ts), and nothing between the reader and that holder
// keeps a lent chunk after passing it on (the one that held chunks, StreamHasher, copies a lent
// chunk it keeps; a consumer that splits a stream into parts copies: figshare's ExactReader).
// A consumer that never gives a chunk back loses nothing: the chunk is collected as any buffer
// is, and the next read borrows a fresh one.
import type { FileHandle } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { doneWithBytes } from './young-collection.js';

/** Each chunk of a large file read so. */
export const READ_BUFFER_BYTES = 1024 * 1024;
/** Free buffers kept between reads (a copy through the local writer has three out at once: read ahead, passing, being written). */
const KEPT_FREE = 8;

const free: ArrayBuffer[] = [];
/** the buffers out on loan: given back once, and only these */
const lent = new WeakSet<ArrayBuffer>();
/** counts for tests and probes: buffers made, and loans served by a buffer given back */
export const readBufferCounts = { made: 0, reused: 0 };

function borrow(): Buffer {
  let buffer = free.pop();
  if (buffer === undefined) {
    buffer = Buffer.allocUnsafeSlow(READ_BUFFER_BYTES).buffer as ArrayBuffer;
    readBufferCounts.made++;
  } else {
    readBufferCounts.reused++;
  }
  lent.add(buffer);
  return Buffer.from(buffer, 0, READ_BUFFER_BYTES);
}

/** True when `chunk`'s bytes are on loan: whoever keeps them past passing the chunk on copies them. */
export function isLent(chunk: Uint8Array): boolean {
  return lent.has(chunk.buffer as ArrayBuffer);
}

/**
 * The last holder of `chunk`'s bytes is done with them (see the invariant above): a lent buffer
 * goes back for the next read; any other chunk is garbage from now on, counted towards the next
 * young collection (young-collection.ts). A buffer given back twice is still lent to one read at
 * a time.
 */
export function giveBack(chunk: Uint8Array): void {
  const buffer = chunk.buffer as ArrayBuffer;
  if (!lent.delete(buffer)) {
    doneWithBytes(chunk.byteLength);
    return;
  }
  // a buffer moved to another thread meanwhile is empty (detached) here: never lent again
  if (free.length < KEPT_FREE && buffer.byteLength === READ_BUFFER_BYTES) free.push(buffer);
}

export interface LendingReadOptions {
  /** the first byte read (default 0) */
  start?: number;
  /** the byte after the last one read (default: the file's end) */
  end?: number;
  /** close the handle when the stream ends or is destroyed (default true); false for a handle others read too */
  close?: boolean;
}

/**
 * A file's bytes from `start` to `end` (or its end), in lent chunks of at most
 * READ_BUFFER_BYTES. The file ending before `end` is the consumer's to notice (a ZIP entry's
 * reader checks its size).
 */
export function lendingReadStream(handle: FileHandle, { start = 0, end = Number.POSITIVE_INFINITY, close = true }: LendingReadOptions = {}): Readable {
  let position = start;
  return new Readable({
    highWaterMark: READ_BUFFER_BYTES,
    read() {
      const wanted = Math.min(READ_BUFFER_BYTES, end - position);
      if (wanted <= 0) {
        this.push(null);
        return;
      }
      const chunk = borrow();
      handle.read(chunk, 0, wanted, position).then(
        ({ bytesRead }) => {
          if (bytesRead === 0) {
            giveBack(chunk);
            this.push(null);
            return;
          }
          position += bytesRead;
          this.push(bytesRead === READ_BUFFER_BYTES ? chunk : chunk.subarray(0, bytesRead));
        },
        (error: Error) => {
          giveBack(chunk);
          this.destroy(error);
        },
      );
    },
    destroy(error, callback) {
      if (!close) return callback(error);
      handle.close().then(
        () => callback(error),
        (closeError: Error) => callback(error ?? closeError),
      );
    },
  });
}
