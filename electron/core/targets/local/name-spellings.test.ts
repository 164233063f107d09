// Names that differ only in case ('README.md' / 'readme.md') or Unicode normalisation
// ('é' as NFC / NFD). On Linux they are different files and both must be kept. On a disk
// that ignores case or normalisation (macOS, Windows), the new name finds the old file:
// nothing may be silently replaced. Linux has no such disk without root (a casefold ext4
// or a vfat mount), so that disk is simulated: node:fs/promises is wrapped so that, below the
// test's workspace, a path resolves to the stored name that folds to the same (as APFS/NTFS).

import { lstat as realLstat, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { encodeLocalId } from './ids.js';
import { LocalTarget } from './local-target.js';
import { ctx, entriesOf, tempDir, writeOptions } from './test-helpers.js';

const simulated = vi.hoisted(() => ({ root: null as string | null }));

vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs/promises')>();
  const fold = (name: string) => name.normalize('NFC').toLowerCase();
  /** The path as a case- and normalisation-insensitive disk would find it (stored spellings). */
  async function resolve(target: unknown): Promise<string> {
    const wanted = String(target);
    const root = simulated.root;
    if (root === null || !wanted.startsWith(`${root}${path.sep}`)) return wanted;
    let current = root;
    const segments = wanted.slice(root.length + 1).split(path.sep);
    for (let i = 0; i < segments.length; i++) {
      const segment = segments[i]!;
      let names: string[];
      try {
        names = await real.readdir(current);
      } catch {
        return path.join(current, ...segments.slice(i));
      }
      const stored = names.includes(segment) ? segment : names.find((name) => fold(name) === fold(segment));
      current = path.join(current, stored ?? segment);
      if (stored === undefined) return path.join(current, ...segments.slice(i + 1));
    }
    return current;
  }
  const wrapped = {
    ...real,
    lstat: (async (target: string, options?: object) => real.lstat(await resolve(target), options as never)) as typeof real.lstat,
    stat: (async (target: string, options?: object) => real.stat(await resolve(target), options as never)) as typeof real.stat,
    open: (async (target: string, ...rest: unknown[]) => real.open(await resolve(target), ...(rest as [never]))) as typeof real.open,
    mkdir: (async (target: string, options?: object) => {
      const found = await resolve(target);
      if (found !== String(target)) {
        const exists = await real.lstat(found).then(() => true, () => false);
        if (exists) throw Object.assign(new Error(`EEXIST: file already exists, mkdir`), { code: 'EEXIST' });
      }
      return real.mkdir(found, options as never);
    }) as typeof real.mkdir,
    // replacing 'readme.md' by a rename onto 'README.md' keeps the stored name, as APFS does
    rename: (async (from: string, to: string) => real.rename(await resolve(from), await resolve(to))) as typeof real.rename,
  };
  return { ...wrapped, default: wrapped };
});

const NFC = 'caf\u00e9.txt';
const NFD = 'cafe\u0301.txt';

let root: string;
let cleanup: () => Promise<void>;
let target: LocalTarget;

beforeEach(async () => {
  const workspace = await tempDir('spellings');
  root = workspace.dir;
  cleanup = workspace.cleanup;
  await mkdir(path.join(root, 'Project', 'Run'), { recursive: true });
  await writeFile(path.join(root, 'Project', 'Run', 'readme.md'), 'old lower-case readme');
  await writeFile(path.join(root, 'Project', 'Run', NFD), 'old NFD');
  await mkdir(path.join(root, 'Project', 'Run', 'data'));
  await writeFile(path.join(root, 'Project', 'Run', 'data', 'x.txt'), 'old x');
  target = new LocalTarget({ root });
});

afterEach(async () => {
  simulated.root = null;
  await cleanup();
});

/** True when the real disk under `dir` tells 'A' and 'a' apart (Linux, usually). */
async function caseSensitive(dir: string): Promise<boolean> {
  await writeFile(path.join(dir, 'probe-A'), '');
  return realLstat(path.join(dir, 'probe-a')).then(() => false, () => true);
}

