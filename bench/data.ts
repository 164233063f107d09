import { createCipheriv, createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { seededRandom as prng } from '../test/support/seeded-random.js';

// Seeded benchmark data: the same seed gives the same bytes on every machine, so two runs
// (or two machines) compare like with like.

/** A deterministic byte stream that does not compress (AES-CTR over zeros, seeded). */
export function incompressibleStream(seed: string, bytes: number): Readable {
  const key = createHash('sha256').update(`key:${seed}`).digest().subarray(0, 16);
  const iv = createHash('sha256').update(`iv:${seed}`).digest().subarray(0, 16);
  const cipher = createCipheriv('aes-128-ctr', key, iv);
  const zeros = Buffer.alloc(1024 * 1024);
  let left = bytes;
  return new Readable({
    read() {
      if (left <= 0) return this.push(null);
      const n = Math.min(left, zeros.length);
      left -= n;
      this.push(cipher.update(zeros.subarray(0, n)));
    },
  });
}

export async function writeIncompressible(file: string, seed: string, bytes: number): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await pipeline(incompressibleStream(seed, bytes), createWriteStream(file));
}


const WORDS = 'sample measurement temperature station depth salinity survey participant response interval baseline control treatment replicate observation analysis'.split(' ');

/** A CSV-ish text file: compresses well, like most research text data. */
export function textFile(random: () => number, bytes: number): Buffer {
  const lines: string[] = ['id,site,variable,value,note'];
  let size = lines[0]!.length + 1;
  for (let i = 0; size < bytes; i++) {
    const line = `${i},${WORDS[Math.floor(random() * WORDS.length)]},${WORDS[Math.floor(random() * WORDS.length)]},${(random() * 1000).toFixed(3)},${WORDS[Math.floor(random() * WORDS.length)]}`;
    lines.push(line);
    size += line.length + 1;
  }
  return Buffer.from(`${lines.join('\n')}\n`).subarray(0, bytes);
}

export interface MixedFolderSpec {
  textFiles: number;
  /** text file sizes are drawn between 1 KiB and this */
  maxTextBytes: number;
  binaries: number;
  binaryBytes: number;
}

/** Thousands of small compressible text files plus a few large incompressible binaries. */
export async function makeMixedFolder(root: string, spec: MixedFolderSpec, seed = 42): Promise<number> {
  const random = prng(seed);
  let total = 0;
  for (let i = 0; i < spec.textFiles; i++) {
    const bytes = 1024 + Math.floor(random() * (spec.maxTextBytes - 1024));
    const file = path.join(root, `site-${String(i % 20).padStart(2, '0')}`, `table-${String(i).padStart(5, '0')}.csv`);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, textFile(random, bytes));
    total += bytes;
  }
  for (let i = 0; i < spec.binaries; i++) {
    await writeIncompressible(path.join(root, 'raw', `scan-${i}.bin`), `mixed-${seed}-${i}`, spec.binaryBytes);
    total += spec.binaryBytes;
  }
  return total;
}

export async function makeIncompressibleFolder(root: string, files: number, bytesEach: number, seed = 7): Promise<number> {
  for (let i = 0; i < files; i++) await writeIncompressible(path.join(root, `block-${i}.bin`), `incompressible-${seed}-${i}`, bytesEach);
  return files * bytesEach;
}

/** Many empty files in 100 folders, for listing. */
export async function makeManyFiles(root: string, count: number): Promise<void> {
  for (let d = 0; d < 100; d++) await mkdir(path.join(root, `d${String(d).padStart(2, '0')}`), { recursive: true });
  const batch: Promise<void>[] = [];
  for (let i = 0; i < count; i++) {
    batch.push(writeFile(path.join(root, `d${String(i % 100).padStart(2, '0')}`, `f${i}.txt`), ''));
    if (batch.length >= 256) await Promise.all(batch.splice(0));
  }
  await Promise.all(batch);
}
