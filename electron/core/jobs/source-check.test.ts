import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { crc32 } from '../crc32.js';
import { CheckedHashingStream, SourceCheckFailed, withCrc32Check } from './source-check.js';

const chunks = () => [Buffer.from('first chunk, '), Buffer.from('second chunk, '), Buffer.from('last chunk')];
const all = Buffer.concat(chunks());

/** What a writer would receive: the bytes that came through, and how the stream ended. */
async function drain(stream: Readable): Promise<{ bytes: Buffer; error: unknown }> {
  const received: Buffer[] = [];
  try {
    for await (const chunk of stream) received.push(chunk as Buffer);
    return { bytes: Buffer.concat(received), error: null };
  } catch (error) {
    return { bytes: Buffer.concat(received), error };
  }
}

describe('withCrc32Check', () => {
  it('passes every byte on when the CRC-32 matches', async () => {
    const { bytes, error } = await drain(withCrc32Check(Readable.from(chunks()), crc32(all), 'D/a.txt'));
    expect(error).toBeNull();
    expect(bytes).toEqual(all);
  });

  it('ends in SourceCheckFailed, the last chunk withheld, when it does not: no consumer gets the file whole', async () => {
    const { bytes, error } = await drain(withCrc32Check(Readable.from(chunks()), (crc32(all) ^ 1) >>> 0, 'D/a.txt'));
    expect(error).toBeInstanceOf(SourceCheckFailed);
    expect((error as SourceCheckFailed).failures).toEqual([
      { path: 'D/a.txt', algorithm: 'crc32', expected: ((crc32(all) ^ 1) >>> 0).toString(16).padStart(8, '0'), actual: crc32(all).toString(16).padStart(8, '0') },
    ]);
    expect((error as Error).message).toMatch(/^'D\/a.txt' does not match its CRC-32 in the ZIP \(expected [0-9a-f]{8}, got [0-9a-f]{8}\); .*did not write it\.$/);
    expect(bytes.length).toBeLessThan(all.length);
  });

  it('checks an empty file too (CRC-32 0)', async () => {
    expect((await drain(withCrc32Check(Readable.from([]), 0, 'empty'))).error).toBeNull();
    expect((await drain(withCrc32Check(Readable.from([]), 1, 'empty'))).error).toBeInstanceOf(SourceCheckFailed);
  });
});

describe('CheckedHashingStream', () => {
  it('withholds the last chunk until the check has seen the digests, and offers them to a writer', async () => {
    const seen: Record<string, string>[] = [];
    const ok = new CheckedHashingStream(['md5'], () => undefined, (digests) => (seen.push(digests), null));
    const passed = await drain(Readable.from(chunks()).pipe(ok));
    expect(passed).toEqual({ bytes: all, error: null });
    expect(ok.digests?.md5).toBe(seen[0]!.md5);

    const refused = new CheckedHashingStream(['md5'], () => undefined, () => new SourceCheckFailed('x', []));
    const failed = await drain(Readable.from(chunks()).pipe(refused));
    expect(failed.error).toBeInstanceOf(SourceCheckFailed);
    expect(failed.bytes.length).toBe(all.length - chunks()[2]!.length);
  });
});
