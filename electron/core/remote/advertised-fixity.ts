import { createHash, type Hash } from 'node:crypto';
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { FerryError } from '../errors.js';

const CHECKABLE = ['md5', 'sha1', 'sha256', 'sha512'];

/**
 * A download checked against the hashes the service advertises for it, in flight: when the
 * bytes end and do not match (or their count differs from the advertised size), the stream
 * fails with a sentence naming the file instead of ending. A writer therefore never
 * finishes a file with bad bytes: the local writer drops its temp file, a remote writer
 * aborts the upload. (The forges do the same with git blob ids: forge/git-hash.ts.)
 *
 * The job runner's own check (jobs/entry-stream.ts) still records what passed; this one
 * makes the mismatch stop the file before it is committed anywhere.
 */
export function verifyAdvertised(
  source: Readable,
  advertised: { hashes: Record<string, string>; size: number | null },
  describe: { service: string; path: string },
): Readable {
  const expected = Object.entries(advertised.hashes)
    .map(([algorithm, value]) => [algorithm.toLowerCase(), value.toLowerCase()] as const)
    .filter(([algorithm, value]) => CHECKABLE.includes(algorithm) && /^[0-9a-f]+$/.test(value));
  if (expected.length === 0 && advertised.size === null) return source;
  const verifier = new AdvertisedFixity(expected, advertised.size, describe);
  source.on('error', (error) => verifier.destroy(error));
  verifier.on('close', () => {
    if (!source.destroyed && !source.readableEnded) source.destroy();
  });
  return source.pipe(verifier);
}

class AdvertisedFixity extends Transform {
  private readonly hashes: [string, string, Hash][];
  private bytes = 0;

  constructor(
    expected: (readonly [string, string])[],
    private readonly size: number | null,
    private readonly describe: { service: string; path: string },
  ) {
    super();
    this.hashes = expected.map(([algorithm, value]) => [algorithm, value, createHash(algorithm)]);
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    for (const [, , hash] of this.hashes) hash.update(chunk);
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    const { service, path } = this.describe;
    if (this.size !== null && this.bytes !== this.size) {
      callback(fixityError(`Fixity check failed for '${path}': ${service} sent ${this.bytes} bytes, but it records ${this.size}. The download was stopped; try again.`));
      return;
    }
    for (const [algorithm, value, hash] of this.hashes) {
      const actual = hash.digest('hex');
      if (actual !== value) {
        callback(fixityError(`Fixity check failed for '${path}': ${service} sent bytes whose ${algorithm} is ${actual}, but it records ${value} for the file. The download was stopped; try again.`));
        return;
      }
    }
    callback();
  }
}

const fixityError = (message: string) => new FerryError(502, 'upstream_error', message);
