import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { crc32 } from 'node:zlib';
import type yauzl from 'yauzl';
import { FerryError } from '../errors.js';

// yauzl checks an entry's size while it streams (validateEntrySizes) but not its CRC-32.
// A plain ZIP has no other fixity, so the CRC is checked here, in the same pass.

/** Thrown (as a stream error) when an entry's bytes are not what its header says. */
export function damagedEntry(path: string, why: string): FerryError {
  return new FerryError(400, 'not_a_zip', `The ZIP entry "${path}" is damaged (${why}); the ZIP may be truncated or corrupt.`);
}

class Crc32Check extends Transform {
  private crc = 0;

  constructor(
    private readonly expected: number,
    private readonly path: string,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.crc = crc32(chunk, this.crc);
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    callback(this.crc >>> 0 === this.expected >>> 0 ? null : damagedEntry(this.path, 'its CRC-32 does not match'));
  }
}

/**
 * A fresh stream of one entry's uncompressed bytes, size- and CRC-checked; any failure
 * surfaces as a `not_a_zip` FerryError naming `path` (a path inside the ZIP).
 */
export async function openZipEntry(zip: yauzl.ZipFile, entry: yauzl.Entry, path: string): Promise<Readable> {
  let raw: Readable;
  try {
    raw = await zip.openReadStreamPromise(entry);
  } catch (error) {
    throw damagedEntry(path, describeZipError(error));
  }
  const checked = new Crc32Check(entry.crc32, path);
  raw.on('error', (error) => checked.destroy(error instanceof FerryError ? error : damagedEntry(path, describeZipError(error))));
  checked.on('close', () => {
    if (!checked.writableFinished) raw.destroy();
  });
  return raw.pipe(checked);
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
