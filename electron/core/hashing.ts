import { createHash, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { Transform, type TransformCallback, type Readable } from 'node:stream';

/** Algorithms Ferry computes; names as in the contract's `hashes` keys. */
export type HashAlgorithm = 'md5' | 'sha1' | 'sha256' | 'sha512';

/** Several digests of the same bytes, fed once. */
export class MultiHash {
  private readonly hashes: [string, Hash][];

  constructor(algorithms: readonly string[]) {
    this.hashes = algorithms.map((algorithm) => [algorithm, createHash(algorithm)]);
  }

  update(chunk: Buffer): void {
    for (const [, hash] of this.hashes) hash.update(chunk);
  }

  digest(): Record<string, string> {
    return Object.fromEntries(this.hashes.map(([algorithm, hash]) => [algorithm, hash.digest('hex')]));
  }
}

/**
 * A pass-through that hashes and counts the bytes going by. `digests` and `bytes` are
 * final once the stream has ended.
 */
export class HashingPassThrough extends Transform {
  private readonly multi: MultiHash;
  bytes = 0;
  digests: Record<string, string> | null = null;

  constructor(algorithms: readonly string[], private readonly onBytes?: (n: number) => void) {
    super();
    this.multi = new MultiHash(algorithms);
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.multi.update(chunk);
    this.bytes += chunk.length;
    this.onBytes?.(chunk.length);
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    this.digests = this.multi.digest();
    callback();
  }
}

export async function hashStream(stream: Readable, algorithms: readonly string[]): Promise<{ hashes: Record<string, string>; bytes: number }> {
  const multi = new MultiHash(algorithms);
  let bytes = 0;
  for await (const chunk of stream) {
    multi.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  return { hashes: multi.digest(), bytes };
}

/** One read of the file for all algorithms, with large buffers. */
export function hashFile(filePath: string, algorithms: readonly string[]): Promise<{ hashes: Record<string, string>; bytes: number }> {
  return hashStream(createReadStream(filePath, { highWaterMark: 1024 * 1024 }), algorithms);
}
