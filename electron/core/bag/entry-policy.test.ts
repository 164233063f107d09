// The policy's table of folded paths (FoldedPaths) past its first size, and its folding.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../limits.js';
import { rawZip, type RawEntry } from '../zip/testing/raw-zip.js';
import { openUploadZip } from './upload-reader.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-policy-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function refusal(entries: RawEntry[]): Promise<string | null> {
  const file = path.join(dir, `${Math.random().toString(16).slice(2)}.zip`);
  await writeFile(file, rawZip(entries));
  try {
    await (await openUploadZip(file, DEFAULT_LIMITS)).close();
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

// 600 files in 600 folders: 1,200 paths, more than the first table holds at half load
const many: RawEntry[] = Array.from({ length: 600 }, (_, i) => ({ name: `d${i}/f.txt`, data: Buffer.from('x') }));

describe('duplicates and look-alikes, however many paths came before', () => {
  it('finds a repeat and a case look-alike after the table grew', async () => {
    expect(await refusal(many)).toBeNull();
    expect(await refusal([...many, { name: 'd599/f.txt', data: Buffer.from('y') }])).toBe('The ZIP holds "d599/f.txt" twice; each path may appear only once.');
    expect(await refusal([...many, { name: 'D7/extra.txt', data: Buffer.from('y') }])).toBe('The ZIP holds "d7" and "D7", names that differ only in case or Unicode form; rename one of them.');
  });

  it('folds Unicode as macOS and Windows do: NFC, lower case (the Kelvin sign is a K)', async () => {
    expect(await refusal([{ name: 'a/k.txt', data: Buffer.from('x') }, { name: 'a/\u212A.txt', data: Buffer.from('y') }])).toMatch(/differ only in case or Unicode form/);
    expect(await refusal([{ name: 'caf\u00e9', data: Buffer.from('x') }, { name: 'cafe\u0301', data: Buffer.from('y') }])).toMatch(/differ only in case or Unicode form/);
    // letters only: '@' and '`' differ by the case bit, but are not one name
    expect(await refusal([{ name: 'a@', data: Buffer.from('x') }, { name: 'a`', data: Buffer.from('y') }])).toBeNull();
  });
});
