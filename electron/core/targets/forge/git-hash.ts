import { createHash, type Hash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { FerryError } from '../../errors.js';

/**
 * Git's blob id: sha1("blob <size>\0" + bytes). GitHub and GitLab report this for every file;
 * it is NOT the plain SHA-1 of the bytes, so Ferry names it `git-sha1`.
 */
export const GIT_SHA1 = 'git-sha1';

export function gitBlobSha(bytes: Buffer): string {
  return createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
}

/**
 * A pass-through that checks the bytes going by against a known git blob id. The size is part
 * of the hashed header, so it must be known up front (git trees record it). On a mismatch the
 * stream fails with a fixity error instead of ending, so no consumer mistakes bad bytes for good.
 */
export class GitBlobVerifier extends Transform {
  private readonly hash: Hash;
  private bytes = 0;

  constructor(
    private readonly expectedSha: string,
    private readonly expectedSize: number,
    private readonly describe: { service: string; path: string },
  ) {
    super();
    this.hash = createHash('sha1').update(`blob ${expectedSize}\0`);
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    this.hash.update(chunk);
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    const actual = this.hash.digest('hex');
    if (this.bytes !== this.expectedSize || actual !== this.expectedSha) {
      callback(
        new FerryError(
          502,
          'upstream_error',
          `Fixity check failed for "${this.describe.path}": ${this.describe.service} sent ${this.bytes} bytes with git blob id ${actual}, ` +
            `but the repository records ${this.expectedSize} bytes with id ${this.expectedSha}. The download was stopped; try again.`,
        ),
      );
      return;
    }
    callback();
  }
}
