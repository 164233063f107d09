import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPUTABLE_HASHES, HashingPassThrough, INLINE_HASH_BYTES, hashFile, isComputableHash, hashStream, hashWorkersAvailable, StreamHasher } from './hashing.js';

const ALGORITHMS = ['md5', 'sha256', 'sha1', 'sha512'] as const;

describe('the hashes Ferry computes', () => {
  it('are the ones every stream here computes, strongest first; other names are not computable', async () => {
    expect([...COMPUTABLE_HASHES]).toEqual(['sha512', 'sha256', 'sha1', 'md5']);
    const bytes = randomBytes(1000);
    expect((await hashStream(Readable.from([bytes]), COMPUTABLE_HASHES)).hashes).toEqual(expected(bytes, COMPUTABLE_HASHES));
    for (const name of COMPUTABLE_HASHES) expect(isComputableHash(name)).toBe(true);
    for (const name of ['crc32', 'git-sha1', 'quickxor', 'MD5', '']) expect(isComputableHash(name)).toBe(false);
  });
});

function expected(bytes: Buffer, algorithms: readonly string[] = ALGORITHMS): Record<string, string> {
  return Object.fromEntries(algorithms.map((algorithm) => [algorithm, createHash(algorithm).update(bytes).digest('hex')]));
}

/** Splits `bytes` into chunks of the given sizes, cycling. */
function chunked(bytes: Buffer, sizes: number[]): Buffer[] {
  const chunks: Buffer[] = [];
  for (let offset = 0, i = 0; offset < bytes.length; i++) {
    const size = sizes[i % sizes.length]!;
    chunks.push(bytes.subarray(offset, offset + size));
    offset += size;
  }
  return chunks;
}

describe('hashing on worker threads gives node crypto digests', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-hashing-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('has worker threads in this environment (else every other test here checks the inline path only)', () => {
    expect(hashWorkersAvailable()).toBe(true);
  });

  // Sizes around the inline limit and the shared slots (512 KiB), odd chunkings included.
  const sizes = [0, 1, 1000, INLINE_HASH_BYTES, INLINE_HASH_BYTES + 1, 512 * 1024, 512 * 1024 + 7, 3 * 1024 * 1024 + 12_345];
  for (const size of sizes) {
    it(`hashStream over ${size} bytes in uneven chunks`, async () => {
      const bytes = randomBytes(size);
      const result = await hashStream(Readable.from(chunked(bytes, [1, 65_536, 1_000_003, 13])), ALGORITHMS);
      expect(result).toEqual({ hashes: expected(bytes), bytes: size });
    });

    it(`hashFile over ${size} bytes (read straight into the shared slots)`, async () => {
      const bytes = randomBytes(size);
      const file = path.join(dir, `file-${size}.bin`);
      await writeFile(file, bytes);
      expect(await hashFile(file, ['md5', 'sha256'])).toEqual({ hashes: expected(bytes, ['md5', 'sha256']), bytes: size });
    });
  }

  it('HashingPassThrough passes every byte on unchanged and counts them', async () => {
    const bytes = randomBytes(2 * 1024 * 1024 + 3);
    const hasher = new HashingPassThrough(['md5', 'sha256']);
    const out: Buffer[] = [];
    let counted = 0;
    const counting = new HashingPassThrough(['sha1'], (n) => (counted += n));
    await pipeline(Readable.from(chunked(bytes, [100_000, 7])), hasher, counting, async (source: AsyncIterable<Buffer>) => {
      for await (const chunk of source) out.push(chunk);
    });
    expect(Buffer.concat(out).equals(bytes)).toBe(true);
    expect(hasher.digests).toEqual(expected(bytes, ['md5', 'sha256']));
    expect(hasher.bytes).toBe(bytes.length);
    expect(counting.digests).toEqual(expected(bytes, ['sha1']));
    expect(counted).toBe(bytes.length);
  });

  it('many streams at once keep their digests apart', async () => {
    const inputs = Array.from({ length: 12 }, (_, i) => randomBytes(300_000 + i * 97_001));
    const results = await Promise.all(inputs.map((bytes) => hashStream(Readable.from(chunked(bytes, [65_536])), ['md5', 'sha256'])));
    results.forEach((result, i) => expect(result.hashes).toEqual(expected(inputs[i]!, ['md5', 'sha256'])));
  });

  it('a stream that fails part-way releases its slots: later streams still hash', async () => {
    const failing = new Readable({
      read() {
        this.push(randomBytes(600_000));
        this.destroy(new Error('disk went away'));
      },
    });
    await expect(hashStream(failing, ['md5', 'sha256'])).rejects.toThrow('disk went away');
    for (let i = 0; i < 6; i++) {
      const bytes = randomBytes(1_500_000);
      expect((await hashStream(Readable.from([bytes]), ['md5', 'sha256'])).hashes).toEqual(expected(bytes, ['md5', 'sha256']));
    }
  });

  it('an aborted StreamHasher never answers, and its ring is reused', async () => {
    const hasher = new StreamHasher(['md5']);
    await hasher.update(randomBytes(2 * 1024 * 1024));
    hasher.abort();
    const bytes = randomBytes(1024 * 1024);
    const next = new StreamHasher(['md5']);
    await next.update(bytes);
    expect(await next.digest()).toEqual(expected(bytes, ['md5']));
  });
});

