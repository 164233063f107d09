import { createHash, randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crc32 } from '../crc32.js';
import { bagWorkers } from './bag-workers.js';
import { openDirectSource, streamSource, type LargeFileSource } from './large-file-source.js';
import type { DirectFile } from '../target.js';

let dir: string;
const bytes = randomBytes(3 * 1024 * 1024 + 5);
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-large-source-'));
  await writeFile(path.join(dir, 'file.bin'), bytes);
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

const direct = (name: string): DirectFile => ({
  absolutePath: path.join(dir, name),
  size: bytes.length,
  toError: (error) => new Error(`mapped: ${(error as NodeJS.ErrnoException).code}`),
});

/** Every chunk of the source through a real job: the bytes seen here, and what the workers computed. */
async function drain(source: LargeFileSource, lend: boolean) {
  const job = bagWorkers().stream([{ algorithms: ['md5', 'sha256'], crc: true, level: 0 }], () => undefined);
  const seen: Buffer[] = [];
  for (let chunk = await source.next(job, lend); chunk; chunk = await source.next(job, lend)) {
    seen.push(Buffer.from(chunk.bytes));
    expect(chunk.giveBack !== undefined).toBe(lend);
    chunk.giveBack?.();
  }
  source.close();
  return { read: Buffer.concat(seen), result: await job.end() };
}

describe('a large local file read into the workers’ shared slots', () => {
  it('reads the whole file, in order, and the workers hash exactly those bytes', async () => {
    for (const lend of [true, false]) {
      const source = await openDirectSource(direct('file.bin'));
      expect((await source.head(64 * 1024)).equals(bytes.subarray(0, 64 * 1024))).toBe(true);
      const { read, result } = await drain(source, lend);
      expect(read.equals(bytes)).toBe(true);
      expect(result.hashes.md5).toBe(createHash('md5').update(bytes).digest('hex'));
      expect(result.hashes.sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
      expect(result.crc).toBe(crc32(bytes));
    }
  });

  it('does not follow a symlink put in a file’s place, and says so through the target', async () => {
    await symlink(path.join(dir, 'file.bin'), path.join(dir, 'link.bin'));
    await expect(openDirectSource(direct('link.bin'))).rejects.toThrow(/^mapped: ELOOP$/);
  });

  it('refuses a FIFO at once rather than waiting on it', async () => {
    execFileSync('mkfifo', [path.join(dir, 'fifo')]);
    await expect(openDirectSource(direct('fifo'))).rejects.toThrow(/^mapped: ENOENT$/);
  });

  it('a target’s stream gives the same bytes, its head not consumed', async () => {
    const chunks = [bytes.subarray(0, 1000), bytes.subarray(1000, 2 * 1024 * 1024), bytes.subarray(2 * 1024 * 1024)];
    const source = streamSource(Readable.from(chunks));
    expect((await source.head(64 * 1024)).equals(bytes.subarray(0, 64 * 1024))).toBe(true);
    const { read } = await drain(source, false);
    expect(read.equals(bytes)).toBe(true);
  });
});
