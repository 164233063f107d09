// A JSON array streamed from an async iterable: items are serialized as the target yields
// them and written with backpressure (the Readable only pulls when the socket drains), so
// a 100,000-entry listing never becomes one giant string or blocks the event loop.
import { Readable } from 'node:stream';

/** Flush a chunk to the socket once this many characters have gathered. */
const CHUNK_CHARS = 16 * 1024;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Awaits the FIRST item before returning, so an error there (bad token, unknown container)
 * still becomes a proper status. The first item is sent at once; errors after it destroy
 * the stream, which aborts the connection: a client never mistakes a cut-off listing for a
 * complete one.
 */
export async function jsonArrayStream<T>(source: AsyncIterable<T>, serialize: (item: T) => string): Promise<Readable> {
  const iterator = source[Symbol.asyncIterator]();
  const first = await iterator.next();

  async function* chunks(): AsyncGenerator<string> {
    if (first.done) {
      yield '[]';
      return;
    }
    let done = false;
    try {
      yield `[${serialize(first.value)}`;
      let chunk = '';
      for (;;) {
        const next = await iterator.next();
        if (next.done) break;
        chunk += `,${serialize(next.value)}`;
        if (chunk.length >= CHUNK_CHARS) {
          yield chunk;
          chunk = '';
          // a target that yields synchronously would otherwise keep the loop in microtasks
          await nextTurn();
        }
      }
      done = true;
      yield `${chunk}]`;
    } finally {
      // the client left (or we failed) mid-way: let the target's generator clean up
      if (!done) await iterator.return?.();
    }
  }

  return Readable.from(chunks(), { objectMode: false, highWaterMark: CHUNK_CHARS * 4 });
}
