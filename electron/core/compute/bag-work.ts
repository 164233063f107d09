import crypto, { createHash, type Hash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import zlib, { type DeflateRaw } from 'node:zlib';
import { sampleDecision } from '../zip/compression-choice.js';
import { FLAG_UTF8, LOCAL_HEADER_BYTES, writeLocalHeader } from '../zip/zip-records.js';
import type { BagBatchResult, BagReply, BagRequest } from './messages.js';

// On a compute thread, for the bag pool (bag/bag-workers.ts): the CPU work of a bag
// download — md5, sha256, CRC-32 and deflate of every byte.
// - A batch of small files: each hashed, judged STORE or DEFLATE, compressed, and framed as
//   ZIP records ready to write (local header + data), with its digests and CRC.
// - A large file: its bytes come through a shared ring; this thread computes the role it was
//   given (some digests, maybe the CRC and deflate) and acknowledges each slot once consumed.

type Crc32 = (bytes: Uint8Array, previous?: number) => number;

/**
 * The fast CRC-32 (core/crc32.ts) once the bag pool has said where the main thread loaded it
 * from (op 'crc32'), else zlib's. A chunk here is never empty, where Node 20's zlib.crc32 of
 * some empty buffers would drop the running value.
 */
let crc32: Crc32 = zlib.crc32;
function useCrc32From(modulePath: string | null): void {
  try {
    // by its absolute path: a thread evaluated from a string resolves no package names
    if (modulePath) crc32 = (createRequire(modulePath)(modulePath) as { crc32: Crc32 }).crc32;
  } catch {
    crc32 = zlib.crc32;
  }
}

// A small file is judged on its first 4 KiB (the entropy test costs ~2 ns a byte, a
// quarter of deflating text, so a large sample would add a quarter to every text file);
// under 4 KiB it is simply deflated, and kept only if smaller: a trial would cost as much.
const SMALL_SAMPLE_BYTES = 4096;
const WHOLE_TRIAL_BYTES = 4096;
const trialDeflate = (bytes: Uint8Array, options: { level: number }) => zlib.deflateRawSync(bytes, { level: options.level });
// never follow a symlink; never wait on a FIFO that took a file's place
const OPEN_FLAGS = fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW || 0) | (fs.constants.O_NONBLOCK || 0);
// one call per digest of a small file (no Hash object) where Node has it
const digest: (algorithm: string, bytes: Uint8Array) => string =
  typeof (crypto as { hash?: unknown }).hash === 'function'
    ? (algorithm, bytes) => (crypto as unknown as { hash(a: string, b: Uint8Array, e: 'hex'): string }).hash(algorithm, bytes, 'hex')
    : (algorithm, bytes) => createHash(algorithm).update(bytes).digest('hex');

/** Node's zlib handle as zlib.deflateRawSync drives it (not public API: checked before use). */
interface DeflateHandle {
  writeSync(flush: number, input: Uint8Array, inOffset: number, inLength: number, out: Uint8Array, outOffset: number, outLength: number): void;
  reset(): void;
}
interface Engine {
  stream: DeflateRaw;
  handle: DeflateHandle;
  /** [avail_out, avail_in] after each writeSync */
  state: Uint32Array;
  error: Error | null;
}

// One deflate engine per level, reset per file: making one costs ~10-90 us (its ~300 KiB of
// state allocated and touched), as much as deflating a small file. Node's zlib has no public
// synchronous call on a kept engine, so its handle is driven as zlib.deflateRawSync drives
// it; where that handle is missing (another Node), deflateRawSync is used.
const engines = new Map<number, Engine | null>();
function engineFor(level: number): Engine | null {
  if (engines.has(level)) return engines.get(level)!;
  let engine: Engine | null = null;
  try {
    const stream = zlib.createDeflateRaw({ level });
    const inner = stream as unknown as { _handle?: Partial<DeflateHandle>; _writeState?: unknown };
    const handle = inner._handle;
    const state = inner._writeState;
    if (handle && typeof handle.writeSync === 'function' && typeof handle.reset === 'function' && state instanceof Uint32Array) {
      const made: Engine = { stream, handle: handle as DeflateHandle, state, error: null };
      stream.on('error', (error) => (made.error = error));
      engine = made;
    }
  } catch {
    engine = null;
  }
  engines.set(level, engine);
  return engine;
}