describe('HashingPassThrough.addAlgorithms', () => {
  it('adds algorithms before the first byte, and refuses after', async () => {
    const bytes = randomBytes(900_000);
    const hasher = new HashingPassThrough(['md5']);
    expect(hasher.addAlgorithms(['sha256', 'md5'])).toBe(true);
    expect(hasher.algorithms).toEqual(['md5', 'sha256']);
    await pipeline(Readable.from(chunked(bytes, [300_000])), hasher, async (source: AsyncIterable<Buffer>) => {
      for await (const chunk of source) void chunk;
    });
    expect(hasher.digests).toEqual(expected(bytes, ['md5', 'sha256']));
    expect(hasher.addAlgorithms(['sha1'])).toBe(false);
  });
});

describe('a hasher downstream of another hashes nothing itself (hashAlongWith)', () => {
  it('takes its digests from the hasher its bytes come from, which computes them once for both', async () => {
    const bytes = randomBytes(3 * INLINE_HASH_BYTES + 17);
    const upstream = new HashingPassThrough(['md5']);
    const downstream = new HashingPassThrough(['sha256']);
    downstream.hashAlongWith(upstream);
    expect(upstream.algorithms).toEqual(['md5', 'sha256']);
    // a consumer further down asks the downstream one: the upstream one computes it
    expect(downstream.addAlgorithms(['sha1'])).toBe(true);
    expect(upstream.algorithms).toEqual(['md5', 'sha256', 'sha1']);
    const out: Buffer[] = [];
    await pipeline(Readable.from(chunked(bytes, [1000, 70_000])), upstream, downstream, async (source: AsyncIterable<Buffer>) => {
      for await (const chunk of source) out.push(chunk);
    });
    expect(Buffer.concat(out).equals(bytes)).toBe(true);
    expect(upstream.digests).toEqual(expected(bytes, ['md5', 'sha256', 'sha1']));
    expect(downstream.digests).toEqual(expected(bytes, ['sha256', 'sha1']));
    expect(downstream.bytes).toBe(bytes.length);
  });

  it('hashes alone when the source is no hasher, or has passed bytes already', async () => {
    const bytes = randomBytes(5000);
    const upstream = new HashingPassThrough(['md5']);
    upstream.write(bytes.subarray(0, 10));
    const downstream = new HashingPassThrough(['sha256']);
    downstream.hashAlongWith(upstream);
    expect(upstream.algorithms).toEqual(['md5']);
    upstream.end(bytes.subarray(10));
    const plain = new HashingPassThrough(['sha256']);
    plain.hashAlongWith(Readable.from([bytes]));
    for (const [source, hasher] of [[upstream, downstream], [Readable.from([bytes]), plain]] as const) {
      await pipeline(source, hasher, async (chunks: AsyncIterable<Buffer>) => {
        for await (const chunk of chunks) void chunk;
      });
      expect(hasher.digests).toEqual(expected(bytes, ['sha256']));
    }
  });
});
