// A JSON array streamed from batches of items: items are serialized as the target yields
// them and written with backpressure (the Readable only pulls when the socket drains), so
// a 100,000-entry listing never becomes one giant string or blocks the event loop.
import { Readable } from 'node:stream';

/**
 * Hand a chunk to the socket once this many characters (bytes) have gathered: large enough that the
 * per-chunk costs (a stream push, a write, a turn of the event loop) vanish beside the rows,
 * small enough to stay a fraction of a megabyte in memory.
 */
const CHUNK_CHARS = 256 * 1024;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
/** the array's punctuation as bytes: text would start a chunk-sized buffer for one character */
const OPEN = Buffer.from('[');
const COMMA = Buffer.from(',');
const CLOSE = Buffer.from(']');
const EMPTY_ARRAY = Buffer.from('[]');

/** Single items as one-item batches, for targets without listBatches. */
export async function* inBatches<T>(items: AsyncIterable<T>): AsyncGenerator<readonly T[]> {
  for await (const item of items) yield [item];
}

/**
 * The JSON of batches a target hands out again unchanged (frozen ones, see
 * Target.listBatches), as UTF-8 bytes, for as long as the target keeps them: a repeated
 * listing of an unchanged tree then costs neither serializing nor encoding. The key names
 * the serializer (base URL, target).
 */
const keptJson = new WeakMap<object, { key: string; bytes: Buffer }>();

export function keptBatchJson<T>(batch: readonly T[], serialize: (item: T) => string, key: string): Buffer {
  const kept = keptJson.get(batch);
  if (kept?.key === key) return kept.bytes;
  // small buffers: a kept batch may be one row, and is copied out whole below anyway
  const gatherer = new ChunkGatherer(16 * 1024);
  for (let i = 0; i < batch.length; i++) gatherer.addText((i === 0 ? '' : ',') + serialize(batch[i]!));
  let bytes = gatherer.take();
  // kept for long: not inside a chunk-sized allocation (a one-row batch would hold 320 KiB)
  if (bytes.buffer.byteLength - bytes.length > 4096) {
    const exact = Buffer.allocUnsafeSlow(bytes.length);
    bytes.copy(exact);
    bytes = exact;
  }
  keptJson.set(batch, { key, bytes });
  return bytes;
}

/**
 * Text and kept bytes gathered into chunks of about CHUNK_CHARS bytes. Text is encoded row by
 * row straight into the chunk's buffer: one Buffer.from of a 256 KiB string built from
 * thousands of pieces first flattens that rope, which cost more than the rows themselves.
 */
class ChunkGatherer {
  private buffer = Buffer.allocUnsafe(0);
  private filled = 0;
  private parts: Buffer[] = [];
  private bytes = 0;

  /** `bufferBytes`: each buffer text is encoded into (a chunk and some room by default) */
  constructor(private readonly bufferBytes = CHUNK_CHARS + 64 * 1024) {}

  addText(text: string): void {
    // UTF-8 needs at most 3 bytes per UTF-16 code unit
    if (this.filled + text.length * 3 > this.buffer.length) {
      this.closeBuffer();
      this.buffer = Buffer.allocUnsafe(Math.max(this.bufferBytes, text.length * 3));
    }
    const written = this.buffer.write(text, this.filled, 'utf8');
    this.filled += written;
    this.bytes += written;
  }

  addBytes(bytes: Buffer): void {
    this.closeBuffer();
    this.parts.push(bytes);
    this.bytes += bytes.length;
  }

  get full(): boolean {
    return this.bytes >= CHUNK_CHARS;
  }

  take(): Buffer {
    this.closeBuffer();
    const chunk = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.bytes);
    this.parts = [];
    this.bytes = 0;
    return chunk;
  }

  /** The written part of the current buffer joins the parts; the rest of it is not reused (the socket may hold the part). */
  private closeBuffer(): void {
    if (this.filled > 0) this.parts.push(this.buffer.subarray(0, this.filled));
    this.buffer = Buffer.allocUnsafe(0);
    this.filled = 0;
  }
}

/**
 * Awaits the FIRST non-empty batch before returning, so an error there (bad token, unknown
 * container) still becomes a proper status, and sends it at once. Errors after it destroy the
 * stream, which aborts the connection: a client never mistakes a cut-off listing for a
 * complete one.
 */
export async function jsonArrayStream<T>(batches: AsyncIterable<readonly T[]>, serialize: (item: T) => string, serializerKey: string): Promise<Readable> {
  const iterator = batches[Symbol.asyncIterator]();
  let first = await iterator.next();
  while (!first.done && first.value.length === 0) first = await iterator.next();

  async function* chunks(): AsyncGenerator<Buffer> {
    const out = new ChunkGatherer();
    if (first.done) {
      yield EMPTY_ARRAY;
      return;
    }
    let done = false;
    try {
      out.addBytes(OPEN);
      let separator = '';
      for (let batch: readonly T[] = first.value; ; ) {
        if (batch.length > 0 && Object.isFrozen(batch)) {
          if (separator) out.addBytes(COMMA);
          out.addBytes(keptBatchJson(batch, serialize, serializerKey));
          separator = ',';
        } else {
          // row by row, so one huge batch still goes out in chunks
          for (const item of batch) {
            out.addText(separator + serialize(item));
            separator = ',';
            if (out.full) {
              yield out.take();
              await nextTurn();
            }
          }
        }
        // the first batch goes out at once: the status and headers are then sent, and a later
        // failure can only cut the body off (see above)
        if (out.full || batch === first.value) {
          yield out.take();
          // a target that yields synchronously would otherwise keep the loop in microtasks
          await nextTurn();
        }
        const next = await iterator.next();
        if (next.done) break;
        batch = next.value;
      }
      done = true;
      out.addBytes(CLOSE);
      yield out.take();
    } finally {
      // the client left (or we failed) mid-way: let the target's generator clean up
      if (!done) await iterator.return?.();
    }
  }

  return Readable.from(chunks(), { objectMode: false, highWaterMark: CHUNK_CHARS });
}
