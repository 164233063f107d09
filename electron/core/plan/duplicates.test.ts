// The duplicates resolution alone, over an in-memory destination: each action's decision,
// per-file choices, free names, one listing per folder, and the preview's side-by-side facts.
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { DuplicateFileAction } from '../../../shared/api.js';
import { MemoryTarget } from '../jobs/test-support/memory-target.js';
import type { Entry, ListScope, TargetContext } from '../target.js';
import { freeName, newerVerdict, previewConflicts, resolveDuplicates } from './duplicates.js';
import { FLAT_RECORD_NAMING_RULES } from '../remote/flat-record.js';
import { planWrite } from './write-plan.js';

const ctx: TargetContext = { token: 't', signal: new AbortController().signal };
const EARLY = new Date('2020-01-01T00:00:00Z');
const LATE = new Date('2030-01-01T00:00:00Z');

/** Files as a source yields them: path → modification time (null: not known). */
async function* source(files: Record<string, Date | null>): AsyncIterable<Entry> {
  for (const [path, mtime] of Object.entries(files)) {
    yield { path, kind: 'file', size: 3, mtime, hashes: { md5: 'abc' }, open: async () => Readable.from([Buffer.from('new')]) };
  }
}

/** A destination with folder `C` holding `files` (paths below C), each stored at `stored` time; counts listings by folder. */
function destination(files: string[], stored = new Date('2025-01-01T00:00:00Z')) {
  const target = new MemoryTarget({ files: Object.fromEntries(files.map((path) => [`C/${path}`, 'old'])), folders: ['C'] });
  for (const node of target.nodes.values()) node.mtime = stored;
  const listed: string[] = [];
  const list = target.list.bind(target);
  target.list = (listCtx: TargetContext, scope?: ListScope) => {
    listed.push(MemoryTarget.pathOf(scope!.container!));
    return list(listCtx, scope);
  };
  return { target, listed, container: MemoryTarget.idOf('C') };
}

async function resolve(files: Record<string, Date | null>, existing: string[], action: DuplicateFileAction, choices?: Record<string, DuplicateFileAction>) {
  const { target, listed, container } = destination(existing);
  const plan = await planWrite(target, source(files), { containerId: container, duplicateAction: action, signal: ctx.signal });
  const resolved = await resolveDuplicates(target, ctx, plan, { containerId: container, action, ...(choices ? { choices } : {}) });
  return { ...resolved, handed: resolved.plan.entries.map((planned) => [planned.entry.path, planned.onDuplicate]), listed };
}

