import { createHash, randomBytes } from 'node:crypto';
import { open, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { StreamHasher } from './hashing.js';
import { giveBack, isLent, lendingReadStream, READ_BUFFER_BYTES, readBufferCounts } from './read-buffers.js';
import { tempDirEach } from './targets/local/test-helpers.js';

const where = tempDirEach('read-buffers');

async function fileOf(bytes: Buffer, name = 'f.bin'): Promise<string> {
  const file = path.join(where.dir, name);
  await writeFile(file, bytes);
  return file;
}

/** Reads `file` through a lending stream, copying each chunk's bytes, and gives each chunk back when `giveBackEach`. */
async function readAll(file: string, options: { start?: number; end?: number; giveBackEach: boolean }): Promise<{ bytes: Buffer; chunks: number; made: number }> {
  const made = readBufferCounts.made;
  const parts: Buffer[] = [];
  let chunks = 0;
  for await (const chunk of lendingReadStream(await open(file, 'r'), options)) {
    chunks++;
    expect(isLent(chunk as Buffer)).toBe(true);
    parts.push(Buffer.from(chunk as Buffer));
    if (options.giveBackEach) giveBack(chunk as Buffer);
  }
  return { bytes: Buffer.concat(parts), chunks, made: readBufferCounts.made - made };
}

describe('large files read into lent buffers', () => {
  it('reads every byte, from a start to an end, for sizes around the buffer size', async () => {
    for (const size of [0, 1, READ_BUFFER_BYTES - 1, READ_BUFFER_BYTES, READ_BUFFER_BYTES + 1, 2.5 * READ_BUFFER_BYTES]) {
      const bytes = randomBytes(size);
      const file = await fileOf(bytes);
      expect((await readAll(file, { giveBackEach: true })).bytes.equals(bytes)).toBe(true);
      const start = Math.floor(size / 3);
      const end = Math.floor((size * 2) / 3) + 1;
      expect((await readAll(file, { start, end, giveBackEach: true })).bytes.equals(bytes.subarray(start, end))).toBe(true);
    }
  });

  it('reuses the buffers a consumer gives back: a few made for a file of many chunks', async () => {
    const bytes = randomBytes(12 * READ_BUFFER_BYTES + 7);
    const file = await fileOf(bytes);
    await readAll(file, { giveBackEach: true }); // the free list filled
    const again = await readAll(file, { giveBackEach: true });
    expect(again.bytes.equals(bytes)).toBe(true);
    expect(again.chunks).toBe(13);
    expect(again.made).toBe(0);
  });

  it('makes a buffer for every chunk a consumer keeps, and keeps its bytes intact', async () => {
    const bytes = randomBytes(5 * READ_BUFFER_BYTES);
    const file = await fileOf(bytes);
    const kept: Buffer[] = [];
    for await (const chunk of lendingReadStream(await open(file, 'r'))) kept.push(chunk as Buffer);
    // free buffers are used first; beyond them each chunk is a buffer of its own
    expect(new Set(kept.map((chunk) => chunk.buffer)).size).toBe(5);
    expect(Buffer.concat(kept).equals(bytes)).toBe(true);
  });

  it('takes a buffer back once: given back twice, it is still lent to one read at a time', async () => {
    const file = await fileOf(randomBytes(2 * READ_BUFFER_BYTES));
    const first = lendingReadStream(await open(file, 'r'));
    const [chunk] = (await first.toArray()) as Buffer[];
    giveBack(chunk!);
    giveBack(chunk!);
    expect(isLent(chunk!)).toBe(false);
    const held = (await lendingReadStream(await open(file, 'r')).toArray()) as Buffer[];
    expect(held).toHaveLength(2);
    expect(held[0]!.buffer).not.toBe(held[1]!.buffer);
  });

  it('never lends again a buffer that moved to another thread (it is empty here)', async () => {
    const bytes = randomBytes(READ_BUFFER_BYTES);
    const file = await fileOf(bytes);
    for await (const chunk of lendingReadStream(await open(file, 'r'))) {
      const buffer = (chunk as Buffer).buffer as ArrayBuffer;
      structuredClone(buffer, { transfer: [buffer] });
      giveBack(chunk as Buffer);
    }
    for (let round = 0; round < 10; round++) expect((await readAll(file, { giveBackEach: false })).bytes.equals(bytes)).toBe(true);
  });

  it('a hasher that holds a lent chunk (a short stream) keeps its own copy: the buffer read again does not change the digest', async () => {
    const first = randomBytes(1000);
    const firstFile = await fileOf(first, 'first.bin');
    // more chunks than buffers kept free, none given back: every free buffer is lent again
    const secondFile = await fileOf(randomBytes(12 * READ_BUFFER_BYTES), 'second.bin');
    const hasher = new StreamHasher(['md5']);
    let held: ArrayBufferLike | null = null;
    for await (const chunk of lendingReadStream(await open(firstFile, 'r'))) {
      await hasher.update(chunk as Buffer);
      held = (chunk as Buffer).buffer;
      giveBack(chunk as Buffer);
    }
    const lentAgain = ((await lendingReadStream(await open(secondFile, 'r')).toArray()) as Buffer[]).map((chunk) => chunk.buffer);
    expect(lentAgain).toContain(held);
    expect((await hasher.digest()).md5).toBe(createHash('md5').update(first).digest('hex'));
  });
});
