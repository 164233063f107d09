import { Transform, type Readable, type TransformCallback } from 'node:stream';
import type { FixityFailure } from '../../../shared/api.js';
import { crc32 } from '../crc32.js';
import { FerryError } from '../errors.js';
import { HashingPassThrough } from '../hashing.js';

// A source's bytes that fail their own check (a recorded hash, a ZIP entry's CRC-32) are
// never handed over whole. The check can only be made once the last byte is read, so the
// streams here hold back the last chunk until it passes, and end in a SourceCheckFailed
// error instead of their last bytes when it does not. A writer therefore never receives a
// complete damaged file: one that stages (a temporary, a PUT with a length) discards what
// it staged, as for any stream that breaks. The whole-file path (whole-entry.ts) throws the
// same error before handing the buffer over.

/** The bytes of `path` did not match the source's own record of them; the file must not be written. */
export class SourceCheckFailed extends FerryError {
  constructor(
    readonly path: string,
    readonly failures: FixityFailure[],
  ) {
    super(422, 'fixity_failed', describeMismatch(path, failures));
    this.name = 'SourceCheckFailed';
  }
}

/** `'a.txt' does not match its md5 checksum (expected …, got …), so Ferry did not write it.` */
export function describeMismatch(path: string, failures: readonly FixityFailure[]): string {
  const first = failures[0];
  if (!first) return `'${path}' failed its check, so Ferry did not write it.`;
  const what = first.algorithm === 'crc32' ? "its CRC-32 in the ZIP" : `its ${first.algorithm} checksum`;
  const more = failures.length > 1 ? ` and ${failures.length - 1} more check${failures.length > 2 ? 's' : ''}` : '';
  return `'${path}' does not match ${what} (expected ${first.expected}, got ${first.actual || 'nothing'})${more}; the source's copy is damaged, so Ferry did not write it.`;
}

/**
 * A HashingPassThrough (so a writer may still take its digests, see local/writer.ts) that
 * holds back each chunk until the next one arrives and, at the end, asks `check` about the
 * digests before passing the last one on.
 */
export class CheckedHashingStream extends HashingPassThrough {
  private held: Buffer | null = null;

  constructor(
    algorithms: readonly string[],
    onBytes: (n: number) => void,
    private readonly check: (digests: Record<string, string>) => SourceCheckFailed | null,
  ) {
    super(algorithms, onBytes);
  }

  override _transform(chunk: Buffer, encoding: BufferEncoding, callback: TransformCallback): void {
    super._transform(chunk, encoding, (error, passed?: Buffer) => {
      if (error) return callback(error);
      const previous = this.held;
      this.held = passed ?? null;
      callback(null, previous ?? undefined);
    });
  }

  override _flush(callback: TransformCallback): void {
    super._flush((error) => {
      if (error) return callback(error);
      const problem = this.check(this.digests ?? {});
      if (problem) return callback(problem);
      if (this.held) this.push(this.held);
      this.held = null;
      callback();
    });
  }
}

/**
 * The entry's bytes, ending in SourceCheckFailed (its last chunk withheld) when their CRC-32
 * is not `expectedCrc` (unsigned), as a ZIP entry's must be. yauzl checks sizes, not CRCs.
 */
export function withCrc32Check(source: Readable, expectedCrc: number, path: string): Readable {
  let crc = 0;
  let held: Buffer | null = null;
  const checked = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      crc = crc32(chunk, crc);
      const previous = held;
      held = chunk;
      callback(null, previous ?? undefined);
    },
    flush(callback) {
      const actual = (crc >>> 0).toString(16).padStart(8, '0');
      const expected = (expectedCrc >>> 0).toString(16).padStart(8, '0');
      if (actual !== expected) return callback(new SourceCheckFailed(path, [{ path, algorithm: 'crc32', expected, actual }]));
      if (held) this.push(held);
      held = null;
      callback();
    },
  });
  source.on('error', (error) => checked.destroy(error));
  checked.on('close', () => {
    if (!source.destroyed && !source.readableEnded) source.destroy();
  });
  return source.pipe(checked);
}
