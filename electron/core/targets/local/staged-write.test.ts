// A staged write (StagedWriteOptions.beforeCommit): every file in a hidden temporary until
// the check passes, then in place, reported as an unstaged write would be; a failed check (or
// a cancel) leaves the destination exactly as it was.
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CancelledError, FerryError } from '../../errors.js';
import type { StagedWriteOptions } from '../../jobs/staged-write.js';
import { capabilitiesOf } from '../../capabilities.js';
import type { Entry } from '../../target.js';
import { encodeLocalId } from './ids.js';
import { LocalTarget } from './local-target.js';
import { ctx, entriesOf, tempDir, writeOptions } from './test-helpers.js';

/** Every name below `dir` (files and folders, hidden ones too), relative, sorted. */
async function names(dir: string): Promise<string[]> {
  return ((await readdir(dir, { recursive: true })) as string[]).map((name) => name.split(path.sep).join('/')).sort();
}

describe('LocalTarget staged writes', () => {
  let root: string;
  let cleanup: () => Promise<void>;
  let target: LocalTarget;

  beforeEach(async () => {
    ({ dir: root, cleanup } = await tempDir('staged'));
    await mkdir(path.join(root, 'Project'));
    await writeFile(path.join(root, 'Project', 'old.txt'), 'old');
    target = new LocalTarget({ root });
  });
  afterEach(() => cleanup());

  const big = Buffer.alloc(3 * 1024 * 1024, 7);
  const tree = { 'Run/': null, 'Run/a.txt': 'alpha', 'Run/sub/b.txt': 'bravo', 'Run/big.bin': big, 'old.txt': 'new' };

  it('says it stages', () => {
    expect(target.capabilities.stagedWrites).toBe(true);
    expect(capabilitiesOf(target).stagedWrites).toBe(true);
  });

  it('puts nothing in place before the check, everything after it, reported as an unstaged write', async () => {
    let seenDuringCheck: string[] = [];
    const options: StagedWriteOptions = {
      ...writeOptions('update'),
      beforeCommit: async () => {
        seenDuringCheck = await names(path.join(root, 'Project'));
      },
    };
    const outcome = await target.write(ctx(), encodeLocalId('Project'), entriesOf(tree, new Date('2020-01-02T03:04:05Z')), options);
    // during the check: folders made, files only as hidden temporaries, the old file untouched
    expect(seenDuringCheck.filter((name) => !/(^|\/)\.ferry-\d+-[0-9a-f]+\.part$/.test(name))).toEqual(['Run', 'Run/sub', 'old.txt']);
    expect(seenDuringCheck.filter((name) => name.endsWith('.part'))).toHaveLength(4);
    expect(outcome.created).toEqual(['Run', 'Run/a.txt', 'Run/sub', 'Run/sub/b.txt', 'Run/big.bin']);
    expect(outcome.updated).toEqual(['old.txt']);
    expect(outcome).toMatchObject({ ignored: [], fileErrors: [] });
    expect(await names(path.join(root, 'Project'))).toEqual(['Run', 'Run/a.txt', 'Run/big.bin', 'Run/sub', 'Run/sub/b.txt', 'old.txt']);
    expect(await readFile(path.join(root, 'Project', 'old.txt'), 'utf8')).toBe('new');
    expect((await readFile(path.join(root, 'Project', 'Run', 'big.bin'))).equals(big)).toBe(true);
    // the hash cache learned the written files, as for an unstaged write
    const detail = await target.detail(ctx(), encodeLocalId('Project/Run/a.txt'));
    expect(detail.hashes.md5).toBe('2c1743a391305fbf367df8e4f069f9f9');
  });

  it('puts many files in place as well (renamed in batches on the file workers), a folder in the way reported', async () => {
    // more than the few renamed on the event loop itself
    const many: Record<string, string | null> = { 'Many/': null };
    for (let i = 0; i < 40; i++) many[`Many/f${i}.txt`] = `file ${i}`;
    const options: StagedWriteOptions = {
      ...writeOptions('update'),
      beforeCommit: async () => {
        await mkdir(path.join(root, 'Project', 'Many', 'f7.txt'));
      },
    };
    const outcome = await target.write(ctx(), encodeLocalId('Project'), entriesOf(many), options);
    expect(outcome.fileErrors).toEqual([{ path: 'Many/f7.txt', error: "A folder 'Many/f7.txt' already exists where this file should go; it was left alone." }]);
    expect(outcome.created).toHaveLength(40);
    for (let i = 0; i < 40; i++) if (i !== 7) expect(await readFile(path.join(root, 'Project', 'Many', `f${i}.txt`), 'utf8')).toBe(`file ${i}`);
    expect((await names(path.join(root, 'Project', 'Many'))).filter((name) => name.endsWith('.part'))).toEqual([]);
  });

  it('a failed check leaves the destination exactly as it was (no temporaries, no new folders)', async () => {
    const before = await names(root);
    const options: StagedWriteOptions = {
      ...writeOptions('update'),
      beforeCommit: async () => {
        throw new FerryError(400, 'bad_bag', 'The uploaded bag is not valid, so nothing was written: test.');
      },
    };
    await expect(target.write(ctx(), encodeLocalId('Project'), entriesOf(tree), options)).rejects.toThrow(/nothing was written/);
    expect(await names(root)).toEqual(before);
    expect(await readFile(path.join(root, 'Project', 'old.txt'), 'utf8')).toBe('old');
  });

  it('a top-level staged write that fails leaves no new resource and no claim file', async () => {
    const before = await names(root);
    const options: StagedWriteOptions = { ...writeOptions('ignore'), beforeCommit: () => Promise.reject(new Error('no')) };
    await expect(target.write(ctx(), null, entriesOf({ 'Project/': null, 'Project/x.txt': 'x' }), options)).rejects.toThrow('no');
    expect(await names(root)).toEqual(before);
  });

  it('a cancel mid-write leaves nothing either', async () => {
    const controller = new AbortController();
    async function* entries(): AsyncGenerator<Entry> {
      yield* entriesOf({ 'Run/a.txt': 'alpha' });
      yield {
        path: 'Run/slow.bin',
        kind: 'file',
        size: 8 * 1024 * 1024,
        mtime: null,
        hashes: {},
        open: async () =>
          Readable.from(
            (async function* () {
              yield Buffer.alloc(1024 * 1024);
              controller.abort(new CancelledError());
              await new Promise((resolve) => setTimeout(resolve, 50));
              yield Buffer.alloc(1024 * 1024);
            })(),
          ),
      };
    }
    const before = await names(root);
    const options: StagedWriteOptions = { ...writeOptions('update', controller.signal), beforeCommit: async () => undefined };
    await expect(target.write(ctx(), encodeLocalId('Project'), entries(), options)).rejects.toBeInstanceOf(CancelledError);
    expect(await names(root)).toEqual(before);
  });

  it('writes a source that sends more than its stated (small) size whole', async () => {
    const bytes = Buffer.alloc(6 * 1024 * 1024, 1);
    async function* entries(): AsyncGenerator<Entry> {
      yield { path: 'liar.bin', kind: 'file', size: 10, mtime: null, hashes: {}, open: async () => Readable.from([bytes.subarray(0, 5 * 1024 * 1024), bytes.subarray(5 * 1024 * 1024)]) };
    }
    await target.write(ctx(), encodeLocalId('Project'), entries(), writeOptions('ignore'));
    expect((await readFile(path.join(root, 'Project', 'liar.bin'))).equals(bytes)).toBe(true);
  });
});
