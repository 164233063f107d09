import type { FileHandle } from 'node:fs/promises';
import { Writable } from 'node:stream';
import { giveBack } from '../../read-buffers.js';

/**
 * Bytes into an open file, one chunk after another from its start; each chunk is
 * given back to the reader that lent it once its write has finished (read-buffers.ts): this is
 * the last holder of a file's bytes on their way from a reader. With `flush`, the file is
 * fsynced before it closes. Closes `handle` when it finishes or is destroyed.
 */
export function fileSink(handle: FileHandle, flush: boolean): Writable {
  let position = 0;
  return new Writable({
    write(chunk: Buffer, _encoding, callback) {
      writeAllAt(handle, chunk, position).then(() => {
        position += chunk.length;
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

/** All of `bytes` into the file at `position` (a write may take fewer bytes than it was given). */
export async function writeAllAt(handle: FileHandle, bytes: Buffer, position: number): Promise<void> {
  for (let done = 0; done < bytes.length; ) done += (await handle.write(bytes, done, bytes.length - done, position + done)).bytesWritten;
}
