import { Transform, type Readable } from 'node:stream';
import type { Entry } from '../../electron/core/target.js';
import { watchedReads } from '../../electron/core/jobs/open-from.js';

/**
 * `entry` with its reads counted: `count` is told the bytes its source itself hands out, all of
 * open()'s, and of Entry.openFrom's only those past the `offset` its writer kept (which come
 * back from the writer's own partial, not from the source). For the tests of resume within a file.
 */
export function countedEntry(entry: Entry, count: (bytes: number) => void): Entry {
  const counted = (stream: Readable, kept: number): Readable => {
    let seen = 0;
    const counting = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        seen += chunk.length;
        count(Math.max(0, Math.min(chunk.length, seen - kept)));
        callback(null, chunk);
      },
    });
    stream.on('error', (error) => counting.destroy(error));
    return stream.pipe(counting);
  };
  return { ...entry, ...watchedReads(entry, counted) };
}
