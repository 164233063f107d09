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

/** buffers kept for use again (see ChunkGatherer.drained): enough for a socket that keeps up */
const MAX_SPARE_BUFFERS = 8;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
/** the array's punctuation as bytes: text would start a chunk-sized buffer for one character */
const OPEN = Buffer.from('[');
const COMMA = Buffer.from(',');
const CLOSE = Buffer.from(']');
const EMPTY_ARRAY = Buffer.from('[]');

/**
 * How a row is serialized: its JSON text, and optionally its JSON written as UTF-8 straight
 * into a chunk's buffer. A listing's rows as strings cost more than the rows' bytes: a row
 * built from a template is a rope of a dozen pieces, flattened (a new string) and then encoded
 * by one call per row, and the 30 MB of flattened rows of a 100,000-row listing keep the
 * garbage collector busy. Written piece by piece into the buffer, only the variable
 * pieces are encoded and the constant ones are copied.
 */
export interface RowSerializer<T, C extends ColumnBatch = ColumnBatch> {
  (item: T): string;
  /**
   * Writes row `row` of a batch given as columns (see ColumnBatch) into `out` as `into` does,
   * or NEEDS_ROOM. A serializer for listings with column batches must have it.
   */
  columnInto?(batch: C, row: number, out: Buffer, at: number, end: number): number;
  /**
   * Writes `item`'s JSON (the same bytes as its text in UTF-8) into `out` from `at`, using no
   * byte at or past `end`, and returns where it ended; returns NEEDS_ROOM when it would pass
   * `end`, or TAKE_TEXT when this item is better written as text (odd characters).
   */
  into?(item: T, out: Buffer, at: number, end: number): number;
}

/**
 * A batch of `count` rows held as columns by the target, not as items (see
 * electron/core/node-columns.ts): only the serializer's columnInto reads it.
 */
export interface ColumnBatch {
  readonly count: number;
}

/** RowSerializer.into's answers when it did not write the row. */
export const NEEDS_ROOM = -1;
export const TAKE_TEXT = -2;

/** Single items as one-item batches, for targets without listBatches. */
export async function* inBatches<T>(items: AsyncIterable<T>): AsyncGenerator<readonly T[]> {
  for await (const item of items) yield [item];
}

/**
 * The JSON of batches a target hands out again unchanged (its kept ones, see
 * TargetCapabilities.cacheableListings), as UTF-8 bytes, for as long as the target keeps them: a repeated
 * listing of an unchanged tree then costs neither serializing nor encoding. The key names
 * the serializer (base URL, target).
 */
const keptJson = new WeakMap<object, { key: string; bytes: Buffer }>();

