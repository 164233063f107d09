import { createHash } from 'node:crypto';
import fs from 'node:fs';
import zlib from 'node:zlib';
import { readToEnd, wholeFileBuffer, withRoom } from '../whole-file-buffer.js';
import type { FileReply, FileRequest, ReadRequest, ReadZipEntryRequest, RenamesRequest, SyncRequest, WorkerError, WriteRequest } from './messages.js';

// On a compute thread, for the file-write pool (jobs/file-write-workers.ts): a small file's
// temporary written, or a small file or ZIP entry read and hashed, in ONE hop — every call
// synchronous here, one message each way. On the main thread every promise fs call costs
// ~35 µs of synchronous work on top of its trip through libuv's pool, and a small file took
// six of them.

const WRITE_FLAGS = fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | (fs.constants.O_NOFOLLOW || 0);
const READ_FLAGS = fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW || 0);

function described(error: unknown): WorkerError {
  const e = error as NodeJS.ErrnoException | null;
  return { code: e?.code, errno: e?.errno, syscall: e?.syscall, message: String(e?.message) };
}

/** `buffer`'s memory, which moves with the reply (a Buffer.allocUnsafeSlow owns all of it). */
const movable = (buffer: Buffer): ArrayBuffer => buffer.buffer as ArrayBuffer;

function write(m: WriteRequest): FileReply {
  let fd = -1;
  try {
    fd = fs.openSync(m.path, WRITE_FLAGS, 0o644);
    const bytes = new Uint8Array(m.bytes, 0, m.length);
    for (let done = 0; done < bytes.length; ) done += fs.writeSync(fd, bytes, done, bytes.length - done, done);
    if (m.mtime !== null) fs.futimesSync(fd, m.atime, m.mtime);
    if (m.sync) fs.fsyncSync(fd);
    const stat = fs.fstatSync(fd, { bigint: true });
    fs.closeSync(fd);
    fd = -1;
    // put in place in the same hop when asked; a failed rename leaves the written temporary to the caller
    let placeError: WorkerError | null = null;
    if (m.placeAt !== null) {
      try {
        fs.renameSync(m.path, m.placeAt);
      } catch (error) {
        placeError = described(error);
      }
    }
    return { id: m.id, size: stat.size, mtimeNs: stat.mtimeNs, ino: stat.ino, placeError };
  } catch (error) {
    // only a file this call made is removed (an EEXIST from open is someone else's)
    if (fd >= 0) {
      closeQuietly(fd);
      try {
        fs.unlinkSync(m.path);
      } catch {
        // already gone
      }
    }
    return { id: m.id, error: described(error) };
  }
}

function read(m: ReadRequest): FileReply {
  // as targets/local/local-target.ts readSmallFileHere reads on the main thread: the whole
  // file, at the start of an ArrayBuffer of its own (it moves to the asking thread); one read
  // of the expected size plus a byte to notice growth, more only if it grew
  let fd = -1;
  try {
    fd = fs.openSync(m.path, READ_FLAGS);
    let buffer = wholeFileBuffer(m.expectedSize);
    let filled = 0;
    for (;;) {
      buffer = withRoom(buffer, filled);
      const got = fs.readSync(fd, buffer, filled, buffer.length - filled, filled);
      filled += got;
      if (readToEnd(got, filled, buffer)) break;
    }
    fs.closeSync(fd);
    fd = -1;
    return { id: m.id, bytes: movable(buffer), length: filled, hashes: digests(buffer.subarray(0, filled), m.algorithms) };
  } catch (error) {
    if (fd >= 0) closeQuietly(fd);
    return { id: m.id, error: described(error) };
  }
}

function readFully(fd: number, buffer: Buffer, at: number): void {
  let filled = 0;
  while (filled < buffer.length) {
    const got = fs.readSync(fd, buffer, filled, buffer.length - filled, at + filled);
    if (got === 0) throw new Error('unexpected EOF');
    filled += got;
  }
}

