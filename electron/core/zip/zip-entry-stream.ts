import type { FileHandle } from 'node:fs/promises';
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { inflateRawSync } from 'node:zlib';
import type yauzl from 'yauzl';
import { crc32 } from '../crc32.js';
import { FerryError } from '../errors.js';
import { MultiHash } from '../hashing.js';
import type { WholeFile } from '../target.js';

// yauzl checks an entry's size while it streams (validateEntrySizes) but not its CRC-32.
// A plain ZIP has no other fixity, so the CRC is checked here, in the same pass.

/** Thrown (as a stream error) when an entry's bytes are not what its header says. */
export function damagedEntry(path: string, why: string): FerryError {
  return new FerryError(400, 'not_a_zip', `The ZIP entry "${path}" is damaged (${why}); the ZIP may be truncated or corrupt.`);
}

class Crc32Check extends Transform {
  private crc = 0;

  constructor(
    /** null: bytes pass unchecked (see openZipEntry's checkCrc) */
    private readonly expected: number | null,
    private readonly path: string,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    if (this.expected !== null) this.crc = crc32(chunk, this.crc);
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    callback(this.expected === null || this.crc >>> 0 === this.expected >>> 0 ? null : damagedEntry(this.path, 'its CRC-32 does not match'));
  }
}

/**
 * A fresh stream of one entry's uncompressed bytes, size- and CRC-checked; any failure
 * surfaces as a `not_a_zip` FerryError naming `path` (a path inside the ZIP).
 * `checkCrc` false: the caller checks the same bytes with a stronger digest (a bag's
 * manifests), so the CRC-32 pass (~1 ns a byte on this thread) is not made.
 */
export async function openZipEntry(zip: yauzl.ZipFile, entry: yauzl.Entry, path: string, checkCrc = true): Promise<Readable> {
  let raw: Readable;
  try {
    raw = await zip.openReadStreamPromise(entry);
  } catch (error) {
    throw damagedEntry(path, describeZipError(error));
  }
  // without the CRC the transform still says yauzl's errors (a wrong size, a cut-off entry) as not_a_zip
  const checked = new Crc32Check(checkCrc ? entry.crc32 : null, path);
  raw.on('error', (error) => checked.destroy(error instanceof FerryError ? error : damagedEntry(path, describeZipError(error))));
  checked.on('close', () => {
    if (!checked.writableFinished) raw.destroy();
  });
  return raw.pipe(checked);
}

/** the fixed part of a local file header (APPNOTE 4.3.7) */
const LOCAL_HEADER_BYTES = 30;
const LOCAL_HEADER_SIGNATURE = 0x04034b50;
const WINDOW_BYTES = 4 * 1024 * 1024;

/**
 * An archive's bytes read through a window that moves forward: small entries read in (nearly)
 * archive order cost one read per few MiB, not one per entry. A window is never changed once
 * read, so a slice of it stays valid after the window moves on.
 */
export class ArchiveWindow {
  private start = 0;
  private bytes = Buffer.alloc(0);
  private loading: Promise<void> | null = null;

  constructor(
    private readonly handle: FileHandle,
    private readonly fileSize: number,
    /** bytes of other data before the archive (see OpenedArchive.base) */
    private readonly base = 0,
  ) {}

  /** `length` bytes at archive offset `at`; throws (a plain Error) when they lie past the end of the file. */
  async slice(at: number, length: number): Promise<Buffer> {
    const offset = at + this.base;
    if (at < 0 || length < 0 || offset + length > this.fileSize) throw new Error('unexpected EOF');
    for (;;) {
      const at = offset - this.start;
      if (at >= 0 && at + length <= this.bytes.length) return this.bytes.subarray(at, at + length);
      if (this.loading) {
        await this.loading;
        continue;
      }
      this.loading = this.load(offset, Math.max(length, WINDOW_BYTES)).finally(() => (this.loading = null));
    }
  }

  private async load(offset: number, length: number): Promise<void> {
    const wanted = Math.min(length, this.fileSize - offset);
    const bytes = Buffer.allocUnsafe(wanted);
    let filled = 0;
    while (filled < wanted) {
      const { bytesRead } = await this.handle.read(bytes, filled, wanted - filled, offset + filled);
      if (bytesRead === 0) throw new Error('unexpected EOF');
      filled += bytesRead;
    }
    this.start = offset;
    this.bytes = bytes;
  }
}

/** Entries up to this size (stored or packed) may be read whole (see readZipEntryWhole). */
export const WHOLE_ENTRY_MAX_BYTES = 1024 * 1024;

