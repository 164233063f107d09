import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { mkdir, readdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CancelledError, FerryError } from '../../errors.js';
import type { Entry } from '../../target.js';
import type { StagedWriteOptions } from '../../jobs/staged-write.js';
import { withPlanOf } from '../../../../test/target-suite/test-entries.js';
import { encodeLocalId } from './ids.js';
import { LocalTarget } from './local-target.js';
import { claimFileName, LARGE_FILES_IN_FLIGHT } from './writer.js';
import { collect, ctx, entriesOf, tempDir, writeOptions } from './test-helpers.js';

/** Every file below `dir`, relative, with its content. */
async function snapshot(dir: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for (const name of (await readdir(dir, { recursive: true, withFileTypes: true })) as import('node:fs').Dirent[]) {
    if (!name.isFile()) continue;
    const absolute = path.join(name.parentPath, name.name);
    files[path.relative(dir, absolute).split(path.sep).join('/')] = await readFile(absolute, 'utf8');
  }
  return files;
}

async function partFiles(dir: string): Promise<string[]> {
  return ((await readdir(dir, { recursive: true })) as string[]).filter((name) => name.endsWith('.part'));
}

const runFolder: Entry = { path: 'Run', kind: 'folder', size: null, mtime: null, hashes: {}, open: () => Promise.reject(new Error('folder')) };

const bigFile = (i: number) => Buffer.alloc(2 * 1024 * 1024, `large-${i} `);

/** A large file from a source that reads entries independently: its first KiB at once, the rest once `mayEnd()` settles. */
function largeEntry(entryPath: string, bytes: Buffer, mayEnd: () => Promise<unknown>, told: { onOpen?: () => void; onEnd?: () => void } = {}): Entry {
  return {
    path: entryPath,
    kind: 'file',
    size: bytes.length,
    mtime: null,
    hashes: {},
    opensIndependently: true,
    open: async () => {
      told.onOpen?.();
      return Readable.from((async function* () {
        yield bytes.subarray(0, 1024);
        await mayEnd();
        yield bytes.subarray(1024);
        told.onEnd?.();
      })());
    },
  };
}

/** `Run/s<i>.txt`, two bytes; `onOpen` is told when the writer opens it. */
function smallEntry(i: number, onOpen: () => void): Entry {
  return {
    path: `Run/s${i}.txt`,
    kind: 'file',
    size: 2,
    mtime: null,
    hashes: {},
    open: async () => {
      onOpen();
      return Readable.from([Buffer.from(`s${i}`)]);
    },
  };
}

/** A promise settled by `settle()`, or after `timeoutMs` when given (what a test waits for may then never come: it fails on what it saw instead of hanging). */
function settledBy(timeoutMs?: number): { settled: () => Promise<void>; settle: () => void } {
  let settle!: () => void;
  const promise = new Promise<void>((resolve) => {
    settle = resolve;
    if (timeoutMs !== undefined) setTimeout(resolve, timeoutMs).unref();
  });
  return { settled: () => promise, settle };
}

