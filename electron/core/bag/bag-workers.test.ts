import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { crc32, inflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { BagWorkerPool, type BatchFile } from './bag-workers.js';
import { LOCAL_HEADER_BYTES } from '../zip/zip-records.js';

// The workers' answers must be exactly what the main thread would compute: digests, CRC,
// the bytes (stored or deflated), and ZIP local headers a reader accepts.

const digest = (algorithm: string, bytes: Buffer) => createHash(algorithm).update(bytes).digest('hex');

function file(name: string, bytes: Buffer, level = 2): BatchFile {
  return { name, folder: false, bytes, dosTime: 0x6000, dosDate: 0x5821, algorithms: ['md5', 'sha256'], level, decide: true };
}

describe('BagWorkerPool', () => {
  it('returns each file of a batch as a ZIP record with its digests: text deflated, random stored', async () => {
    const pool = new BagWorkerPool(2);
    const text = Buffer.from('station,depth,salinity\n'.repeat(2000));
    const noise = randomBytes(50_000);
    const tiny = Buffer.from('tiny text tiny text tiny text tiny text tiny text tiny text tiny text');
    const files = [file('a/text.csv', text), file('a/noise.bin', noise), file('a/tiny.txt', tiny), file('a/empty', Buffer.alloc(0)), file('a/kept.txt', text, 0)];
    const { records, results } = await pool.batch(files);
    let at = 0;
    files.forEach((f, i) => {
      const result = results[i]!;
      expect(result.hashes).toEqual({ md5: digest('md5', f.bytes), sha256: digest('sha256', f.bytes) });
      expect(result.crc).toBe(crc32(f.bytes));
      expect(result.size).toBe(f.bytes.length);
      expect(records.readUInt32LE(at)).toBe(0x04034b50);
      expect(records.readUInt16LE(at + 8)).toBe(result.method);
      expect(records.readUInt32LE(at + 14)).toBe(result.crc);
      const nameLength = records.readUInt16LE(at + 26);
      expect(records.subarray(at + LOCAL_HEADER_BYTES, at + LOCAL_HEADER_BYTES + nameLength).toString()).toBe(f.name);
      const data = records.subarray(at + LOCAL_HEADER_BYTES + nameLength, at + result.recordBytes);
      expect(data.length).toBe(result.compressedSize);
      expect((result.method === 8 ? inflateRawSync(data) : data).equals(f.bytes)).toBe(true);
      at += result.recordBytes;
    });
    expect(at).toBe(records.length);
    expect(results.map((r) => r.method)).toEqual([8, 0, 8, 0, 0]);
  });

  it('hashes, CRCs and deflates a large file split over two workers, in order', async () => {
    const pool = new BagWorkerPool(2);
    const bytes = Buffer.concat([Buffer.from('line of text, '.repeat(200_000)), randomBytes(3 * 1024 * 1024 + 17)]);
    const deflated: Buffer[] = [];
    const job = pool.stream(
      [
        { algorithms: ['md5', 'sha256'], crc: false, level: 0 },
        { algorithms: ['sha1'], crc: true, level: 2 },
      ],
      (chunk) => deflated.push(chunk),
    );
    for (let offset = 0; offset < bytes.length; offset += 300_000) await job.write(bytes.subarray(offset, offset + 300_000));
    const { hashes, crc } = await job.end();
    expect(hashes).toEqual({ md5: digest('md5', bytes), sha256: digest('sha256', bytes), sha1: digest('sha1', bytes) });
    expect(crc).toBe(crc32(bytes));
    // Buffer.equals: toEqual walks megabytes byte by byte
    expect(inflateRawSync(Buffer.concat(deflated)).equals(bytes)).toBe(true);
  });

  it('fails a large file cleanly when aborted, and the pool goes on', async () => {
    const pool = new BagWorkerPool(1);
    const job = pool.stream([{ algorithms: ['md5'], crc: true, level: 0 }], () => undefined);
    await job.write(randomBytes(2 * 1024 * 1024));
    job.abort();
    const { results } = await pool.batch([file('x.txt', Buffer.from('after the abort'))]);
    expect(results[0]!.hashes!.md5).toBe(digest('md5', Buffer.from('after the abort')));
  });

  it('reuses an aborted large file\'s ring once its slots are released, rather than making new ones', async () => {
    const pool = new BagWorkerPool(1);
    const bytes = randomBytes(3 * 1024 * 1024);
    for (let i = 0; i < 6; i++) {
      const job = pool.stream([{ algorithms: ['sha256'], crc: true, level: 0 }], () => undefined);
      await job.write(bytes);
      job.abort();
      // time for the worker to release the slots it was reading
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(pool.ringsHeld).toBeLessThanOrEqual(2);
  });

  it('reads files itself by path: the bytes as they are now, a symlink or a FIFO never followed', async () => {
    const pool = new BagWorkerPool(1);
    const dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-direct-'));
    try {
      const text = Buffer.from('station,depth,salinity\n'.repeat(3000));
      const grown = randomBytes(70_000);
      await writeFile(path.join(dir, 'text.csv'), text);
      await writeFile(path.join(dir, 'grown.bin'), grown);
      await writeFile(path.join(dir, 'empty'), '');
      const direct = (name: string, expected: number): BatchFile => ({ ...file(name, Buffer.alloc(0)), path: { absolutePath: path.join(dir, name), expected } });
      // listed sizes that are out of date: the worker reads to the end of the file
      const files = [direct('text.csv', 10), direct('grown.bin', 100), direct('empty', 0), file('inline.txt', text)];
      const { records, results } = await pool.batch(files);
      const contents = [text, grown, Buffer.alloc(0), text];
      let at = 0;
      results.forEach((result, i) => {
        expect(result.error ?? null).toBeNull();
        expect(result.hashes).toEqual({ md5: digest('md5', contents[i]!), sha256: digest('sha256', contents[i]!) });
        expect(result.crc).toBe(crc32(contents[i]!));
        const nameLength = records.readUInt16LE(at + 26);
        const data = records.subarray(at + LOCAL_HEADER_BYTES + nameLength, at + result.recordBytes);
        expect((result.method === 8 ? inflateRawSync(data) : data).equals(contents[i]!)).toBe(true);
        at += result.recordBytes;
      });
      expect(at).toBe(records.length);
      expect(results.map((r) => r.method)).toEqual([8, 0, 0, 8]);

      await symlink(path.join(dir, 'text.csv'), path.join(dir, 'link.csv'));
      execFileSync('mkfifo', [path.join(dir, 'pipe')]);
      const refused = await pool.batch([direct('text.csv', text.length), direct('link.csv', 10)]);
      expect(refused.results).toHaveLength(2);
      expect(refused.results[1]!.error?.code).toBe('ELOOP');
      // a FIFO opened without O_NONBLOCK would wait for a writer forever
      expect((await pool.batch([direct('pipe', 10)])).results[0]!.error?.code).toBe('ENOENT');
      expect((await pool.batch([direct('gone', 10)])).results[0]!.error?.code).toBe('ENOENT');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
