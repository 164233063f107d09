import type { FileHandle } from 'node:fs/promises';
import { Writable } from 'node:stream';
import { giveBack } from '../../read-buffers.js';

/**
 * Bytes into an open file, one chunk after another from its current offset; each chunk is
 * given back to the reader that lent it once its write has finished (read-buffers.ts): this is
 * the last holder of a file's bytes on their way from a reader. With `flush`, the file is
 * fsynced before it closes. Closes `handle` when it finishes or is destroyed.
 */
export function fileSink(handle: FileHandle, flush: boolean): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, callback) {
      writeWhole(handle, chunk).then(() => {
        giveBack(chunk);
        callback();
      }, callback);
    },
    final(callback) {
      (flush ? handle.sync() : Promise.resolve()).then(() => callback(), callback);
    },
    destroy(error, callback) {
      handle.close().then(
        () => callback(error),
        (closeError: Error) => callback(error ?? closeError),
      );
    },
  });
}

async function writeWhole(handle: FileHandle, chunk: Buffer): Promise<void> {
  for (let offset = 0; offset < chunk.length; ) {
    const { bytesWritten } = await handle.write(chunk, offset, chunk.length - offset);
    offset += bytesWritten;
  }
}
