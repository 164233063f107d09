import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { deflateRawSync } from 'node:zlib';
import { bitsPerByte, chooseCompression, isIncompressibleByName, isTextByName, peek, sampleCompresses, SAMPLE_BYTES } from './compression-choice.js';

function chunked(bytes: Buffer, size: number): { stream: Readable; reads: () => number } {
  let offset = 0;
  let reads = 0;
  const stream = new Readable({
    read() {
      reads++;
      setImmediate(() => {
        this.push(offset < bytes.length ? bytes.subarray(offset, (offset += size)) : null);
      });
    },
  });
  return { stream, reads: () => reads };
}

async function drain(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

describe('peek', () => {
  it('returns the head and replays every byte exactly once', async () => {
    const bytes = randomBytes(300_000);
    const source = chunked(bytes, 10_000);
    const { head, stream } = await peek(source.stream, SAMPLE_BYTES);
    expect(head.length).toBeGreaterThanOrEqual(SAMPLE_BYTES);
    expect(head.equals(bytes.subarray(0, head.length))).toBe(true);
    expect((await drain(stream)).equals(bytes)).toBe(true);
    // one _read per chunk plus the final end: nothing was read twice
    expect(source.reads()).toBeLessThanOrEqual(31 + 1);
  });

  it('handles a stream shorter than the sample', async () => {
    const bytes = Buffer.from('short');
    const { head, stream } = await peek(chunked(bytes, 2).stream, SAMPLE_BYTES);
    expect(head.toString()).toBe('short');
    expect((await drain(stream)).toString()).toBe('short');
  });

  it('rejects when the source fails before the sample is complete, and passes later errors on', async () => {
    const early = new Readable({ read() { this.destroy(new Error('early')); } });
    await expect(peek(early, SAMPLE_BYTES)).rejects.toThrow('early');

    let sent = 0;
    const late = new Readable({
      read() {
        setImmediate(() => (sent++ < 3 ? this.push(Buffer.alloc(SAMPLE_BYTES)) : this.destroy(new Error('late'))));
      },
    });
    const { stream } = await peek(late, SAMPLE_BYTES);
    await expect(drain(stream)).rejects.toThrow('late');
  });
});

describe('choosing STORE or DEFLATE', () => {
  it('knows compressed formats by extension, case-insensitively', () => {
    expect(isIncompressibleByName('a/b/photo.JPG')).toBe(true);
    expect(isIncompressibleByName('data.parquet')).toBe(true);
    expect(isIncompressibleByName('notes.txt')).toBe(false);
    expect(isIncompressibleByName('.gz')).toBe(false);
    expect(isIncompressibleByName('dir.zip/readme')).toBe(false);
    expect(isTextByName('a/b/table.CSV')).toBe(true);
    expect(isTextByName('notes.txt')).toBe(true);
    expect(isTextByName('photo.jpg')).toBe(false);
    expect(isTextByName('.csv')).toBe(false);
    expect(isTextByName('dir.csv/readme')).toBe(false);
  });

  it('samples: text compresses, noise and tiny files do not', () => {
    expect(sampleCompresses(Buffer.from('abc,def\n'.repeat(10_000)))).toBe(true);
    expect(sampleCompresses(randomBytes(SAMPLE_BYTES))).toBe(false);
    expect(sampleCompresses(Buffer.from('tiny'))).toBe(false);
  });

  it('does not read a file whose name decides', async () => {
    const source = chunked(Buffer.from('whatever'), 4);
    const { compress, stream } = await chooseCompression('x.zip', source.stream);
    expect(compress).toBe(false);
    expect(stream).toBe(source.stream);
    expect(source.reads()).toBe(0);
  });
});

describe('sampleCompresses without deflating (order-0 entropy shortcut)', () => {
  const deflateSays = (sample: Buffer) => deflateRawSync(sample, { level: 1 }).length < sample.length * 0.95;
  const csv = (rows: number) => Buffer.from(Array.from({ length: rows }, (_, i) => `${i},station-${i % 17},${(i * 7.31) % 1000},ok`).join('\n'));
  const samples: [string, Buffer][] = [
    ['csv text', csv(2000).subarray(0, SAMPLE_BYTES)],
    ['short csv', csv(200)],
    ['random', randomBytes(SAMPLE_BYTES)],
    ['a random block repeated', Buffer.concat(Array<Buffer>(16).fill(randomBytes(4096)))],
    ['zeros', Buffer.alloc(SAMPLE_BYTES)],
    ['base64 of random', Buffer.from(randomBytes(30_000).toString('base64')).subarray(0, SAMPLE_BYTES)],
    ['hex of random', Buffer.from(randomBytes(20_000).toString('hex')).subarray(0, SAMPLE_BYTES)],
  ];
  for (const [label, sample] of samples) {
    it(`decides like a level-1 deflate of the sample: ${label}`, () => {
      expect(sampleCompresses(sample)).toBe(deflateSays(sample));
    });
  }

  it('measures entropy in bits per byte', () => {
    expect(bitsPerByte(Buffer.alloc(1000))).toBe(0);
    expect(bitsPerByte(Buffer.from([0, 1, 0, 1]))).toBe(1);
    expect(bitsPerByte(randomBytes(SAMPLE_BYTES))).toBeGreaterThan(7.9);
  });
});
