import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { HashingPassThrough } from '../../hashing.js';
import type { Entry } from '../../target.js';

/**
 * An entry's bytes with their size and digests, known before the upload starts: Dataverse's
 * direct upload asks for the size first and the checksum at the end, `update` compares the
 * installation's checksum, and a multipart upload re-reads any part by its byte range.
 * When the source already reported the size and every digest wanted and no range is needed,
 * its own stream is used; otherwise the bytes are copied once to a private temp file
 * (removed by `dispose`, always).
 */
export interface StagedBytes {
  size: number;
  /** lowercase hex by algorithm: always md5, and the installation's algorithm */
  hashes: Record<string, string>;
  /** the bytes from `start` to `end` inclusive (default: all) */
  open(range?: { start: number; end: number }): Promise<Readable>;
  dispose(): Promise<void>;
}

export async function stageEntry(entry: Entry, algorithms: string[], needsRanges: boolean, signal?: AbortSignal): Promise<StagedBytes> {
  const wanted = [...new Set(['md5', ...algorithms])];
  if (!needsRanges && entry.size !== null && wanted.every((algorithm) => entry.hashes[algorithm])) {
    const hashes = Object.fromEntries(wanted.map((algorithm) => [algorithm, (entry.hashes[algorithm] as string).toLowerCase()]));
    return { size: entry.size, hashes, open: () => entry.open(), dispose: async () => undefined };
  }
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-dataverse-'));
  const file = path.join(dir, 'bytes');
  const hashing = new HashingPassThrough(wanted);
  try {
    await pipeline(await entry.open(), hashing, createWriteStream(file, { mode: 0o600 }), { signal });
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    size: hashing.bytes,
    hashes: { ...(hashing.digests ?? {}) },
    open: async (range) => createReadStream(file, { highWaterMark: 1024 * 1024, ...(range ?? {}) }),
    dispose: () => rm(dir, { recursive: true, force: true }),
  };
}
