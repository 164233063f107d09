import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { CancelledError } from '../errors.js';
import { HashingPassThrough } from '../hashing.js';
import type { Entry } from '../target.js';
import { readWholeOf } from '../jobs/whole-entry.js';

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

/**
 * Size and MD5 as the source reported them; else, for a small file its source offers whole
 * (fast path `whole-small-files`), from its bytes read once into memory; else from a spooled
 * copy (then dispose it). The whole file spares each small file a temp folder, a file written
 * and read back and its removal, all before the file's first request (issue #18: InvenioRDM
 * and figshare ask every file's MD5 before sending it).
 */
export async function sizeAndMd5(entry: Entry, signal?: AbortSignal): Promise<{ size: number; md5: string; open(): Promise<Readable>; dispose(): Promise<void> }> {
  if (entry.size !== null && entry.hashes.md5) {
    return { size: entry.size, md5: entry.hashes.md5.toLowerCase(), open: () => entry.open(), dispose: async () => undefined };
  }
  const readWhole = readWholeOf(entry);
  if (readWhole) {
    const { bytes, hashes } = await readWhole(['md5']);
    // a Readable of one Buffer, made afresh for each attempt of the request that sends it
    return { size: bytes.length, md5: hashes.md5!.toLowerCase(), open: async () => Readable.from([bytes]), dispose: async () => undefined };
  }
  const spooled = await spoolEntry(entry, signal);
  return { size: spooled.size, md5: spooled.md5, open: async () => spooled.open(), dispose: spooled.dispose };
}
