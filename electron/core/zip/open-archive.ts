import { close, open as openFd, read as readFd } from 'node:fs';
import { stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import yauzl from 'yauzl';
import { checkEndRecords } from './central-directory.js';

// Opening a ZIP file, for uploads and the offline library alike: its end records checked
// (central-directory.ts) before yauzl follows them, and an archive with other data in front
// of it (a self-extractor's stub, padding) read where it actually is.

export interface OpenedArchive {
  zip: yauzl.ZipFile;
  /**
   * Bytes of other data before the archive. The archive's own offsets (central directory,
   * local headers) count from its start, so a read of archive offset `o` is at `base + o`
   * in the file. yauzl's reads are shifted already; a direct read must add it.
   */
  base: number;
  /** the archive's size: the file's, less `base` */
  size: number;
}

/** what yauzl reads its streams in, here as for its own file reader's streams */
const STREAM_CHUNK_BYTES = 1024 * 1024;

/** yauzl.open's options, the same for every archive Ferry reads (names are decoded by central-directory.ts). */
const OPTIONS: yauzl.Options = { lazyEntries: true, autoClose: false, decodeStrings: true, validateEntrySizes: true, strictFileNames: false };

/**
 * Opens `file` for reading its central directory (scanCentralDirectory) and entries. Throws a
 * plain Error with a short reason (yauzl's, or checkEndRecords') when it is not a readable ZIP.
 */
export async function openArchive(file: string): Promise<OpenedArchive> {
  const fileSize = (await stat(file)).size;
  const base = await checkEndRecords(file, fileSize);
  if (base === 0) {
    const zip = await yauzl.openPromise(file, OPTIONS);
    return { zip, base, size: fileSize };
  }
  const fd = await new Promise<number>((resolve, reject) => openFd(file, 'r', (error, opened) => (error ? reject(error) : resolve(opened))));
  try {
    const zip = await yauzl.fromRandomAccessReaderPromise(new ShiftedReader(fd, base), fileSize - base, OPTIONS);
    return { zip, base, size: fileSize - base };
  } catch (error) {
    close(fd, () => undefined);
    throw error;
  }
}

/** yauzl's reads of an archive that starts `base` bytes into the file at `fd`. */
class ShiftedReader extends yauzl.RandomAccessReader {
  constructor(
    private readonly fd: number,
    private readonly base: number,
  ) {
    super();
  }

  /** Positional reads of [start, end): not fs.createReadStream, whose destroy() closes the shared fd even with autoClose false. */
  override _readStreamForRange(start: number, end: number): Readable {
    const { fd, base } = this;
    let position = start;
    return new Readable({
      highWaterMark: STREAM_CHUNK_BYTES,
      read(size) {
        const length = Math.min(Math.max(size, STREAM_CHUNK_BYTES), end - position);
        if (length <= 0) {
          this.push(null);
          return;
        }
        const bytes = Buffer.allocUnsafe(length);
        readFd(fd, bytes, 0, length, base + position, (error, bytesRead) => {
          if (error) return this.destroy(error);
          if (bytesRead === 0) return this.destroy(new Error('unexpected EOF'));
          position += bytesRead;
          this.push(bytesRead < length ? bytes.subarray(0, bytesRead) : bytes);
        });
      },
    });
  }

  override read(buffer: Buffer, offset: number, length: number, position: number, callback: (error: Error | null) => void): void {
    let done = 0;
    const more = (): void => {
      if (done === length) return callback(null);
      readFd(this.fd, buffer, offset + done, length - done, this.base + position + done, (error, bytesRead) => {
        if (error) return callback(error);
        if (bytesRead === 0) return callback(new Error('unexpected EOF'));
        done += bytesRead;
        more();
      });
    };
    more();
  }

  override close(callback: (error: Error | null) => void): void {
    close(this.fd, (error) => callback(error ?? null));
  }
}
