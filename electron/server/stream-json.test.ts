import { describe, expect, it } from 'vitest';
import { inBatches, jsonArrayStream, keptBatchJson } from './stream-json.js';

interface Row {
  n: number;
  name: string;
}

async function* batchesOf(batches: (readonly Row[])[]): AsyncGenerator<readonly Row[]> {
  yield* batches;
}

async function chunksOf(stream: NodeJS.ReadableStream): Promise<Buffer[]> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return chunks;
}

function counting() {
  const counter = { calls: 0, serialize: (row: Row) => (counter.calls++, JSON.stringify(row)) };
  return counter;
}

const rows = (from: number, count: number, name = 'r'): Row[] => Array.from({ length: count }, (_, i) => ({ n: from + i, name: `${name}${from + i} "é"` }));

/** Batches marked kept, as a target's CacheableListings marks them. */
const keptBatches = new WeakSet<readonly unknown[]>();
const keep = <T,>(batch: T[]): readonly T[] => (keptBatches.add(batch), batch);
const isKept = (batch: readonly unknown[]) => keptBatches.has(batch);

describe('jsonArrayStream', () => {
  it('writes exactly JSON.stringify of all rows, across empty, kept and plain batches', async () => {
    const batches = [keep([]), keep(rows(0, 3)), [], rows(3, 2), keep(rows(5, 1)), []];
    const text = Buffer.concat(await chunksOf(await jsonArrayStream(batchesOf(batches), counting().serialize, 'k', { isKept }))).toString('utf8');
    expect(text).toBe(JSON.stringify(rows(0, 6)));
  });

  it('writes [] for no rows at all', async () => {
    const text = Buffer.concat(await chunksOf(await jsonArrayStream(batchesOf([keep([]), []]), counting().serialize, 'k', { isKept }))).toString();
    expect(text).toBe('[]');
  });

  it('serializes a kept batch once per key, a plain batch every time', async () => {
    const kept = keep(rows(0, 4));
    const plain = rows(4, 2);
    const counter = counting();
    const run = async (key: string) => Buffer.concat(await chunksOf(await jsonArrayStream(batchesOf([kept, plain]), counter.serialize, key, { isKept }))).toString();
    const first = await run('base A');
    expect(counter.calls).toBe(6);
    expect(await run('base A')).toBe(first);
    expect(counter.calls).toBe(8);
    // another base URL makes other detail links: the kept JSON is not reused for it
    await run('base B');
    expect(counter.calls).toBe(14);
  });

  it('keeps a small batch in a buffer of its own size, not a chunk-sized one', () => {
    const small = keep(rows(0, 1));
    const bytes = keptBatchJson(small, counting().serialize, 'size');
    expect(bytes.toString()).toBe(JSON.stringify(rows(0, 1)).slice(1, -1));
    expect(bytes.buffer.byteLength).toBeLessThan(bytes.length + 4096);
    expect(keptBatchJson(small, counting().serialize, 'size')).toBe(bytes);
  });

  it('sends one huge plain batch in many chunks, not one string', async () => {
    const huge = rows(0, 20_000, 'a-longer-name-to-make-the-rows-larger-');
    const chunks = await chunksOf(await jsonArrayStream(inBatches((async function* () { yield* huge; })()), counting().serialize, 'k'));
    expect(chunks.length).toBeGreaterThan(4);
    for (const chunk of chunks) expect(chunk.length).toBeLessThan(1024 * 1024);
    expect(JSON.parse(Buffer.concat(chunks).toString())).toEqual(huge);
  });

  it('rejects before any byte when the first batch fails, so the route can answer with a status', async () => {
    const failing = (async function* (): AsyncGenerator<readonly Row[]> {
      yield* [];
      throw new Error('bad token');
    })();
    await expect(jsonArrayStream(failing, counting().serialize, 'k')).rejects.toThrow('bad token');
  });

  it('destroys the stream when a later batch fails: a cut-off listing never ends like a whole one', async () => {
    const failingLater = (async function* (): AsyncGenerator<readonly Row[]> {
      yield rows(0, 1);
      throw new Error('disk gone');
    })();
    const stream = await jsonArrayStream(failingLater, counting().serialize, 'k');
    await expect(chunksOf(stream)).rejects.toThrow('disk gone');
  });

  describe('buffers used again once written', () => {
    const many = rows(0, 40_000, 'a-longer-name-to-make-the-rows-larger-');
    const want = JSON.stringify(many);

    it('never writes into a buffer while the reader may still hold its bytes', async () => {
      // the reader keeps every chunk as given (no copy) and never reports them written
      const stream = await jsonArrayStream(batchesOf([many.slice(0, 100), many.slice(100)]), counting().serialize, 'k', { written: () => false });
      const held: Buffer[] = [];
      for await (const chunk of stream) held.push(chunk as Buffer);
      expect(held.length).toBeGreaterThan(4);
      expect(Buffer.concat(held).toString()).toBe(want);
    });

    it('writes into the same buffers again once every chunk has been written', async () => {
      let copied = true;
      const stream = await jsonArrayStream(batchesOf([many.slice(0, 100), many.slice(100)]), counting().serialize, 'k', { written: () => copied });
      const copies: Buffer[] = [];
      const memory = new Set<ArrayBufferLike>();
      for await (const chunk of stream) {
        copied = false;
        copies.push(Buffer.from(chunk as Buffer));
        memory.add((chunk as Buffer).buffer);
        copied = true;
      }
      expect(Buffer.concat(copies).toString()).toBe(want);
      // fewer buffers than chunks: the first ones were written into again
      expect(copies.length).toBeGreaterThan(4);
      expect(memory.size).toBeLessThan(copies.length);
    });
  });
});
