import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { CancelledError } from '../errors.js';
import { HashingPassThrough } from '../hashing.js';
import type { Entry } from '../target.js';

/**
 * An entry's bytes copied once to a private temp file while hashed, for remotes that need
 * the size or MD5 before the upload starts (Zenodo's Content-Length, figshare's initiate
 * call, comparing bytes for `update`) when the source did not report them. Used only when
 * needed; `dispose()` always removes the copy.
 */
export interface SpooledFile {
  size: number;
  md5: string;
  open(): Readable;
  dispose(): Promise<void>;
}

export async function spoolEntry(entry: Entry, signal?: AbortSignal): Promise<SpooledFile> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-spool-'));
  const file = path.join(dir, 'bytes');
  const hashing = new HashingPassThrough(['md5']);
  try {
    await pipeline(await entry.open(), hashing, createWriteStream(file, { mode: 0o600 }), { signal });
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    // the pipeline's own AbortError says nothing; a cancelled job is a CancelledError everywhere
    if (signal?.aborted) throw new CancelledError();
    throw error;
  }
  return {
    size: hashing.bytes,
    md5: hashing.digests?.md5 ?? '',
    open: () => createReadStream(file, { highWaterMark: 1024 * 1024 }),
    dispose: () => rm(dir, { recursive: true, force: true }),
  };
}

/** Size and MD5 as the source reported them, or from a spooled copy (then dispose it). */
export async function sizeAndMd5(entry: Entry, signal?: AbortSignal): Promise<{ size: number; md5: string; open(): Promise<Readable>; dispose(): Promise<void> }> {
  if (entry.size !== null && entry.hashes.md5) {
    return { size: entry.size, md5: entry.hashes.md5.toLowerCase(), open: () => entry.open(), dispose: async () => undefined };
  }
  const spooled = await spoolEntry(entry, signal);
  return { size: spooled.size, md5: spooled.md5, open: async () => spooled.open(), dispose: spooled.dispose };
}