describe('LocalTarget writing', () => {
  let root: string;
  let cleanups: (() => Promise<void>)[];
  let target: LocalTarget;

  beforeEach(async () => {
    const workspace = await tempDir('write');
    root = workspace.dir;
    cleanups = [workspace.cleanup];
    await mkdir(path.join(root, 'Project'));
    target = new LocalTarget({ root });
  });

  afterEach(async () => {
    for (const cleanup of cleanups) await cleanup();
  });

  const tree = { 'Run/': null, 'Run/a.txt': 'alpha', 'Run/sub/b.txt': 'bravo', 'Run/empty/': null };

  it('creates folders and files inside a container and reports them', async () => {
    const outcome = await target.write(ctx(), encodeLocalId('Project'), entriesOf(tree), writeOptions('ignore'));
    expect(outcome.created).toEqual(['Run', 'Run/a.txt', 'Run/sub', 'Run/sub/b.txt', 'Run/empty']);
    expect(outcome).toMatchObject({ updated: [], ignored: [], fileErrors: [] });
    expect(outcome.newResource).toBeUndefined();
    expect(await snapshot(path.join(root, 'Project'))).toEqual({ 'Run/a.txt': 'alpha', 'Run/sub/b.txt': 'bravo' });
    expect((await stat(path.join(root, 'Project', 'Run', 'empty'))).isDirectory()).toBe(true);
    expect(await partFiles(root)).toEqual([]);
  });

  it('tells the job the files it put in place only when it stops short, by the entries\' own paths, also when the top folder gets another name', async () => {
    const heard: string[] = [];
    const made: { id: string; title: string }[] = [];
    const listening = (signal: AbortSignal) => ({
      ...writeOptions('update', signal),
      onFileWritten: (written: string) => heard.push(written),
      onNewResource: (resource: { id: string; title: string }) => made.push(resource),
    });
    /** A write of `tree` cancelled once its entries are all handed over (planned first, as a job does, so the writer streams them). */
    async function cancelledWrite(containerId: string | null, tree: Record<string, string | null>): Promise<void> {
      const controller = new AbortController();
      const last = Object.keys(tree).at(-1)!.replace(/\/[^/]*$/, '/never.txt');
      async function* entries(): AsyncGenerator<Entry> {
        yield* entriesOf(tree);
        controller.abort();
        yield* entriesOf({ [last]: 'x' });
      }
      const options = await withPlanOf(target, containerId, entriesOf({ ...tree, [last]: 'x' }), listening(controller.signal));
      await expect(target.write(ctx(), containerId, entries(), options)).rejects.toBeInstanceOf(CancelledError);
    }
    // a write that succeeds tells nothing: its job ends and removes its journal (durable-marks.ts)
    await target.write(ctx(), encodeLocalId('Project'), entriesOf(tree), listening(new AbortController().signal));
    expect(heard).toEqual([]);
    // stopped short: each file in place is told (after its barrier), found identical ones too
    await cancelledWrite(encodeLocalId('Project'), { ...tree, 'Run/c.txt': 'charlie' });
    expect(heard.sort()).toEqual(['Run/a.txt', 'Run/c.txt', 'Run/sub/b.txt']);
    // a top-level write into 'Project (2)': still the entries' paths, which the journal keys on
    heard.length = 0;
    await cancelledWrite(null, { 'Project/': null, 'Project/c.txt': 'charlie' });
    expect(heard).toEqual(['Project/c.txt']);
    // the new folder is told as soon as it is made, so a resumed job goes on in it
    expect(made).toEqual([{ id: encodeLocalId('Project (2)'), title: 'Project (2)' }]);
    expect(await readFile(path.join(root, 'Project (2)', 'c.txt'), 'utf8')).toBe('charlie');
    // a staged write that does not commit put nothing in place, and tells nothing
    heard.length = 0;
    const staged: StagedWriteOptions = {
      ...listening(new AbortController().signal),
      beforeCommit: () => Promise.reject(new Error('a manifest does not match')),
    };
    await expect(target.write(ctx(), encodeLocalId('Project'), entriesOf({ 'Staged/': null, 'Staged/d.txt': 'delta' }), staged)).rejects.toThrow('a manifest does not match');
    expect(heard).toEqual([]);
  });

  it('ignore leaves existing files untouched, even when their bytes differ', async () => {
    await target.write(ctx(), encodeLocalId('Project'), entriesOf(tree), writeOptions('ignore'));
    const changed = { ...tree, 'Run/a.txt': 'ALPHA CHANGED' };
    const outcome = await target.write(ctx(), encodeLocalId('Project'), entriesOf(changed), writeOptions('ignore'));
    expect(outcome).toMatchObject({ created: [], updated: [], fileErrors: [] });
    expect(outcome.ignored.sort()).toEqual(['Run/a.txt', 'Run/sub/b.txt']);
    expect(await readFile(path.join(root, 'Project', 'Run', 'a.txt'), 'utf8')).toBe('alpha');
  });

  it('update replaces only files whose bytes differ; identical ones are ignored', async () => {
    await target.write(ctx(), encodeLocalId('Project'), entriesOf(tree), writeOptions('update'));
    const before = await stat(path.join(root, 'Project', 'Run', 'sub', 'b.txt'));
    // Same size, different bytes: a size check alone would miss it.
    const changed = { ...tree, 'Run/a.txt': 'ALPHA', 'Run/new.txt': 'new' };
    const outcome = await target.write(ctx(), encodeLocalId('Project'), entriesOf(changed), writeOptions('update'));
    expect(outcome).toMatchObject({ created: ['Run/new.txt'], updated: ['Run/a.txt'], ignored: ['Run/sub/b.txt'], fileErrors: [] });
    expect(await snapshot(path.join(root, 'Project'))).toEqual({ 'Run/a.txt': 'ALPHA', 'Run/sub/b.txt': 'bravo', 'Run/new.txt': 'new' });
    const after = await stat(path.join(root, 'Project', 'Run', 'sub', 'b.txt'));
    expect(after.ino).toBe(before.ino);
    expect(after.mtimeMs).toBe(before.mtimeMs);
    expect(await partFiles(root)).toEqual([]);
    // the write's record of each file it put in place (WriteOutcome.stored): its size on disk, the digests of what it wrote
    const md5 = (text: string) => createHash('md5').update(text).digest('hex');
    expect([...(outcome.stored ?? [])].map(([file, record]) => [file, 'hashes' in record && record.hashes.md5, 'size' in record && record.size, 'hashedAsWritten' in record && record.hashedAsWritten]).sort()).toEqual([
      ['Run/a.txt', md5('ALPHA'), 5, true],
      ['Run/new.txt', md5('new'), 3, true],
    ]);
  });

  it('compares with cached hashes after a write, without re-reading the existing file', async () => {
    await target.write(ctx(), encodeLocalId('Project'), entriesOf(tree), writeOptions('update'));
    const computations = target.hashCache.computations;
    const outcome = await target.write(ctx(), encodeLocalId('Project'), entriesOf(tree), writeOptions('update'));
    expect(outcome.ignored.sort()).toEqual(['Run/a.txt', 'Run/sub/b.txt']);
    expect(target.hashCache.computations).toBe(computations);
    // The hashes a write computed answer detail too.
    const detail = await target.detail(ctx(), encodeLocalId('Project/Run/a.txt'));
    expect(detail.hashes.md5).toBe('2c1743a391305fbf367df8e4f069f9f9');
    expect(target.hashCache.computations).toBe(computations);
  });

  it('sets file mtimes from the entries', async () => {
    const mtime = new Date('2020-02-29T12:34:56.789Z');
    await target.write(ctx(), encodeLocalId('Project'), entriesOf(tree, mtime), writeOptions('ignore'));
    expect((await stat(path.join(root, 'Project', 'Run', 'a.txt'))).mtime.toISOString()).toBe(mtime.toISOString());
    expect((await stat(path.join(root, 'Project', 'Run', 'empty'))).mtime.toISOString()).toBe(mtime.toISOString());
  });

  it('reports a file where a folder exists, and a folder where a file exists, per file', async () => {
    await mkdir(path.join(root, 'Project', 'Run', 'a.txt'), { recursive: true });
    await writeFile(path.join(root, 'Project', 'Run', 'sub'), 'i am a file');
    const outcome = await target.write(ctx(), encodeLocalId('Project'), entriesOf(tree), writeOptions('update'));
    expect(outcome.fileErrors.map((error) => error.path)).toEqual(['Run/a.txt', 'Run/sub/b.txt']);
    for (const { error } of outcome.fileErrors) expect(error).not.toContain(root);
    expect(outcome.created).toEqual(['Run/empty']);
    expect(await readFile(path.join(root, 'Project', 'Run', 'sub'), 'utf8')).toBe('i am a file');
  });

  it('reports a name the disk cannot hold per file, without an absolute path, and goes on', async () => {
    const long = `${'x'.repeat(300)}.txt`;
    const outcome = await target.write(ctx(), encodeLocalId('Project'), entriesOf({ [long]: 'x', 'ok.txt': 'ok' }), writeOptions('ignore'));
    expect(outcome.created).toEqual(['ok.txt']);
    expect(outcome.fileErrors).toHaveLength(1);
    expect(outcome.fileErrors[0]!.path).toBe(long);
    expect(outcome.fileErrors[0]!.error).toMatch(/too long/);
    expect(outcome.fileErrors[0]!.error).not.toContain(root);
  });

  it('creates a new top-level folder, picking a distinct name when it is taken', async () => {
    const first = await target.write(ctx(), null, entriesOf(tree), writeOptions('ignore'));
    expect(first.newResource).toEqual({ id: encodeLocalId('Run'), title: 'Run' });
    const second = await target.write(ctx(), null, entriesOf(tree), writeOptions('ignore'));
    expect(second.newResource).toEqual({ id: encodeLocalId('Run (2)'), title: 'Run (2)' });
    expect(second.created).toEqual(['Run (2)', 'Run (2)/a.txt', 'Run (2)/sub', 'Run (2)/sub/b.txt', 'Run (2)/empty']);
    const third = await target.write(ctx(), null, entriesOf({ 'Run/x.txt': 'x' }), writeOptions('update'));
    expect(third.newResource?.title).toBe('Run (3)');
    expect(await snapshot(path.join(root, 'Run (3)'))).toEqual({ 'x.txt': 'x' });
    const top = await collect(target.list(ctx(), { container: null }));
    expect(top.map((node) => node.title)).toEqual(['Project', 'Run', 'Run (2)', 'Run (3)']);
  });

  it('refuses a single top-level file: a new top-level resource is made from one folder (plan/write-plan.ts)', async () => {
    await writeFile(path.join(root, 'report.pdf'), 'old');
    const before = await snapshot(root);
    const error = await target.write(ctx(), null, entriesOf({ 'report.pdf': 'new' }), writeOptions('ignore')).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ status: 400, message: expect.stringContaining('needs one top-level folder') });
    expect(await snapshot(root)).toEqual(before);
  });

  it('refuses a top-level write with two top folders, writing nothing', async () => {
    const before = await snapshot(root);
    const error = await target.write(ctx(), null, entriesOf({ 'A/x.txt': 'x', 'B/y.txt': 'y' }), writeOptions('ignore')).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ status: 400, message: expect.stringContaining('exactly one top-level folder') });
    expect(await snapshot(root)).toEqual(before);
    expect(await readdir(root)).not.toContain('A');
  });

  it('refuses unsafe paths before writing them', async () => {
    for (const bad of ['../escape.txt', 'Run/../../escape.txt', '/abs.txt', 'nul\0.txt', 'C:/drive.txt', 'a\\..\\b.txt']) {
      const error = await target.write(ctx(), encodeLocalId('Project'), entriesOf({ [bad]: 'x' }), writeOptions('ignore')).then(
        () => null,
        (caught: unknown) => caught,
      );
      expect(error, bad).toBeInstanceOf(FerryError);
      expect((error as FerryError).status).toBe(400);
    }
    expect(await readdir(path.dirname(root))).not.toContain('escape.txt');
  });

  it('never writes through a symlink at the destination', async () => {
    const elsewhere = await tempDir('write-outside');
    cleanups.push(elsewhere.cleanup);
    await writeFile(path.join(elsewhere.dir, 'victim.txt'), 'original');
    await symlink(path.join(elsewhere.dir, 'victim.txt'), path.join(root, 'Project', 'victim.txt'));
    await symlink(elsewhere.dir, path.join(root, 'Project', 'linkdir'));
    const outcome = await target.write(
      ctx(),
      encodeLocalId('Project'),
      entriesOf({ 'victim.txt': 'overwritten', 'linkdir/planted.txt': 'planted' }),
      writeOptions('update'),
    );
    expect(outcome.fileErrors.map((error) => error.path)).toEqual(['victim.txt', 'linkdir/planted.txt']);
    expect(await snapshot(elsewhere.dir)).toEqual({ 'victim.txt': 'original' });
  });

  it('refuses to write into a file, a symlink or an unknown container', async () => {
    await writeFile(path.join(root, 'file.txt'), 'x');
    for (const id of [encodeLocalId('file.txt'), encodeLocalId('Missing'), 'not-an-id']) {
      const error = await target.write(ctx(), id, entriesOf(tree), writeOptions('ignore')).then(
        () => null,
        (caught: unknown) => caught,
      );
      expect((error as FerryError).status).toBe(404);
    }
  });

  it('an abort mid-file leaves no temporary file and the old bytes intact', async () => {
    await writeFile(path.join(root, 'Project', 'big.bin'), 'old bytes');
    const controller = new AbortController();
    async function* entries(): AsyncGenerator<Entry> {
      yield {
        path: 'big.bin',
        kind: 'file',
        size: null,
        mtime: null,
        hashes: {},
        open: async () =>
          Readable.from(
            (async function* () {
              yield Buffer.alloc(64 * 1024, 1);
              controller.abort();
              // Never ends by itself: only the abort can stop this write.
              await new Promise(() => undefined);
            })(),
          ),
      };
    }
    const error = await target.write(ctx(), encodeLocalId('Project'), entries(), writeOptions('update', controller.signal)).then(
      () => null,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(CancelledError);
    expect(await readFile(path.join(root, 'Project', 'big.bin'), 'utf8')).toBe('old bytes');
    expect(await partFiles(root)).toEqual([]);
  });

  it('removes temporary files a crashed process left in a folder it writes into', async () => {
    const dead = spawnSync(process.execPath, ['-e', '0']).pid as number;
    const orphan = `.ferry-${dead}-0123456789abcdef.part`;
    const ours = `.ferry-${process.pid}-fedcba9876543210.part`;
    await writeFile(path.join(root, 'Project', orphan), 'half a file');
    await writeFile(path.join(root, 'Project', ours), 'being written by this process');
    await target.write(ctx(), encodeLocalId('Project'), entriesOf({ 'new.txt': 'n' }), writeOptions('ignore'));
    const names = await readdir(path.join(root, 'Project'));
    expect(names).not.toContain(orphan);
    expect(names).toContain(ours);
    expect((await collect(target.list(ctx(), { container: encodeLocalId('Project') }))).map((node) => node.title)).toEqual(['new.txt']);
  });

  it('a failing source leaves no temporary file', async () => {
    async function* entries(): AsyncGenerator<Entry> {
      yield {
        path: 'broken.bin',
        kind: 'file',
        size: null,
        mtime: null,
        hashes: {},
        open: async () =>
          Readable.from(
            (async function* () {
              yield Buffer.from('some');
              throw new Error('source went away');
            })(),
          ),
      };
    }
    await expect(target.write(ctx(), encodeLocalId('Project'), entries(), writeOptions('update'))).rejects.toThrow('source went away');
    expect(await readdir(path.join(root, 'Project'))).toEqual([]);
  });

  it('stops between entries once aborted', async () => {
    const controller = new AbortController();
    async function* entries(): AsyncGenerator<Entry> {
      yield* entriesOf({ 'one.txt': '1' });
      controller.abort();
      yield* entriesOf({ 'two.txt': '2' });
    }
    // planned first, as a job does, so the writer streams the entries it is handed
    const options = await withPlanOf(target, encodeLocalId('Project'), entriesOf({ 'one.txt': '1', 'two.txt': '2' }), writeOptions('ignore', controller.signal));
    await expect(target.write(ctx(), encodeLocalId('Project'), entries(), options)).rejects.toBeInstanceOf(CancelledError);
    expect(await readdir(path.join(root, 'Project'))).toEqual(['one.txt']);
  });

  it('transfers a folder between two local targets: read → write round trip', async () => {
    const other = await tempDir('write-dest');
    cleanups.push(other.cleanup);
    await target.write(ctx(), encodeLocalId('Project'), entriesOf({ ...tree, 'Run/café #1?.txt': 'unicode' }, new Date('2021-01-01T00:00:00Z')), writeOptions('ignore'));
    const destination = new LocalTarget({ root: other.dir });
    const read = await target.read(ctx(), encodeLocalId('Project/Run'));
    const outcome = await destination.write(ctx(), null, read.entries, writeOptions('ignore'));
    expect(outcome.newResource).toEqual({ id: encodeLocalId('Run'), title: 'Run' });
    expect(await snapshot(other.dir)).toEqual({ 'Run/a.txt': 'alpha', 'Run/sub/b.txt': 'bravo', 'Run/café #1?.txt': 'unicode' });
    expect((await stat(path.join(other.dir, 'Run', 'empty'))).isDirectory()).toBe(true);
    expect((await stat(path.join(other.dir, 'Run', 'a.txt'))).mtime.toISOString()).toBe('2021-01-01T00:00:00.000Z');
    const sourceDetail = await target.detail(ctx(), encodeLocalId('Project/Run/sub/b.txt'));
    const destinationDetail = await destination.detail(ctx(), encodeLocalId('Run/sub/b.txt'));
    expect(destinationDetail.hashes).toEqual(sourceDetail.hashes);
    // Into an existing folder: the first transfer creates, a second one with update changes nothing.
    await mkdir(path.join(other.dir, 'Backup'));
    const into = async () => destination.write(ctx(), encodeLocalId('Backup'), (await target.read(ctx(), encodeLocalId('Project/Run'))).entries, writeOptions('update'));
    expect((await into()).created).toHaveLength(6);
    const again = await into();
    expect(again).toMatchObject({ created: [], updated: [], fileErrors: [] });
    expect(again.ignored).toHaveLength(3);
  });
  it('a top-level write the same job runs again (resumed after a crash) continues in the folder it claimed', async () => {
    // The first run dies part-way (the process was killed: the entries stop coming).
    // planned first, as a job does, so the writer streams the entries it is handed
    const options = await withPlanOf(target, null, entriesOf(tree), { ...writeOptions('update'), jobLabel: 'Ferry upload 0b7e-resumed' });
    async function* cutOff(): AsyncGenerator<Entry> {
      let given = 0;
      for await (const entry of entriesOf(tree)) {
        if (given++ === 2) throw new CancelledError();
        yield entry;
      }
    }
    await expect(target.write(ctx(), null, cutOff(), options)).rejects.toThrow(CancelledError);
    expect((await readdir(root)).filter((name) => !name.startsWith('.'))).toEqual(['Project', 'Run']);
    // nothing hidden Ferry keeps for the resume shows through the API
    const listed = (await collect(target.list(ctx(), { container: null }))).map((node) => node.title);
    expect(listed).toEqual(['Project', 'Run']);

    const resumed = await target.write(ctx(), null, entriesOf(tree), options);
    expect(resumed.newResource).toEqual({ id: encodeLocalId('Run'), title: 'Run' });
    expect(resumed.created).toContain('Run');
    expect((await readdir(root)).filter((name) => !name.startsWith('.'))).toEqual(['Project', 'Run']);
    expect(await snapshot(path.join(root, 'Run'))).toEqual({ 'a.txt': 'alpha', 'sub/b.txt': 'bravo' });
    // finished: the claim is gone, so the same label (or another job) gets a distinct name next time
    expect(await readdir(root)).toEqual(['Project', 'Run']);
    const other = await target.write(ctx(), null, entriesOf(tree), options);
    expect(other.newResource?.title).toBe('Run (2)');
  });

  it('a crash between a name tried and its mkdir never makes a resumed run write into a folder that was there before', async () => {
    // The first run tried 'Project' (the user's own folder: its mkdir failed) and was killed
    // before it tried the next name: its claim names 'Project', not marked made.
    const label = { ...writeOptions('update'), jobLabel: 'Ferry upload 0b7e-tried' };
    const project = () => entriesOf({ 'Project/notes.txt': 'from the upload' });
    const options = await withPlanOf(target, null, project(), label);
    await writeFile(path.join(root, 'Project', 'mine.txt'), 'the user\'s own');
    const before = await snapshot(path.join(root, 'Project'));
    await writeFile(path.join(root, claimFileName(label.jobLabel)), 'Project');
    const resumed = await target.write(ctx(), null, project(), options);
    expect(resumed.newResource?.title).toBe('Project (2)');
    expect(await snapshot(path.join(root, 'Project'))).toEqual(before);
    expect(await snapshot(path.join(root, 'Project (2)'))).toEqual({ 'notes.txt': 'from the upload' });
    // a name tried whose folder is there and empty may be the one the crash cut off: taken
    await mkdir(path.join(root, 'Empty'));
    const empty = () => entriesOf({ 'Empty/a.txt': 'alpha' });
    const emptyLabel = { ...writeOptions('update'), jobLabel: 'Ferry upload 0b7e-empty' };
    await writeFile(path.join(root, claimFileName(emptyLabel.jobLabel)), 'Empty');
    const intoEmpty = await target.write(ctx(), null, empty(), await withPlanOf(target, null, empty(), emptyLabel));
    expect(intoEmpty.newResource?.title).toBe('Empty');
    expect(await snapshot(path.join(root, 'Empty'))).toEqual({ 'a.txt': 'alpha' });
  });

  it('a top-level write resumed inside the folder it claimed (as a job does from its journal) drops the claim when it ends', async () => {
    const label = { ...writeOptions('update'), jobLabel: 'Ferry upload 0b7e-journaled' };
    const options = await withPlanOf(target, null, entriesOf(tree), label);
    async function* cutOff(): AsyncGenerator<Entry> {
      let given = 0;
      for await (const entry of entriesOf(tree)) {
        if (given++ === 2) throw new CancelledError();
        yield entry;
      }
    }
    await expect(target.write(ctx(), null, cutOff(), options)).rejects.toThrow(CancelledError);
    expect((await readdir(root)).filter((name) => name.startsWith('.ferry-claim-'))).toHaveLength(1);
    // the resumed run writes what is below the top folder into it, no longer as a top-level write
    const below = () => entriesOf({ 'a.txt': 'alpha', 'sub/b.txt': 'bravo' });
    const resumed = await target.write(ctx(), encodeLocalId('Run'), below(), await withPlanOf(target, encodeLocalId('Run'), below(), label));
    expect(resumed.fileErrors).toEqual([]);
    expect(await snapshot(path.join(root, 'Run'))).toEqual({ 'a.txt': 'alpha', 'sub/b.txt': 'bravo' });
    expect(await readdir(root)).toEqual(['Project', 'Run']);
  });

  it('writes the small files after a large one while it streams, when its source reads entries independently; the report keeps entry order', async () => {
    const big = Buffer.alloc(3 * 1024 * 1024, 'large ');
    const largeMayEnd = settledBy();
    const smallOpened: string[] = [];
    async function* entries(): AsyncGenerator<Entry> {
      yield runFolder;
      // the last chunk only once every small file after it has been opened
      yield largeEntry('Run/big.bin', big, largeMayEnd.settled);
      for (let i = 0; i < 5; i++) {
        yield smallEntry(i, () => {
          if (smallOpened.push(`s${i}`) === 5) largeMayEnd.settle();
        });
      }
    }
    const outcome = await target.write(ctx(), encodeLocalId('Project'), entries(), writeOptions('update'));
    expect(outcome.created).toEqual(['Run', 'Run/big.bin', 'Run/s0.txt', 'Run/s1.txt', 'Run/s2.txt', 'Run/s3.txt', 'Run/s4.txt']);
    expect((await readFile(path.join(root, 'Project', 'Run', 'big.bin'))).equals(big)).toBe(true);
    expect(await readFile(path.join(root, 'Project', 'Run', 's3.txt'), 'utf8')).toBe('s3');
    expect(await partFiles(root)).toEqual([]);
  });

  it('writes the small files after more large files than may stream at once while the first ones stream: the next large one waits for its place, not the entries after it', async () => {
    const large = LARGE_FILES_IN_FLIGHT + 2;
    const events: string[] = [];
    let opened = 0;
    // the small files wait behind the large ones otherwise: each large one then ends after 1 s
    const smallOpened = settledBy(1000);
    async function* entries(): AsyncGenerator<Entry> {
      yield runFolder;
      for (let i = 0; i < large; i++) yield largeEntry(`Run/big-${i}.bin`, bigFile(i), smallOpened.settled, { onEnd: () => events.push(`big-${i} read`) });
      for (let i = 0; i < 4; i++) {
        yield smallEntry(i, () => {
          events.push(`s${i} opened`);
          if (++opened === 4) smallOpened.settle();
        });
      }
    }
    const outcome = await target.write(ctx(), encodeLocalId('Project'), entries(), writeOptions('update'));
    expect(outcome.created).toEqual(['Run', ...Array.from({ length: large }, (_, i) => `Run/big-${i}.bin`), 'Run/s0.txt', 'Run/s1.txt', 'Run/s2.txt', 'Run/s3.txt']);
    // every small file was opened before any large one had been read to its end
    expect(events.slice(0, 4)).toEqual(['s0 opened', 's1 opened', 's2 opened', 's3 opened']);
    for (let i = 0; i < large; i++) expect((await readFile(path.join(root, 'Project', 'Run', `big-${i}.bin`))).equals(bigFile(i))).toBe(true);
    expect(await partFiles(root)).toEqual([]);
  });

  it('streams LARGE_FILES_IN_FLIGHT large files side by side when their source reads entries independently; the next waits for one of them to end', async () => {
    const sideBySide = LARGE_FILES_IN_FLIGHT;
    expect(sideBySide).toBeGreaterThan(1);
    let running = 0;
    let mostAtOnce = 0;
    // written one after another they never would all be open: each then goes on after 1 s
    const allSideBySideOpen = settledBy(1000);
    async function* entries(): AsyncGenerator<Entry> {
      yield runFolder;
      for (let i = 0; i <= sideBySide; i++) {
        // each of the first ones ends only once all of them are open
        yield largeEntry(`Run/big-${i}.bin`, bigFile(i), i < sideBySide ? allSideBySideOpen.settled : () => Promise.resolve(), {
          onOpen: () => {
            mostAtOnce = Math.max(mostAtOnce, ++running);
            if (running === sideBySide) allSideBySideOpen.settle();
          },
          onEnd: () => running--,
        });
      }
    }
    const outcome = await target.write(ctx(), encodeLocalId('Project'), entries(), writeOptions('update'));
    expect(outcome.created).toEqual(['Run', ...Array.from({ length: sideBySide + 1 }, (_, i) => `Run/big-${i}.bin`)]);
    expect(mostAtOnce).toBe(sideBySide);
    for (let i = 0; i <= sideBySide; i++) expect((await readFile(path.join(root, 'Project', 'Run', `big-${i}.bin`))).equals(bigFile(i))).toBe(true);
    expect(await partFiles(root)).toEqual([]);
  });
});
