import type { Readable } from 'node:stream';
import type yauzl from 'yauzl';
import { openZipEntry } from '../../zip/zip-entry-stream.js';
import { openZip } from './archive-index.js';

/**
 * One open archive behind the entries of a read(). A writer may open an entry's bytes after
 * it took the last entry (files are written a few at a time), so the handle cannot close
 * when the listing ends: it closes once the listing is released and no stream is left, and
 * opens again should bytes be asked for after that.
 */
export class SharedZip {
  private zip: Promise<yauzl.ZipFile> | null = null;
  /** streams open or being opened */
  private users = 0;
  private released = false;

  constructor(private readonly file: string) {}

  /**
   * The entry's bytes, size- and CRC-32-checked as an upload's are: a damaged entry fails its
   * stream with a 400 sentence naming `path` (a path inside the ZIP), never with bytes that
   * are not what the archive says nor with an error the HTTP layer can only call a 500.
   */
  async open(record: yauzl.Entry, path: string): Promise<Readable> {
    // counted before the first await, so a release meanwhile does not close it under us
    this.users++;
    let stream: Readable;
    try {
      this.zip ??= openZip(this.file);
      stream = await openZipEntry(await this.zip, record, path);
    } catch (error) {
      this.done();
      throw error;
    }
    stream.once('close', () => this.done());
    return stream;
  }

  /** The listing is over: close when the last stream is. */
  release(): void {
    this.released = true;
    this.closeIfIdle();
  }

  private done(): void {
    this.users--;
    this.closeIfIdle();
  }

  private closeIfIdle(): void {
    if (!this.released || this.users > 0 || this.zip === null) return;
    const zip = this.zip;
    this.zip = null;
    zip.then((opened) => opened.close(), () => undefined);
  }
}