function readZipEntry(m: ReadZipEntryRequest): FileReply {
  // as zip-entry-stream.ts windowEntryReader reads it (local header, then the stored bytes,
  // inflated when deflated), with the same messages; the caller checks size and CRC-32
  let fd = -1;
  try {
    fd = fs.openSync(m.path, READ_FLAGS);
    const size = fs.fstatSync(fd).size;
    const header = Buffer.alloc(30);
    if (m.headerAt + 30 > size) throw new Error('unexpected EOF');
    readFully(fd, header, m.headerAt);
    if (header.readUInt32LE(0) !== 0x04034b50) throw new Error('invalid local file header signature');
    const dataAt = m.headerAt + 30 + header.readUInt16LE(26) + header.readUInt16LE(28);
    if (dataAt + m.compressedSize > size) throw new Error('unexpected EOF');
    let bytes = Buffer.allocUnsafeSlow(m.compressedSize);
    readFully(fd, bytes, dataAt);
    fs.closeSync(fd);
    fd = -1;
    if (m.method === 0) {
      if (m.compressedSize !== m.uncompressedSize) throw new Error('its stored size and its size differ');
    } else {
      const inflated = zlib.inflateRawSync(bytes, { maxOutputLength: m.uncompressedSize + 1 });
      // the bytes go back at the start of an ArrayBuffer of their own (movable)
      if (inflated.byteOffset === 0 && inflated.buffer.byteLength === inflated.length) bytes = inflated;
      else {
        bytes = Buffer.allocUnsafeSlow(inflated.length);
        inflated.copy(bytes);
      }
    }
    return { id: m.id, bytes: movable(bytes), length: bytes.length, crc32: m.crc ? zlib.crc32(bytes) : null, hashes: digests(bytes, m.algorithms) };
  } catch (error) {
    if (fd >= 0) closeQuietly(fd);
    return { id: m.id, error: described(error) };
  }
}

function sync(m: SyncRequest): FileReply {
  // fsync of each path (files or folders); the first failure is reported, the rest still synced
  let error: WorkerError | null = null;
  for (const path of m.paths) {
    let fd = -1;
    try {
      fd = fs.openSync(path, READ_FLAGS);
      fs.fsyncSync(fd);
    } catch (e) {
      error ??= described(e);
    } finally {
      if (fd >= 0) closeQuietly(fd);
    }
  }
  return { id: m.id, error };
}

function renames(m: RenamesRequest): FileReply {
  // each pair on its own: one that fails does not stop the others
  const errors = m.pairs.map(([from, to]) => {
    try {
      fs.renameSync(from, to);
      return null;
    } catch (error) {
      return described(error);
    }
  });
  return { id: m.id, errors };
}

function digests(bytes: Buffer, algorithms: readonly string[]): Record<string, string> {
  const hashes: Record<string, string> = {};
  for (const algorithm of algorithms) hashes[algorithm] = createHash(algorithm).update(bytes).digest('hex');
  return hashes;
}

function closeQuietly(fd: number): void {
  try {
    fs.closeSync(fd);
  } catch {
    // the call's own error is the one reported
  }
}

function answer(m: FileRequest): FileReply {
  switch (m.op) {
    case 'write':
      return write(m);
    case 'read':
      return read(m);
    case 'readZipEntry':
      return readZipEntry(m);
    case 'sync':
      return sync(m);
    case 'renames':
      return renames(m);
  }
}

/**
 * The replies to a batch, and what moves back with them (transferred, not copied): the written
 * bytes too. This thread allocates almost nothing of its own, so it would collect its garbage
 * rarely, and the file buffers it was handed would pile up dead in its memory (tens of MiB)
 * until external-memory pressure forced a collection; the main thread's frequent young
 * collections free them at once. The bytes read go back the same way.
 */
export function answerFiles(batch: readonly FileRequest[]): { replies: FileReply[]; moved: ArrayBuffer[] } {
  const replies = batch.map(answer);
  const moved: ArrayBuffer[] = [];
  for (const m of batch) if (m.op === 'write') moved.push(m.bytes);
  for (const reply of replies) if (reply.bytes !== undefined) moved.push(reply.bytes);
  return { replies, moved };
}