describe('names differing only in case or normalisation', () => {
  it('on a disk that tells them apart (Linux), both are kept: README.md beside readme.md, NFC beside NFD', async (context) => {
    if (!(await caseSensitive(root))) {
      console.log('skipped: this disk ignores case, so README.md and readme.md cannot both exist here (the simulated test below covers it)');
      context.skip();
    }
    for (const action of ['update', 'ignore'] as const) {
      const tree = { 'Run/README.md': `new README (${action})`, [`Run/${NFC}`]: `new NFC (${action})` };
      const outcome = await target.write(ctx(), encodeLocalId('Project'), entriesOf(tree), writeOptions(action));
      expect(outcome.fileErrors).toEqual([]);
      const run = path.join(root, 'Project', 'Run');
      expect(await readFile(path.join(run, 'readme.md'), 'utf8')).toBe('old lower-case readme');
      expect(await readFile(path.join(run, NFD), 'utf8')).toBe('old NFD');
      expect((await readdir(run)).sort()).toEqual(['README.md', 'data', 'readme.md', NFD, NFC].sort());
    }
  });

  it.each(['update', 'ignore'] as const)('on a case-insensitive disk (simulated), a new spelling is a per-file error, never a replacement (%s)', async (action) => {
    simulated.root = root;
    const tree = { 'Run/README.md': 'new README', [`Run/${NFC}`]: 'new NFC', 'Run/Data/x.txt': 'new x', 'Run/other.txt': 'fine' };
    const outcome = await target.write(ctx(), encodeLocalId('Project'), entriesOf(tree), writeOptions(action));
    simulated.root = null;
    // the folder 'Data' (taken by 'data') is reported for the file that needed it
    expect(outcome.fileErrors.map((error) => error.path).sort()).toEqual(['Run/Data/x.txt', 'Run/README.md', `Run/${NFC}`].sort());
    expect(outcome.fileErrors.find((error) => error.path === 'Run/Data/x.txt')?.error).toMatch(/'Run\/Data'.*taken by 'data'/);
    expect(outcome.fileErrors.find((error) => error.path === 'Run/README.md')?.error).toMatch(/taken by 'readme\.md'.*left alone/);
    expect(outcome.created).toEqual(['Run/other.txt']);
    expect(outcome.updated).toEqual([]);
    const run = path.join(root, 'Project', 'Run');
    expect(await readFile(path.join(run, 'readme.md'), 'utf8')).toBe('old lower-case readme');
    expect(await readFile(path.join(run, NFD), 'utf8')).toBe('old NFD');
    expect(await readFile(path.join(run, 'data', 'x.txt'), 'utf8')).toBe('old x');
    expect((await readdir(run)).sort()).toEqual(['data', 'other.txt', 'readme.md', NFD].sort());
  });

  it('two spellings in one upload are refused before anything is written (plan/write-plan.ts)', async () => {
    const before = await readdir(path.join(root, 'Project'));
    const lookAlikes: Record<string, string>[] = [{ 'Fresh/notes.txt': 'first', 'Fresh/NOTES.txt': 'second' }, { [`Fresh/${NFD}`]: 'first é', [`Fresh/${NFC}`]: 'second é' }];
    for (const twins of lookAlikes) {
      await expect(target.write(ctx(), encodeLocalId('Project'), entriesOf({ 'Fresh/': null, ...twins }), writeOptions('update'))).rejects.toMatchObject({
        status: 400,
        message: expect.stringContaining('differ only in case or Unicode form'),
      });
    }
    expect(await readdir(path.join(root, 'Project'))).toEqual(before);
  });

  it('the simulation is faithful: without Ferry checking, a rename onto the other spelling replaces the stored file', async () => {
    simulated.root = root;
    const fs = await import('node:fs/promises');
    const run = path.join(root, 'Project', 'Run');
    await writeFile(path.join(run, 'tmp'), 'replaced');
    await fs.rename(path.join(run, 'tmp'), path.join(run, 'README.md'));
    expect((await fs.lstat(path.join(run, 'README.MD'))).isFile()).toBe(true);
    await expect(fs.mkdir(path.join(run, 'DATA'))).rejects.toMatchObject({ code: 'EEXIST' });
    simulated.root = null;
    expect(await readFile(path.join(run, 'readme.md'), 'utf8')).toBe('replaced');
  });
});
