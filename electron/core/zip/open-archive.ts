import { close, open as openFd, read as readFd } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import yauzl from 'yauzl';

// Opening a ZIP file, for uploads and the offline library alike: its end records checked
// before yauzl follows them, and an archive with other data in front of it (a
// self-extractor's stub, padding) read where it actually is.

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

const END_RECORD_BYTES = 22;
const END_RECORD_SIGNATURE = 0x06054b50;
const DIRECTORY_SIGNATURE = 0x02014b50;
const ZIP64_LOCATOR_BYTES = 20;
const ZIP64_LOCATOR_SIGNATURE = 0x07064b50;
const ZIP64_END_RECORD_BYTES = 56;
const ZIP64_END_RECORD_SIGNATURE = 0x06064b50;
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

/** A local file header, or the end record that is all an empty ZIP holds. */
const ZIP_STARTS = [0x04034b50, END_RECORD_SIGNATURE];

/**
 * Whether `file` is recognisably a ZIP, cheaply, before it is kept (an upload's spool): it
 * starts with a ZIP record, or, with other data in front (a self-extractor, padding), its
 * tail holds an end-of-central-directory record, where every reader looks for one. Whether
 * it is a readable ZIP is openArchive's to say.
 */
export async function looksLikeZip(file: string): Promise<boolean> {
  const handle = await open(file, 'r');
  try {
    const { size } = await handle.stat();
    const head = Buffer.alloc(4);
    if ((await handle.read(head, 0, 4, 0)).bytesRead === 4 && ZIP_STARTS.includes(head.readUInt32LE(0))) return true;
    const tailBytes = Math.min(size, END_RECORD_BYTES + 0xffff);
    if (tailBytes < END_RECORD_BYTES) return false;
    const tail = Buffer.alloc(tailBytes);
    await handle.read(tail, 0, tailBytes, size - tailBytes);
    for (let i = tailBytes - END_RECORD_BYTES; i >= 0; i--) if (tail.readUInt32LE(i) === END_RECORD_SIGNATURE) return true;
    return false;
  } finally {
    await handle.close();
  }
}

/**
 * The end records checked before yauzl follows them, and the bytes in front of the archive
 * found. Returns `base` (see OpenedArchive). Throws a plain Error with a short reason.
 *
 * yauzl reads the ZIP64 end record wherever the locator says, inside a read callback: an
 * offset past 2^53 made fs.read throw there, an uncaught exception (the service went down,
 * the job never ended). Found by the hostile corpus.
 *
 * Data in front: the end record says where the central directory starts counting from the
 * archive's first byte, but the directory ends where the end record (or the ZIP64 end
 * record) begins. When the two disagree by `base` bytes and a directory record is found
 * there and not at the stated offset, the archive starts `base` bytes into the file: as
 * Info-ZIP's unzip and Go's archive/zip read self-extractors whose offsets were never
 * adjusted (`zip -A` adjusts them; then base is 0).
 */
export async function checkEndRecords(file: string, fileSize: number): Promise<number> {
  const tailBytes = Math.min(fileSize, ZIP64_LOCATOR_BYTES + END_RECORD_BYTES + 0xffff);
  const tail = Buffer.alloc(tailBytes);
  const handle = await open(file, 'r');
  try {
    await handle.read(tail, 0, tailBytes, fileSize - tailBytes);
    // as yauzl: the last end-record signature from the end
    let at = -1;
    for (let i = tailBytes - END_RECORD_BYTES; i >= 0; i--) {
      if (tail.readUInt32LE(i) === END_RECORD_SIGNATURE) {
        at = i;
        break;
      }
    }
    if (at < 0) return 0; // yauzl says so itself
    const endOffset = fileSize - tailBytes + at;
    let directorySize = tail.readUInt32LE(at + 12);
    let directoryOffset = tail.readUInt32LE(at + 16);
    let directoryEnd = endOffset;
    if (at >= ZIP64_LOCATOR_BYTES && tail.readUInt32LE(at - ZIP64_LOCATOR_BYTES) === ZIP64_LOCATOR_SIGNATURE) {
      const statedOffset = tail.readBigUInt64LE(at - ZIP64_LOCATOR_BYTES + 8);
      if (statedOffset > BigInt(fileSize - ZIP64_END_RECORD_BYTES)) throw new Error('its ZIP64 end record is said to lie past the end of the file');
      let recordOffset = Number(statedOffset);
      const record = Buffer.alloc(ZIP64_END_RECORD_BYTES);
      await handle.read(record, 0, ZIP64_END_RECORD_BYTES, recordOffset);
      if (record.readUInt32LE(0) !== ZIP64_END_RECORD_SIGNATURE) {
        // In front of an archive whose offsets were never adjusted, the locator's offset is
        // short by the same bytes: the record is then found where writers put it, right
        // before the locator (as Info-ZIP looks for it). Read through the shifted view,
        // yauzl then finds it at the stated offset.
        const before = endOffset - ZIP64_LOCATOR_BYTES - ZIP64_END_RECORD_BYTES;
        if (before <= recordOffset || (await signatureAt(handle, before, fileSize)) !== ZIP64_END_RECORD_SIGNATURE) return 0; // yauzl says so itself
        await handle.read(record, 0, ZIP64_END_RECORD_BYTES, before);
        const base = before - recordOffset;
        if (record.readBigUInt64LE(48) + BigInt(base) > BigInt(fileSize) || record.readBigUInt64LE(40) > BigInt(fileSize)) return 0;
        if (record.readBigUInt64LE(32) > BigInt(Math.ceil(fileSize / 46))) throw new Error('it claims more entries than the file can hold');
        const shifted = Number(record.readBigUInt64LE(48)) + base;
        return (await signatureAt(handle, shifted, fileSize)) === DIRECTORY_SIGNATURE ? base : 0;
      }
      recordOffset = Number(statedOffset);
      if (record.readBigUInt64LE(48) > BigInt(fileSize)) throw new Error('its central directory is said to start past the end of the file');
      if (record.readBigUInt64LE(32) > BigInt(Math.ceil(fileSize / 46))) throw new Error('it claims more entries than the file can hold');
      // both under the file's size, checked above and just now
      if (record.readBigUInt64LE(40) > BigInt(fileSize)) return 0;
      directorySize = Number(record.readBigUInt64LE(40));
      directoryOffset = Number(record.readBigUInt64LE(48));
      directoryEnd = recordOffset;
    }
    const base = directoryEnd - directorySize - directoryOffset;
    if (base <= 0 || directorySize === 0) return 0;
    // the stated offset holds a directory record after all (a directory followed by other data): no shift
    if (await signatureAt(handle, directoryOffset, fileSize) === DIRECTORY_SIGNATURE) return 0;
    return (await signatureAt(handle, base + directoryOffset, fileSize)) === DIRECTORY_SIGNATURE ? base : 0;
  } finally {
    await handle.close();
  }
}

async function signatureAt(handle: Awaited<ReturnType<typeof open>>, offset: number, fileSize: number): Promise<number | null> {
  if (offset < 0 || offset + 4 > fileSize) return null;
  const bytes = Buffer.alloc(4);
  const { bytesRead } = await handle.read(bytes, 0, 4, offset);
  return bytesRead === 4 ? bytes.readUInt32LE(0) : null;
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