export function canReadWhole(entry: yauzl.Entry): boolean {
  // deflate may grow incompressible bytes a little (5 bytes per 64 KiB stored block)
  return entry.uncompressedSize <= WHOLE_ENTRY_MAX_BYTES && entry.compressedSize <= WHOLE_ENTRY_MAX_BYTES + 64 * 1024 && (entry.compressionMethod === 0 || entry.compressionMethod === 8);
}

/** A small entry's bytes as read, unpacked, before readZipEntryWhole checks them. */
export interface RawEntry {
  bytes: Buffer;
  /** their CRC-32 where the reader computed it, else null */
  crc32: number | null;
  /** digests the reader computed (hex, by algorithm); those asked and missing are computed after the checks */
  hashes: Record<string, string>;
  /** `bytes` start an ArrayBuffer nothing else holds (WholeFile.movable) */
  movable: boolean;
}

/**
 * Reads one small entry's bytes (local header, stored bytes, inflated when deflated), hashing
 * them with `algorithms` and computing their CRC-32 when `crc` where that is cheap for it.
 * Throws what reading or inflating threw; readZipEntryWhole says it as a damaged entry.
 */
export type RawEntryReader = (entry: yauzl.Entry, algorithms: readonly string[], crc: boolean) => Promise<RawEntry>;

/** Reads entries through the window, on this thread: no digest or CRC computed ahead, the bytes a slice of the window. */
export function windowEntryReader(window: ArchiveWindow): RawEntryReader {
  return async (entry) => {
    const header = await window.slice(entry.relativeOffsetOfLocalHeader, LOCAL_HEADER_BYTES);
    if (header.readUInt32LE(0) !== LOCAL_HEADER_SIGNATURE) throw new Error('invalid local file header signature');
    const dataStart = entry.relativeOffsetOfLocalHeader + LOCAL_HEADER_BYTES + header.readUInt16LE(26) + header.readUInt16LE(28);
    const stored = await window.slice(dataStart, entry.compressedSize);
    if (entry.compressionMethod !== 0) return { bytes: inflateRawSync(stored, { maxOutputLength: entry.uncompressedSize + 1 }), crc32: null, hashes: {}, movable: false };
    if (entry.compressedSize !== entry.uncompressedSize) throw new Error('its stored size and its size differ');
    return { bytes: stored, crc32: null, hashes: {}, movable: false };
  };
}

/**
 * A small entry's uncompressed bytes in one buffer, checked as openZipEntry's stream checks
 * them (local header, size, CRC-32), hashed with `algorithms`. No stream, no inflate object:
 * one read (`read`: through the window, or on a file worker thread), one inflate call.
 * Inflating never produces more than the entry's declared size plus one byte, so a lying
 * header cannot blow up memory. Failures are `not_a_zip` FerryErrors naming `path`.
 */
export async function readZipEntryWhole(read: RawEntryReader, entry: yauzl.Entry, path: string, algorithms: readonly string[], checkCrc = true): Promise<WholeFile> {
  let raw: RawEntry;
  try {
    raw = await read(entry, algorithms, checkCrc);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw damagedEntry(path, 'it unpacks to more bytes than its header says');
    throw damagedEntry(path, describeZipError(error));
  }
  const { bytes } = raw;
  if (bytes.length !== entry.uncompressedSize) throw damagedEntry(path, `it holds ${bytes.length} bytes, its header says ${entry.uncompressedSize}`);
  if (checkCrc && (raw.crc32 ?? crc32(bytes)) >>> 0 !== entry.crc32 >>> 0) throw damagedEntry(path, 'its CRC-32 does not match');
  const missing = algorithms.filter((algorithm) => raw.hashes[algorithm] === undefined);
  let hashes = raw.hashes;
  if (missing.length > 0) {
    const more = new MultiHash(missing);
    more.update(bytes);
    hashes = { ...hashes, ...more.digest() };
  }
  return raw.movable ? { bytes, hashes, movable: true } : { bytes, hashes };
}

/** yauzl's and zlib's own messages help; an OS error's message may hold a local path. */
export function describeZipError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as NodeJS.ErrnoException).code;
  if (code && /^E[A-Z]+$/.test(code)) return `read error ${code}`;
  // yauzl's two most common messages on a cut-off upload, said in a person's words
  if (/end of central directory record signature not found/i.test(error.message)) return 'it has no end-of-central-directory record: it is cut off or not a ZIP';
  if (/^unexpected EOF$/i.test(error.message)) return 'it ends before the data its directory points at: it is cut off or corrupt';
  return error.message.replace(/\.+$/, '');
}
