import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DestinationTaken, renameNoReplace } from './no-replace.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-noreplace-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

describe('renameNoReplace', () => {
  it('renames a file and a folder to free names', async () => {
    await writeFile(path.join(dir, 'a.txt'), 'a');
    await mkdir(path.join(dir, 'F'));
    await writeFile(path.join(dir, 'F', 'in.txt'), 'in');
    await renameNoReplace(path.join(dir, 'a.txt'), path.join(dir, 'b.txt'));
    await renameNoReplace(path.join(dir, 'F'), path.join(dir, 'G'));
    expect((await readdir(dir)).sort()).toEqual(['G', 'b.txt']);
    expect(await readFile(path.join(dir, 'G', 'in.txt'), 'utf8')).toBe('in');
  });

  it('never replaces a file, nor a folder, not even an empty one (which rename(2) would)', async () => {
    await writeFile(path.join(dir, 'a.txt'), 'a');
    await writeFile(path.join(dir, 'b.txt'), 'b');
    await mkdir(path.join(dir, 'F'));
    await mkdir(path.join(dir, 'Empty'));
    await expect(renameNoReplace(path.join(dir, 'a.txt'), path.join(dir, 'b.txt'))).rejects.toBeInstanceOf(DestinationTaken);
    await expect(renameNoReplace(path.join(dir, 'F'), path.join(dir, 'Empty'))).rejects.toBeInstanceOf(DestinationTaken);
    await expect(renameNoReplace(path.join(dir, 'a.txt'), path.join(dir, 'Empty'))).rejects.toBeInstanceOf(DestinationTaken);
    expect(await readFile(path.join(dir, 'b.txt'), 'utf8')).toBe('b');
    expect((await readdir(dir)).sort()).toEqual(['Empty', 'F', 'a.txt', 'b.txt']);
  });
});
