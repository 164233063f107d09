import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apacheGitUnavailableReason, startApacheGit, type ApacheGit } from '../../../../test/git/apache-git.js';
import { collect, drain, entriesFrom, writeOptions } from '../../../../test/target-suite/test-entries.js';
import { FerryError } from '../../errors.js';
import type { Entry, TargetContext } from '../../target.js';
import { gitBlobSha } from '../forge/git-hash.js';
import { GitTarget } from './git-target.js';
import { gitId } from './ids.js';

// Against a real `git http-backend` behind Apache (test/git/apache-git.ts), never an emulator.
const missing = apacheGitUnavailableReason();
if (missing) console.warn(`[git target] not run: ${missing}`);

describe.skipIf(missing !== null)('git target against git http-backend', () => {
  let server: ApacheGit;
  let target: GitTarget;
  const ctxFor = (url: string, password = server.password): TargetContext => ({ token: JSON.stringify({ url, username: server.username, password }), signal: new AbortController().signal });

  beforeAll(async () => {
    server = await startApacheGit();
    target = new GitTarget();
  });
  afterAll(async () => {
    await target?.close();
    await server?.stop();
  });

  it('lists and downloads a repository through one shallow fetch', async () => {
    const url = await server.createRepo('read', { 'README.md': 'hello\n', 'data/a.csv': '1,2\n', 'data/sub/b.bin': Buffer.alloc(70_000, 9) });
    await server.takeRequests();
    const nodes = await collect(target.list(ctxFor(url)));
    expect(nodes.map((n) => `${n.kind_name}:${n.title}`).sort()).toEqual(['file:README.md', 'file:a.csv', 'file:b.bin', 'folder:data', 'folder:sub']);
    expect(await server.takeRequests()).toEqual(['GET /git/read.git/info/refs?service=git-upload-pack 200', 'POST /git/read.git/git-upload-pack 200']);
    const data = nodes.find((n) => n.title === 'data')!;
    expect((await collect(target.list(ctxFor(url), { container: data.id }))).map((n) => n.title).sort()).toEqual(['a.csv', 'sub']);
    const read = await target.read(ctxFor(url), data.id);
    const files = await drain(read.entries);
    expect([...files.keys()].sort()).toEqual(['data', 'data/a.csv', 'data/sub', 'data/sub/b.bin']);
    expect(files.get('data/sub/b.bin')!.equals(Buffer.alloc(70_000, 9))).toBe(true);
    const detail = await target.detail(ctxFor(url), gitId('data/a.csv'));
    expect(detail.hashes['git-sha1']).toBe(gitBlobSha(Buffer.from('1,2\n')));
  });

  it('uploads into a folder and as a new top-level folder, each job one commit', async () => {
    const url = await server.createRepo('write', { 'data/x.txt': 'x' });
    const before = Number(await server.git('write', 'rev-list', '--count', 'main'));
    const into = await target.write(ctxFor(url), gitId('data'), entriesFrom({ 'new/': null, 'new/a.txt': 'A', 'y.txt': 'y' }), writeOptions());
    expect(into.created.sort()).toEqual(['new/a.txt', 'y.txt']);
    const top = await target.write(ctxFor(url), null, entriesFrom({ 'data/': null, 'data/z.txt': 'z' }), writeOptions());
    // "data" is taken at the root: the new folder gets a distinct name
    expect(top.newResource).toEqual({ id: gitId('data-2'), title: 'data-2' });
    expect(Number(await server.git('write', 'rev-list', '--count', 'main'))).toBe(before + 2);
    expect((await server.git('write', 'ls-tree', '-r', '--name-only', 'main')).trim().split('\n')).toEqual(['data-2/z.txt', 'data/new/a.txt', 'data/x.txt', 'data/y.txt']);
    expect(await server.git('write', 'log', '-1', '--format=%s', 'main')).toBe('Ferry: Ferry test upload\n');
    await server.git('write', 'fsck', '--strict');
  });

  it('fills an empty repository with one root commit', async () => {
    const url = await server.createRepo('empty');
    expect(await collect(target.list(ctxFor(url)))).toEqual([]);
    const outcome = await target.write(ctxFor(url), null, entriesFrom({ 'Study/': null, 'Study/a.txt': 'a', 'Study/d/b.txt': 'b' }), writeOptions());
    expect(outcome.created.sort()).toEqual(['a.txt', 'd/b.txt']);
    expect((await server.git('empty', 'rev-list', '--count', 'main')).trim()).toBe('1');
  });

  it('a new top-level folder exists only with its commit: told to the job once the push landed, before its files', async () => {
    const url = await server.createRepo('told');
    const told: string[] = [];
    const head = async () => (await server.git('told', 'rev-list', '--count', 'main').catch(() => '0')).trim();
    const outcome = await target.write(ctxFor(url), null, entriesFrom({ 'Study/': null, 'Study/a.txt': 'a', 'Study/d/b.txt': 'b' }), {
      ...writeOptions(),
      onNewResource: (resource) => void told.push(`folder ${resource.id} ${resource.title}`),
      onFileWritten: (path) => void told.push(`file ${path}`),
    });
    expect(await head()).toBe('1');
    expect(told).toEqual([`folder ${outcome.newResource!.id} Study`, 'file Study/a.txt', 'file Study/d/b.txt']);
    // nothing to push (every file already there with the same bytes): no folder was made, none is told
    const again: string[] = [];
    await target.write(ctxFor(url), gitId('Study'), entriesFrom({ 'a.txt': 'a' }), { ...writeOptions(), onNewResource: () => void again.push('folder'), onFileWritten: (path) => void again.push(`file ${path}`) });
    expect(again).toEqual(['file a.txt']);
  });

  it('honours duplicate policies ignore and update, and sends nothing for identical bytes', async () => {
    const url = await server.createRepo('dups', { 'f/keep.txt': 'old', 'f/same.txt': 'same' });
    const ignore = await target.write(ctxFor(url), gitId('f'), entriesFrom({ 'keep.txt': 'changed', 'same.txt': 'same', 'new.txt': 'n' }), writeOptions('ignore'));
    expect(ignore).toMatchObject({ created: ['new.txt'], updated: [], fileErrors: [] });
    expect(ignore.ignored.sort()).toEqual(['keep.txt', 'same.txt']);
    expect(await server.git('dups', 'show', 'main:f/keep.txt')).toBe('old');
    const commits = Number(await server.git('dups', 'rev-list', '--count', 'main'));
    const update = await target.write(ctxFor(url), gitId('f'), entriesFrom({ 'keep.txt': 'changed', 'same.txt': 'same' }), writeOptions('update'));
    expect(update).toMatchObject({ updated: ['keep.txt'], ignored: ['same.txt'], created: [] });
    expect(await server.git('dups', 'show', 'main:f/keep.txt')).toBe('changed');
    await server.takeRequests();
    const nothing = await target.write(ctxFor(url), gitId('f'), entriesFrom({ 'same.txt': 'same' }), writeOptions('update'));
    expect(nothing.ignored).toEqual(['same.txt']);
    expect((await server.takeRequests()).filter((r) => r.startsWith('POST') && r.includes('receive-pack'))).toEqual([]);
    expect(Number(await server.git('dups', 'rev-list', '--count', 'main'))).toBe(commits + 1);
  });

  it('someone pushed meanwhile: the push is refused, planned again on their commit, and lands on top of it', async () => {
    const url = await server.createRepo('race', { 'f/a.txt': 'a' });
    let interfered = false;
    const sneaky: Entry = {
      path: 'b.txt', kind: 'file', size: 1, mtime: null, hashes: {},
      open: async () => {
        if (!interfered) {
          interfered = true;
          await server.pushFromElsewhere('race', { 'f/theirs.txt': 'theirs' });
        }
        return Readable.from([Buffer.from('b')]);
      },
    };
    await server.takeRequests();
    const outcome = await target.write(ctxFor(url), gitId('f'), (async function* () { yield sneaky; })(), writeOptions());
    expect(outcome.created).toEqual(['b.txt']);
    const files = (await server.git('race', 'ls-tree', '-r', '--name-only', 'main')).trim().split('\n');
    expect(files).toEqual(['f/a.txt', 'f/b.txt', 'f/theirs.txt']);
    expect((await server.git('race', 'log', '--format=%s', 'main')).trim().split('\n')).toEqual(['Ferry: Ferry test upload', 'someone else', 'seed']);
    // Ferry's own requests: the refused POST is one of them, answered with "ng … fetch first" inside a 200
    const ferry = (await server.takeRequests()).filter((r) => r.startsWith('POST /git/race.git/git-receive-pack'));
    expect(ferry.length).toBe(3); // the other client's push, Ferry's refused one, Ferry's landed one
  });

  it('someone keeps pushing: a clear sentence, and their commits stay', async () => {
    const url = await server.createRepo('busy', { 'f/a.txt': 'a' });
    let n = 0;
    const sneaky: Entry = {
      path: 'b.txt', kind: 'file', size: 1, mtime: null, hashes: {},
      open: async () => {
        await server.pushFromElsewhere('busy', { [`f/theirs-${n++}.txt`]: 'theirs' });
        return Readable.from([Buffer.from('b')]);
      },
    };
    const error = await target.write(ctxFor(url), gitId('f'), (async function* () { yield sneaky; })(), writeOptions()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FerryError);
    expect(error).toMatchObject({ status: 409, code: 'conflict' });
    expect((error as Error).message).toMatch(/kept changing while Ferry was uploading.*nothing was committed/);
    expect(await server.git('busy', 'log', '-1', '--format=%s', 'main')).toBe('someone else\n');
  });

  it('a file that changes between its hashing and the push fails the push; the branch is untouched', async () => {
    const url = await server.createRepo('shifty', { 'f/a.txt': 'a' });
    let reads = 0;
    const shifty: Entry = { path: 'b.txt', kind: 'file', size: 5, mtime: null, hashes: {}, open: async () => Readable.from([Buffer.from(reads++ === 0 ? 'first' : 'other')]) };
    const head = await server.git('shifty', 'rev-parse', 'main');
    await expect(target.write(ctxFor(url), gitId('f'), (async function* () { yield shifty; })(), writeOptions())).rejects.toMatchObject({ status: 409, message: expect.stringMatching(/changed while Ferry was uploading it; nothing was pushed/) });
    expect(await server.git('shifty', 'rev-parse', 'main')).toBe(head);
  });

  it('a wrong password is a 401, and the token goes nowhere but the repository host', async () => {
    const url = await server.createRepo('auth', { 'a.txt': 'a' });
    await expect(collect(target.list(ctxFor(url, 'wrong')))).rejects.toMatchObject({ status: 401, code: 'unauthorized' });
    await expect(collect(target.list({ ...ctxFor(url), token: 'not json' }))).rejects.toMatchObject({ status: 401 });
  });

  it('10,000 files land as ONE commit in a bounded number of requests', { timeout: 240_000 }, async () => {
    const url = await server.createRepo('many', { 'README.md': 'many files\n' });
    const files: Record<string, string | null> = { 'bulk/': null };
    for (let i = 0; i < 10_000; i++) files[`bulk/d${String(i % 100).padStart(2, '0')}/f${i}.txt`] = `file ${i}\n`;
    await server.takeRequests();
    const outcome = await target.write(ctxFor(url), null, entriesFrom(files), writeOptions());
    expect(outcome.fileErrors).toEqual([]);
    expect(outcome.created).toHaveLength(10_000);
    const requests = await server.takeRequests();
    console.info(`[git target] 10,000-file upload: ${requests.length} HTTP requests: ${requests.join(' | ')}`);
    expect(requests).toEqual([
      'GET /git/many.git/info/refs?service=git-upload-pack 200',
      'POST /git/many.git/git-upload-pack 200',
      'GET /git/many.git/info/refs?service=git-receive-pack 200',
      'POST /git/many.git/git-receive-pack 200',
    ]);
    expect((await server.git('many', 'rev-list', '--count', 'main')).trim()).toBe('2');
    expect(Number((await server.git('many', 'ls-tree', '-r', '--name-only', 'main')).trim().split('\n').length)).toBe(10_001);
    expect(await server.git('many', 'show', 'main:bulk/d42/f9942.txt')).toBe('file 9942\n');
  });
});