export function keptBatchJson<T>(batch: readonly T[], serialize: RowSerializer<T>, key: string): Buffer {
  const kept = keptJson.get(batch);
  if (kept?.key === key) return kept.bytes;
  // small buffers: a kept batch may be one row, and is copied out whole below anyway
  const gatherer = new ChunkGatherer(16 * 1024);
  for (let i = 0; i < batch.length; i++) gatherer.addRow(batch[i]!, serialize, i > 0);
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
  private buffer: Buffer = Buffer.allocUnsafe(0);
  private filled = 0;
  private parts: Buffer[] = [];
  private bytes = 0;
  /**
   * Buffers of bufferBytes, for use again once their bytes are surely gone (see `drained`):
   * a listing of 30 MB otherwise makes 30 MB of new buffers, whose memory the process then
   * has to be given, and whose external bytes make V8 collect garbage far more often.
   */
  private readonly pooled = new WeakSet<Buffer>();
  /** closed since the last take (their parts are not handed out yet) */
  private closed: Buffer[] = [];
  /** handed out by take, maybe still on their way to the socket */
  private sent: Buffer[] = [];
  private spare: Buffer[] = [];

  /**
   * `bufferBytes`: each buffer text is encoded into (a chunk and some room by default).
   * `drained`: true when every chunk taken so far has left the process (copied to the
   * kernel), so their buffers may be written again; without it, no buffer is used twice.
   */
  constructor(
    private readonly bufferBytes = CHUNK_CHARS + 64 * 1024,
    private readonly drained: (() => boolean) | null = null,
  ) {}

  addText(text: string): void {
    // UTF-8 needs at most 3 bytes per UTF-16 code unit
    if (this.filled + text.length * 3 > this.buffer.length) this.newBuffer(text.length * 3);
    const written = this.buffer.write(text, this.filled, 'utf8');
    this.filled += written;
    this.bytes += written;
  }

  /** One row (after a comma when `comma`): written into the buffer when the serializer can, else as text. */
  addRow<T>(item: T, serialize: RowSerializer<T>, comma: boolean): void {
    const into = serialize.into;
    if (into !== undefined) {
      // in the current buffer, else once more in a fresh one (a row too big for that goes as text)
      for (let fresh = false; ; fresh = true) {
        const start = this.filled;
        const at = comma ? start + 1 : start;
        const end = at < this.buffer.length ? into.call(serialize, item, this.buffer, at, this.buffer.length) : NEEDS_ROOM;
        if (end >= 0) {
          if (comma) this.buffer[start] = 0x2c;
          this.filled = end;
          this.bytes += end - start;
          return;
        }
        if (end === TAKE_TEXT || fresh) break;
        this.newBuffer(0);
      }
    }
    this.addText(comma ? ',' + serialize(item) : serialize(item));
  }

  /** Row `row` of a column batch (after a comma when `comma`). */
  addColumnRow<C extends ColumnBatch>(batch: C, row: number, serialize: RowSerializer<unknown, C>, comma: boolean): void {
    for (let room = 0; ; room = room === 0 ? this.bufferBytes : room * 4) {
      const start = this.filled;
      const at = comma ? start + 1 : start;
      const end = at < this.buffer.length ? serialize.columnInto!(batch, row, this.buffer, at, this.buffer.length) : NEEDS_ROOM;
      if (end >= 0) {
        if (comma) this.buffer[start] = 0x2c;
        this.filled = end;
        this.bytes += end - start;
        return;
      }
      // a row of a few KiB at most (paths are limited): in a fresh buffer, larger ones should it need
      if (room > 64 * 1024 * 1024) throw new Error('a listing row does not fit in 64 MiB');
      this.newBuffer(room);
    }
  }

  /** The current buffer's written part is closed; writing goes on in a new one with at least `room` bytes. */
  private newBuffer(room: number): void {
    this.closeBuffer();
    if (room > this.bufferBytes) {
      this.buffer = Buffer.allocUnsafe(room);
      return;
    }
    if (this.spare.length === 0 && this.sent.length > 0 && this.drained?.()) {
      // a few are kept for the rest of the listing; the others are left to the collector
      this.spare = this.sent.length > MAX_SPARE_BUFFERS ? this.sent.slice(0, MAX_SPARE_BUFFERS) : this.sent;
      this.sent = [];
    }
    let buffer = this.spare.pop();
    if (buffer === undefined) {
      buffer = Buffer.allocUnsafe(this.bufferBytes);
      if (this.drained !== null) this.pooled.add(buffer);
    }
    this.buffer = buffer;
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
    const copied = this.parts.length !== 1;
    const chunk = copied ? Buffer.concat(this.parts, this.bytes) : this.parts[0]!;
    this.parts = [];
    this.bytes = 0;
    if (this.closed.length > 0) {
      // copied out: free at once; else the chunk is a part of one of them
      if (copied) this.spare.push(...this.closed);
      else this.sent.push(...this.closed);
      this.closed = [];
    }
    return chunk;
  }

  /** The written part of the current buffer joins the parts; the rest of it is not written to before the part has left. */
  private closeBuffer(): void {
    if (this.pooled.has(this.buffer)) {
      if (this.filled > 0) this.closed.push(this.buffer);
      else this.spare.push(this.buffer);
    }
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
export async function jsonArrayStream<T, C extends ColumnBatch = never>(
  batches: AsyncIterable<readonly T[] | C>,
  serialize: RowSerializer<T, C>,
  serializerKey: string,
  /**
   * `written`: true when everything the stream's reader was given has left the process
   * (e.g. an HTTP response's writableLength is 0: no byte waits in it or in its socket, and
   * none is in a write still under way). The stream's buffers are then used again.
   * `isKept`: the target's CacheableListings.isKept; a kept batch's JSON is kept with it.
   */
  options: { written?: () => boolean; isKept?: (batch: readonly T[]) => boolean } = {},
): Promise<Readable> {
  const iterator = batches[Symbol.asyncIterator]();
  const rowsIn = (batch: readonly T[] | C) => (Array.isArray(batch) ? batch.length : (batch as C).count);
  let first = await iterator.next();
  while (!first.done && rowsIn(first.value) === 0) first = await iterator.next();

  async function* chunks(): AsyncGenerator<Buffer> {
    const written = options.written;
    // what the stream holds has not reached its reader yet
    const out = new ChunkGatherer(undefined, written ? () => stream.readableLength === 0 && written() : null);
    if (first.done) {
      yield EMPTY_ARRAY;
      return;
    }
    let done = false;
    const isKept = options.isKept;
    try {
      out.addBytes(OPEN);
      let comma = false;
      for (let batch: readonly T[] | C = first.value; ; ) {
        if (!Array.isArray(batch)) {
          const columns = batch as C;
          for (let row = 0; row < columns.count; row++) {
            out.addColumnRow(columns, row, serialize as RowSerializer<unknown, C>, comma);
            comma = true;
            if (out.full) {
              yield out.take();
              await nextTurn();
            }
          }
        } else if (batch.length > 0 && isKept?.(batch)) {
          if (comma) out.addBytes(COMMA);
          out.addBytes(keptBatchJson(batch, serialize, serializerKey));
          comma = true;
        } else {
          // row by row, so one huge batch still goes out in chunks
          for (let i = 0; i < batch.length; i++) {
            out.addRow(batch[i]!, serialize, comma);
            comma = true;
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

  const stream = Readable.from(chunks(), { objectMode: false, highWaterMark: CHUNK_CHARS });
  return stream;
}