/** Deflates bytes into out at `at` when that makes them smaller: the deflated length, else -1. */
function deflateInto(bytes: Buffer, level: number, out: Buffer, at: number): number {
  if (bytes.length === 0) return -1;
  const engine = engineFor(level);
  if (engine && !engine.error) {
    engine.handle.reset();
    // room for exactly as many bytes as stored: running out means deflate does not pay
    engine.handle.writeSync(zlib.constants.Z_FINISH, bytes, 0, bytes.length, out, at, bytes.length);
    if (!engine.error) {
      const left = engine.state[0]!;
      return left === 0 ? -1 : bytes.length - left;
    }
  }
  const deflated = zlib.deflateRawSync(bytes, { level });
  if (deflated.length >= bytes.length) return -1;
  deflated.copy(out, at);
  return deflated.length;
}

const NO_BYTES = Buffer.alloc(0);
// The read buffer for files read here, reused from file to file (made at the first: the
// threads of the other pools never read one).
let scratch = NO_BYTES;
/** A whole regular file (it may have grown or shrunk since it was listed). */
function readWhole(path: string, expected: number): Buffer {
  const fd = fs.openSync(path, OPEN_FLAGS);
  try {
    if (!fs.fstatSync(fd).isFile()) throw Object.assign(new Error('no longer a regular file'), { code: 'ENOENT' });
    if (scratch.length < expected + 1) scratch = Buffer.allocUnsafeSlow(Math.max(expected + 1, 256 * 1024));
    let filled = 0;
    for (;;) {
      if (filled === scratch.length) {
        const bigger = Buffer.allocUnsafeSlow(scratch.length * 2);
        scratch.copy(bigger, 0, 0, filled);
        scratch = bigger;
      }
      const want = scratch.length - filled;
      const n = fs.readSync(fd, scratch, filled, want, filled);
      filled += n;
      // a regular file reads short only at its end
      if (n < want) break;
    }
    return scratch.subarray(0, filled);
  } finally {
    fs.closeSync(fd);
  }
}

function batch(m: Extract<BagRequest, { op: 'batch' }>, reply: (message: BagReply, transfer?: ArrayBuffer[]) => void): void {
  const data = m.data ? Buffer.from(m.data) : null;
  const results: BagBatchResult[] = [];
  let out = Buffer.allocUnsafeSlow(m.estimate);
  let at = 0;
  for (const f of m.files) {
    const name = Buffer.from(f.name, 'utf8');
    let bytes: Buffer;
    if (f.path === null) {
      bytes = data ? data.subarray(f.start, f.start + f.length) : NO_BYTES;
    } else {
      try {
        bytes = readWhole(f.path, f.length);
      } catch (error) {
        const e = error as NodeJS.ErrnoException;
        results.push({ error: { code: e.code ?? null, message: String(e.message) } } as BagBatchResult);
        break; // the download stops here: what follows is not needed
      }
    }
    const need = at + LOCAL_HEADER_BYTES + name.length + bytes.length;
    if (need > out.length) {
      const bigger = Buffer.allocUnsafeSlow(Math.max(need, out.length * 2));
      out.copy(bigger, 0, 0, at);
      out = bigger;
    }
    const body = at + LOCAL_HEADER_BYTES + name.length;
    let method = 0;
    let crc = 0;
    let hashes: Record<string, string> | null = null;
    let compressedSize = bytes.length;
    if (!f.folder) {
      hashes = {};
      for (const algorithm of f.algorithms) hashes[algorithm] = digest(algorithm, bytes);
      crc = crc32(bytes) >>> 0;
      // remembered digests stand only while the bytes' CRC-32 is the one remembered with them
      if (f.recheck && f.recheck.crc32 !== crc) for (const algorithm of f.recheck.algorithms) hashes[algorithm] = digest(algorithm, bytes);
      if (f.level > 0 && (!f.decide || bytes.length < WHOLE_TRIAL_BYTES || sampleDecision(bytes.subarray(0, SMALL_SAMPLE_BYTES), trialDeflate))) {
        const deflated = deflateInto(bytes, f.level, out, body);
        if (deflated >= 0) {
          method = 8;
          compressedSize = deflated;
        }
      }
    }
    if (method === 0) bytes.copy(out, body);
    writeLocalHeader(out, at, FLAG_UTF8, method, f.dosTime, f.dosDate, crc, compressedSize, bytes.length, name);
    const recordBytes = LOCAL_HEADER_BYTES + name.length + compressedSize;
    at += recordBytes;
    results.push({ hashes, crc, method, compressedSize, size: bytes.length, recordBytes, error: null });
  }
  // only what was written goes back (a smaller copy when deflate saved much)
  let written = out;
  if (at < out.length / 2) {
    written = Buffer.allocUnsafeSlow(at);
    out.copy(written, 0, 0, at);
  }
  const moved = written.buffer as ArrayBuffer;
  reply({ kind: 'bag', op: 'batch', id: m.id, data: moved, length: at, results }, [moved]);
}

