// The first bytes of one file, for a preview (docs/api.md "A file's bytes"): read through the
// Target interface like any other read, and stopped as soon as enough has arrived, so a
// preview of a 10 GB file costs what it shows.
import { badRequest } from './errors.js';
import type { Target, TargetContext } from './target.js';

export interface FileHead {
  /** at most the bytes asked for, from the file's start */
  bytes: Buffer;
  /** true when the file holds more than `bytes` */
  truncated: boolean;
}

/**
 * Reads at most `maxBytes` from the start of file `id`. A folder is a 400 (its bytes are a
 * download's business); a file that fails to read fails as the target's open() fails.
 */
export async function readFileHead(target: Target, ctx: TargetContext, id: string, maxBytes: number): Promise<FileHead> {
  const read = await target.read(ctx, id);
  if (read.root.kind !== 'item') {
    throw badRequest(`'${read.title}' is a folder; only a file's bytes can be read. Download a folder as a ZIP instead.`);
  }
  for await (const entry of read.entries) {
    if (entry.kind !== 'file') continue;
    // awaited here: leaving the loop ends the read, which may close what the stream reads from
    return await firstBytes(await entry.open(), maxBytes);
  }
  throw badRequest(`'${read.title}' has no bytes to read.`);
}

/** One byte beyond `maxBytes` is read, to tell a file of exactly that size from a longer one; the stream is then let go. */
async function firstBytes(stream: AsyncIterable<Buffer | Uint8Array> & { destroy(): void }, maxBytes: number): Promise<FileHead> {
  const chunks: Buffer[] = [];
  let length = 0;
  try {
    for await (const chunk of stream) {
      const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
      chunks.push(buffer);
      length += buffer.length;
      if (length > maxBytes) break;
    }
  } finally {
    stream.destroy();
  }
  const all = Buffer.concat(chunks, length);
  return { bytes: all.subarray(0, maxBytes), truncated: length > maxBytes };
}