describe('duplicates resolved in the core', () => {
  it('leaves the two plain actions to the target, looking at nothing', async () => {
    for (const action of ['ignore', 'update'] as const) {
      const resolved = await resolve({ 'D/a.txt': LATE }, ['D/a.txt'], action);
      expect(resolved.writeAction).toBe(action);
      expect(resolved.listed).toEqual([]);
      expect(resolved.handed).toEqual([['D/a.txt', action]]);
    }
  });

  it('newer: replaces only a file modified later than the stored one, and says so when a time is unknown', async () => {
    const resolved = await resolve({ 'D/late.txt': LATE, 'D/early.txt': EARLY, 'D/unknown.txt': null, 'D/new.txt': EARLY }, ['D/late.txt', 'D/early.txt', 'D/unknown.txt'], 'newer');
    expect(resolved.writeAction).toBe('update');
    expect(resolved.handed.map(([path]) => path)).toEqual(['D/late.txt', 'D/new.txt']);
    expect(resolved.ignored).toEqual(['D/early.txt', 'D/unknown.txt']);
    expect(resolved.notes).toEqual([
      '"D/unknown.txt" was left as it is on Memory (memory): the modification time of one of the two files is not known, so it could not be told which is newer. Choose "Replace if different" for it to replace it.',
    ]);
  });

  it('rename: the new file goes under the first name free in the listing and among the planned names', async () => {
    const resolved = await resolve(
      { 'D/a.txt': EARLY, 'D/a (3).txt': EARLY, 'D/.env': EARLY, 'D/b.tar.gz': EARLY, 'D/fresh.txt': EARLY },
      ['D/a.txt', 'D/A (2).TXT', 'D/.env', 'D/b.tar.gz'],
      'rename',
    );
    // `a (2).txt` is taken as `A (2).TXT` (names folded as the planner folds them), `a (3).txt` is planned
    expect(resolved.handed.map(([path]) => path)).toEqual(['D/a (4).txt', 'D/a (3).txt', 'D/.env (2)', 'D/b.tar (2).gz', 'D/fresh.txt']);
    expect([...resolved.renamedFrom]).toEqual([
      ['D/a (4).txt', 'D/a.txt'],
      ['D/.env (2)', 'D/.env'],
      ['D/b.tar (2).gz', 'D/b.tar.gz'],
    ]);
    expect(resolved.ignored).toEqual([]);
    // nothing is to be replaced: a file that appears at a new name before the write is kept
    expect(resolved.writeAction).toBe('ignore');
  });

  it('lists each destination folder the write touches once, and none below a folder that is not there', async () => {
    const resolved = await resolve({ 'D/a.txt': EARLY, 'D/b.txt': EARLY, 'D/sub/c.txt': EARLY, 'New/x.txt': EARLY, 'New/deep/y.txt': EARLY }, ['D/a.txt', 'D/sub/c.txt'], 'rename');
    expect(resolved.listed.sort()).toEqual(['C', 'C/D', 'C/D/sub']);
  });

  it('per-file choices, by the source path, override the job action', async () => {
    const resolved = await resolve({ 'D/a.txt': EARLY, 'D/b.txt': EARLY, 'D/c.txt': EARLY }, ['D/a.txt', 'D/b.txt', 'D/c.txt'], 'ignore', {
      'D/b.txt': 'update',
      'D/c.txt': 'rename',
    });
    expect(resolved.writeAction).toBe('update');
    expect(resolved.handed).toEqual([
      ['D/b.txt', 'update'],
      ['D/c (2).txt', 'update'],
    ]);
    expect(resolved.ignored).toEqual(['D/a.txt']);
  });

  it('rename: a free name the destination would refuse leaves the file there, and says so', async () => {
    const { target, container } = destination(['D/a.txt']);
    Object.assign(target, { checkName: (name: string) => (name.includes('(') ? 'brackets are refused there' : null) });
    const plan = await planWrite(target, source({ 'D/a.txt': EARLY }), { containerId: container, duplicateAction: 'rename', signal: ctx.signal });
    const resolved = await resolveDuplicates(target, ctx, plan, { containerId: container, action: 'rename' });
    expect(resolved.plan.entries).toEqual([]);
    expect(resolved.ignored).toEqual(['D/a.txt']);
    expect(resolved.notes).toEqual([
      '"D/a.txt" was left as it is on Memory (memory): the free name "D/a (2).txt" cannot be used there (brackets are refused there). Rename the file there or here and copy it again.',
    ]);
  });

  it('a file an earlier run of the job completed is not judged again (its own write is what is there)', async () => {
    const { target, container } = destination(['D/done.txt', 'D/other.txt']);
    const plan = await planWrite(target, source({ 'D/done.txt': EARLY, 'D/other.txt': EARLY }), { containerId: container, duplicateAction: 'rename', signal: ctx.signal });
    const resolved = await resolveDuplicates(target, ctx, plan, { containerId: container, action: 'rename', completed: (entry) => entry.path === 'D/done.txt' });
    // left as planned, for the journal to leave out; the other is renamed
    expect(resolved.plan.entries.map((planned) => planned.entry.path)).toEqual(['D/done.txt', 'D/other (2).txt']);
  });

  it('a resumed run takes a stored file with the same bytes as its earlier run\'s copy (a mark lost in a crash), not renaming it', async () => {
    const stored = new Date('2025-01-01T00:00:00Z');
    const { target, container } = destination(['D/same-hash.txt', 'D/same-time.txt', 'D/other-time.txt', 'D/other-hash.txt'], stored);
    const md5 = (text: string) => createHash('md5').update(text).digest('hex');
    async function* files(): AsyncIterable<Entry> {
      // the destination holds 'old' (3 bytes) at `stored` for each
      const entry = (path: string, mtime: Date, hashes: Record<string, string>): Entry => ({ path, kind: 'file', size: 3, mtime, hashes, open: async () => Readable.from([Buffer.from('old')]) });
      yield entry('D/same-hash.txt', EARLY, { md5: md5('old') }); // a hash both give agrees: the time does not matter
      yield entry('D/same-time.txt', new Date(stored.getTime() + 400), {}); // no hash in common: same size, same second
      yield entry('D/other-time.txt', EARLY, {});
      yield entry('D/other-hash.txt', stored, { md5: md5('new') }); // same size and time, but the hash says otherwise
    }
    for (const resumed of [true, false]) {
      const plan = await planWrite(target, files(), { containerId: container, duplicateAction: 'rename', signal: ctx.signal });
      const resolved = await resolveDuplicates(target, ctx, plan, { containerId: container, action: 'rename', resumed });
      const handed = resolved.plan.entries.map((planned) => planned.entry.path);
      if (resumed) {
        expect(handed).toEqual(['D/other-time (2).txt', 'D/other-hash (2).txt']);
        expect(resolved.ignored).toEqual(['D/same-hash.txt', 'D/same-time.txt']);
      } else {
        // a first run does as asked: keep both
        expect(handed).toEqual(['D/same-hash (2).txt', 'D/same-time (2).txt', 'D/other-time (2).txt', 'D/other-hash (2).txt']);
        expect(resolved.ignored).toEqual([]);
      }
    }
  });

  it('names a flattened file by its own last segment, the stored name following', async () => {
    const target = new MemoryTarget({ files: { 'R/raw__a.csv': 'old' } });
    Object.assign(target, { namingRules: FLAT_RECORD_NAMING_RULES });
    const record = MemoryTarget.idOf('R');
    const plan = await planWrite(target, source({ 'raw/a.csv': EARLY }), { containerId: record, duplicateAction: 'rename', signal: ctx.signal });
    const resolved = await resolveDuplicates(target, ctx, plan, { containerId: record, action: 'rename' });
    expect(resolved.plan.entries.map((planned) => [planned.entry.path, planned.storedAs])).toEqual([['raw/a (2).csv', 'raw__a (2).csv']]);
  });

  it('a new top-level resource holds nothing yet: nothing is looked at, and nothing is replaced', async () => {
    const { target, listed } = destination([]);
    const plan = await planWrite(target, source({ 'Top/a.txt': EARLY }), { containerId: null, duplicateAction: 'rename', signal: ctx.signal });
    const resolved = await resolveDuplicates(target, ctx, plan, { containerId: null, action: 'rename', choices: { 'Top/a.txt': 'update' } });
    expect(resolved).toMatchObject({ writeAction: 'ignore', ignored: [] });
    expect(resolved.plan).toBe(plan);
    expect(listed).toEqual([]);
  });

  it('the preview sets both sides side by side', async () => {
    const stored = new Date('2025-01-01T00:00:00Z');
    const { target, container } = destination(['D/a.txt', 'D/sub/b.txt'], stored);
    const plan = await planWrite(target, source({ 'D/a.txt': LATE, 'D/sub/b.txt': null, 'D/c.txt': EARLY }), { containerId: container, duplicateAction: 'update', signal: ctx.signal });
    const conflicts = await previewConflicts(target, ctx, plan, container);
    expect(conflicts).toEqual([
      {
        path: 'D/a.txt',
        destination_path: 'D/a.txt',
        source: { size: 3, date_modified: '2030-01-01T00:00:00.000000Z', hashes: { md5: 'abc' } },
        destination: {
          id: MemoryTarget.idOf('C/D/a.txt'),
          size: 3,
          date_modified: '2025-01-01T00:00:00.000000Z',
          hashes: { md5: expect.stringMatching(/^[0-9a-f]{32}$/), sha256: expect.stringMatching(/^[0-9a-f]{64}$/) },
        },
      },
      expect.objectContaining({ path: 'D/sub/b.txt', source: { size: 3, date_modified: null, hashes: { md5: 'abc' } } }),
    ]);
  });
});

describe('the small rules', () => {
  it('free names', () => {
    const taken = new Set(['a (2).txt']);
    expect(freeName('a.txt', (name) => taken.has(name))).toBe('a (3).txt');
    expect(freeName('README', () => false)).toBe('README (2)');
  });

  it('newer means a later second, and unknown when a side has no time', () => {
    expect(newerVerdict(LATE, '2025-01-01T00:00:00.000000Z')).toBe('newer');
    expect(newerVerdict(EARLY, '2025-01-01T00:00:00.000000Z')).toBe('not newer');
    expect(newerVerdict(new Date('2025-01-01T00:00:00Z'), '2025-01-01T00:00:00.000000Z')).toBe('not newer');
    // within one second: a service that keeps whole seconds cannot tell, so nothing is replaced
    expect(newerVerdict(new Date('2025-01-01T00:00:00.900Z'), '2025-01-01T00:00:00.000000Z')).toBe('not newer');
    expect(newerVerdict(new Date('2025-01-01T00:00:01.000Z'), '2025-01-01T00:00:00.999000Z')).toBe('newer');
    expect(newerVerdict(null, '2025-01-01T00:00:00.000000Z')).toBe('unknown');
    expect(newerVerdict(LATE, null)).toBe('unknown');
  });
});