interface LargeFile {
  names: readonly string[];
  hashes: Hash[];
  /** the running CRC-32, or null when this role computes none */
  crc: number | null;
  engine: DeflateRaw | null;
}
const streams = new Map<number, LargeFile>();
const rings = new Map<number, SharedArrayBuffer>();

export function answerBag(m: BagRequest, reply: (message: BagReply, transfer?: ArrayBuffer[]) => void): void {
  switch (m.op) {
    case 'crc32':
      useCrc32From(m.modulePath);
      return;
    case 'batch':
      batch(m, reply);
      return;
    case 'ring':
      // a view of shared memory the main thread writes large files' bytes into
      rings.set(m.ring, m.buffer);
      return;
    case 'chunk': {
      const s = streams.get(m.id);
      const ack = () => reply({ kind: 'bag', op: 'ack', id: m.id, ring: m.ring, slot: m.slot });
      if (!s) return ack();
      const bytes = Buffer.from(rings.get(m.ring)!, m.offset, m.length);
      for (const hash of s.hashes) hash.update(bytes);
      if (s.crc !== null) s.crc = crc32(bytes, s.crc) >>> 0;
      // the slot is free once deflate has consumed it (its callback), else at once
      if (s.engine) s.engine.write(bytes, ack);
      else ack();
      return;
    }
    case 'open': {
      const s: LargeFile = {
        names: m.algorithms,
        hashes: m.algorithms.map((algorithm) => createHash(algorithm)),
        crc: m.crc ? 0 : null,
        // the stream's buffer (a Transform option the zlib types leave out): 1 MiB, a slot's size
        engine: m.level > 0 ? zlib.createDeflateRaw({ level: m.level, highWaterMark: 1024 * 1024 } as zlib.ZlibOptions) : null,
      };
      s.engine?.on('data', (out: Buffer) => {
        const copy = new Uint8Array(out);
        reply({ kind: 'bag', op: 'data', id: m.id, data: copy.buffer }, [copy.buffer]);
      });
      streams.set(m.id, s);
      return;
    }
    case 'close': {
      const s = streams.get(m.id);
      streams.delete(m.id);
      if (!s) return reply({ kind: 'bag', op: 'closed', id: m.id, hashes: null, crc: null });
      const closed = () => {
        const hashes: Record<string, string> = {};
        s.names.forEach((name, i) => (hashes[name] = s.hashes[i]!.digest('hex')));
        reply({ kind: 'bag', op: 'closed', id: m.id, hashes, crc: s.crc });
      };
      // 'end' comes after the last 'data'
      if (s.engine) s.engine.on('end', closed).end();
      else closed();
      return;
    }
    case 'drop': {
      const s = streams.get(m.id);
      streams.delete(m.id);
      s?.engine?.destroy();
      return;
    }
  }
}
