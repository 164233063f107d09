// A JSON array streamed from an async iterable: items are serialized as the target yields
// them and written with backpressure (the Readable only pulls when the socket drains), so
// a 100,000-entry listing never becomes one giant string or blocks the event loop.
import { Readable } from 'node:stream';

/** Flush a chunk to the socket once this many characters have gathered. */
const CHUNK_CHARS = 16 * 1024;

/**
 * Awaits the FIRST item before returning, so an error there (bad token, unknown container)
 * still becomes a proper status. Errors after that destroy the stream, which aborts the
 * connection: a client never mistakes a cut-off listing for a complete one.
 */
export async function jsonArrayStream<T>(source: AsyncIterable<T>, serialize: (item: T) => string): Promise<Readable> {
  const iterator = source[Symbol.asyncIterator]();
  const first = await iterator.next();

  async function* chunks(): AsyncGenerator<string> {
    let done = first.done ?? false;
    let chunk = done ? '[' : `[${serialize(first.value as T)}`;
    try {
      while (!done) {
        const next = await iterator.next();
        if (next.done) {
          done = true;
          break;
        }
        chunk += `,${serialize(next.value)}`;
        if (chunk.length >= CHUNK_CHARS) {
          yield chunk;
          chunk = '';
        }
      }
      yield `${chunk}]`;
    } finally {
      // the client left (or we failed) mid-way: let the target's generator clean up
      if (!done) await iterator.return?.();
    }
  }

  return Readable.from(chunks(), { objectMode: false, highWaterMark: CHUNK_CHARS * 4 });
}
