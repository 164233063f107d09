import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startGitlabEmulator, type GitlabEmulator, type GitlabUser } from '../../../../test/emulators/gitlab/server.js';
import { collect, readAll } from '../../../../test/target-suite/test-entries.js';
import { makeConfig } from '../../config.js';
import { MemorySecretStore } from '../../keychain/memory.js';
import type { Entry, Target, TargetContext, WriteOptions } from '../../target.js';
import { gitBlobSha } from '../forge/git-hash.js';
import { createGitlabTarget } from './index.js';
import { sanitizeProjectName } from './gitlab-write.js';

const TOKEN = 'glpat-test-alice';
let emu: GitlabEmulator;
let alice: GitlabUser;
let target: Target;
const ctx = (token = TOKEN): TargetContext => ({ token, signal: new AbortController().signal });
const opts = (duplicateAction: 'ignore' | 'update' = 'ignore'): WriteOptions => ({ duplicateAction, signal: new AbortController().signal, jobLabel: 'Ferry upload 9f8e7d' });
const sha256 = (s: string | Buffer) => createHash('sha256').update(s).digest('hex');

function fileEntry(path: string, content: string | Buffer, size?: number | null): Entry {
  const bytes = Buffer.from(content);
  return { path, kind: 'file', size: size === undefined ? bytes.length : size, mtime: null, hashes: {}, open: async () => Readable.from([bytes.subarray(0, 3), bytes.subarray(3)]) };
}
const folderEntry = (path: string): Entry => ({ path, kind: 'folder', size: null, mtime: null, hashes: {}, open: () => Promise.reject(new Error('folder')) });
async function* iterate(entries: Entry[]): AsyncGenerator<Entry> {
  yield* entries;
}

beforeEach(async () => {
  emu = await startGitlabEmulator();
  alice = { id: 7, username: 'alice', name: 'Alice' };
  emu.state.tokens.set(TOKEN, alice);
  target = createGitlabTarget(makeConfig({ remotes: { ...makeConfig().remotes, gitlabUrl: emu.url } }), new MemorySecretStore(), { maxRateWaitMs: 5000, ratePerSecond: 100 });
});
afterEach(async () => {
  await emu.close();
});

describe('gitlab target: listing and detail', () => {
  it('pages projects (offset) and trees (keyset)', async () => {
    for (let i = 0; i < 103; i++) emu.state.addProject(alice, `p${i}`);
    const files: Record<string, string> = {};
    for (let i = 0; i < 120; i++) files[`data/f${String(i).padStart(3, '0')}.txt`] = `file ${i}`;
    const big = emu.state.addProject(alice, 'Big Data', files);
    emu.state.addProject({ id: 99, username: 'eve', name: 'Eve' }, 'not-mine', { 'x.txt': 'x' });
    const top = await collect(target.list(ctx(), { container: null }));
    expect(top).toHaveLength(104);
    expect(emu.state.requests.filter((r) => r === 'GET /api/v4/projects')).toHaveLength(2);

    const children = await collect(target.list(ctx(), { container: `p${big.id}` }));
    expect(children.map((c) => c.title)).toEqual(['data']);
    const inData = await collect(target.list(ctx(), { container: children[0]!.id }));
    expect(inData).toHaveLength(120);
    expect(inData.every((n) => n.container === children[0]!.id && !n.id.includes('.'))).toBe(true);
    expect(emu.state.requests.filter((r) => r.endsWith('/repository/tree')).length).toBeGreaterThanOrEqual(3);
  });

  it('reports sha256 from HEAD without downloading', async () => {
    const p = emu.state.addProject(alice, 'hashes', { 'docs/readme.md': '# hi' });
    const detail = await target.detail(ctx(), `p${p.id}`);
    expect(detail).toMatchObject({ kind: 'container', title: 'hashes', hashes: {} });
    const [docs] = await collect(target.list(ctx(), { container: `p${p.id}` }));
    const [file] = await collect(target.list(ctx(), { container: docs!.id }));
    const fileDetail = await target.detail(ctx(), file!.id);
    expect(fileDetail.hashes).toEqual({ sha256: sha256('# hi') });
    expect(fileDetail.extra).toMatchObject({ size: 4, blob_id: gitBlobSha(Buffer.from('# hi')), path: 'docs/readme.md' });
    expect(fileDetail.date_modified).toMatch(/Z$/);
    expect(emu.state.requests).toContain(`HEAD /api/v4/projects/${p.id}/repository/files/docs%2Freadme.md`);
    expect(emu.state.requests.some((r) => r.includes('/raw'))).toBe(false);
    expect(target.info.supported_hash_algorithms).toEqual(['sha256']);
  });

  it('401 for a bad token, 404 with a hint for a hidden project', async () => {
    const hidden = emu.state.addProject({ id: 99, username: 'eve', name: 'Eve' }, 'secret', { 'x.txt': 'x' });
    await expect(collect(target.list(ctx('glpat-wrong'), { container: null }))).rejects.toMatchObject({ status: 401, message: 'The GitLab token is invalid or expired.' });
    const error = await target.detail(ctx(), `p${hidden.id}`).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 404, code: 'resource_not_found' });
    expect((error as Error).message).toContain('read_api');
  });
});

describe('gitlab target: descriptive metadata', () => {
  it("reads a project's description, topics and licence (license=true), under its CITATION.cff, which wins where it says something", async () => {
    const p = emu.state.addProject(alice, 'tide-gauges', {
      'CITATION.cff': 'cff-version: 1.2.0\ntitle: Tide Gauges of the North Sea\nauthors:\n  - family-names: Lovelace\n    given-names: Ada\n    orcid: https://orcid.org/0000-0002-1825-0097\ndoi: 10.5281/zenodo.123\n',
      'data/a.csv': '1',
    });
    p.description = 'Hourly sea level.';
    p.topics = ['tides', 'sea level'];
    p.license = { key: 'mit', name: 'MIT License', nickname: null, html_url: 'http://choosealicense.com/licenses/mit/', source_url: 'https://opensource.org/licenses/MIT' };
    expect(await target.describe!(ctx(), `p${p.id}`)).toEqual({
      title: 'Tide Gauges of the North Sea',
      description: 'Hourly sea level.',
      creators: [{ name: 'Ada Lovelace', orcid: '0000-0002-1825-0097' }],
      keywords: ['sea level', 'tides'],
      license: 'MIT',
      related_identifiers: [{ identifier: 'https://doi.org/10.5281/zenodo.123', relation: 'isIdenticalTo' }],
    });
    expect(emu.state.requests).toContain(`HEAD /api/v4/projects/${p.id}/repository/files/CITATION.cff`);
    // a folder or file has no metadata of its own
    const [data] = await collect(target.list(ctx(), { container: `p${p.id}` })).then((nodes) => nodes.filter((n) => n.title === 'data'));
    expect(await target.describe!(ctx(), data!.id)).toBeNull();
  });

  it("a project without CITATION.cff is what GitLab says of it; licensee's 'other' names no licence; an empty project has no file to read", async () => {
    const p = emu.state.addProject(alice, 'plain', { 'a.txt': 'a' });
    p.license = { key: 'other', name: 'Other', nickname: null, html_url: 'http://choosealicense.com/licenses/other/', source_url: null };
    expect(await target.describe!(ctx(), `p${p.id}`)).toEqual({ title: 'plain' });
    const empty = emu.state.addProject(alice, 'empty');
    empty.license = { key: 'apache-2.0', name: 'Apache License 2.0', nickname: null, html_url: 'http://choosealicense.com/licenses/apache-2.0/', source_url: 'http://www.apache.org/licenses/LICENSE-2.0.html' };
    expect(await target.describe!(ctx(), `p${empty.id}`)).toEqual({ title: 'empty', license: 'Apache-2.0' });
  });
});

describe('gitlab target: download', () => {
  it('streams a project with hashes and in-flight blob verification', async () => {
    const p = emu.state.addProject(alice, 'dl', { 'a.txt': 'alpha', 'sub/b.bin': Buffer.alloc(70_000, 3) });
    const read = await target.read(ctx(), `p${p.id}`);
    const entries = await collect(read.entries);
    expect(entries.map((e) => `${e.kind}:${e.path}`).sort()).toEqual(['file:dl/a.txt', 'file:dl/sub/b.bin', 'folder:dl', 'folder:dl/sub']);
    const b = entries.find((e) => e.path === 'dl/sub/b.bin')!;
    expect(b.size).toBe(70_000);
    expect(b.hashes).toEqual({ sha256: sha256(Buffer.alloc(70_000, 3)) });
    expect((await readAll(await b.open())).equals(Buffer.alloc(70_000, 3))).toBe(true);
  });

  it('downloads a project of 1,000 files in one shallow fetch, with sizes and SHA-256 as the REST path gives them', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 1000; i++) files[`d${i % 10}/f${i}.txt`] = `file ${i}\n`;
    const p = emu.state.addProject(alice, 'many', files);
    const before = emu.state.requests.length;
    const read = await target.read(ctx(), `p${p.id}`);
    const entries = (await collect(read.entries)).filter((e) => e.kind === 'file');
    expect(entries).toHaveLength(1000);
    const one = entries.find((e) => e.path === 'many/d7/f417.txt')!;
    expect(one.size).toBe(9);
    expect(one.hashes).toEqual({ sha256: sha256('file 417\n') });
    expect((await readAll(await one.open())).toString()).toBe('file 417\n');
    // one REST lookup and one shallow fetch, not a HEAD and a raw request per file
    expect(emu.state.requests.length - before).toBeLessThanOrEqual(4);
    await target.close?.();
  });

  it('stops a corrupted download with a fixity error (a project read file by file)', async () => {
    const p = emu.state.addProject(alice, 'bad', { 'a.txt': 'genuine' });
    emu.state.corruptBlobs.add(gitBlobSha(Buffer.from('genuine')));
    const restOnly = createGitlabTarget(makeConfig({ remotes: { ...makeConfig().remotes, gitlabUrl: emu.url } }), new MemorySecretStore(), { maxRateWaitMs: 5000, ratePerSecond: 100, shallowReadMaxBytes: -1 });
    const entries = await collect((await restOnly.read(ctx(), `p${p.id}`)).entries);
    await expect(readAll(await entries.find((e) => e.kind === 'file')!.open())).rejects.toThrow(/Fixity check failed/);
  });
});

describe('gitlab target: upload', () => {
  it('writes one commit with create/update actions, honouring ignore and update', async () => {
    const p = emu.state.addProject(alice, 'up', { 'keep.txt': 'old', 'same.txt': 'same' });
    const before = emu.state.commitCount(p);
    const first = await target.write(ctx(), `p${p.id}`, iterate([folderEntry('n'), fileEntry('n/a.txt', 'A'), fileEntry('keep.txt', 'new'), fileEntry('same.txt', 'same')]), opts('ignore'));
    expect(first.created).toEqual(['n/a.txt']);
    expect(first.ignored.sort()).toEqual(['keep.txt', 'same.txt']);
    expect(emu.state.commitCount(p)).toBe(before + 1);

    const second = await target.write(ctx(), `p${p.id}`, iterate([fileEntry('keep.txt', 'new', null), fileEntry('same.txt', 'same')]), opts('update'));
    expect(second.updated).toEqual(['keep.txt']);
    expect(second.ignored).toEqual(['same.txt']);
    expect(emu.state.commitCount(p)).toBe(before + 2);
    expect(emu.state.files(p)['keep.txt']!.toString()).toBe('new');
    const head = p.git.commit(p.refs.get('main')!)!;
    expect(head.message).toBe('Ferry: Ferry upload 9f8e7d\n');
    expect(head.author.email).toBe('7-alice@users.noreply.127.0.0.1');
  });

  it('sends no file bytes through the REST API: 5 MB in 200 files go in one git push, as one commit', async () => {
    const p = emu.state.addProject(alice, 'bulk', { 'README.md': 'bulk' });
    const files = Array.from({ length: 200 }, (_, i) => fileEntry(`data/f${i}.bin`, Buffer.alloc(25_000, i)));
    const out = await target.write(ctx(), `p${p.id}`, iterate(files), opts());
    expect(out.fileErrors).toEqual([]);
    expect(out.created).toHaveLength(200);
    expect(emu.state.commitCount(p)).toBe(2);
    // a REST request on GitLab.com ends after 60 s and, as a POST, is not retried: none may carry the files
    const largest = Math.max(...emu.state.apiBodies.map((b) => b.bytes));
    expect(largest).toBeLessThan(64 * 1024);
    expect(emu.state.requests.filter((r) => r.endsWith('/git-receive-pack'))).toHaveLength(1);
  });

  it('fills an empty project and creates a new private project for a top-level upload', async () => {
    const empty = emu.state.addProject(alice, 'empty');
    const out = await target.write(ctx(), `p${empty.id}`, iterate([fileEntry('a.txt', 'a'), fileEntry('d/b.txt', 'bbbb')]), opts());
    expect(out.created.sort()).toEqual(['a.txt', 'd/b.txt']);
    expect(emu.state.commitCount(empty)).toBe(1);

    emu.state.addProject(alice, 'My Study');
    const top = await target.write(ctx(), null, iterate([folderEntry('My Study'), fileEntry('My Study/x.csv', '1,2')]), opts());
    expect(top.newResource?.title).toBe('My Study-2');
    const created = emu.state.projects.find((x) => x.name === 'My Study-2')!;
    expect(created.visibility).toBe('private');
    expect(emu.state.files(created)).toHaveProperty('x.csv');
    expect(emu.state.commitCount(created)).toBe(1);
    expect(sanitizeProjectName('Data: 2024/05').path).toBe('data-2024-05');
  });

  it("a new project takes a transfer's description and keywords as topics; creators, licence and the rest are named in notes", async () => {
    const top = await target.write(ctx(), null, iterate([folderEntry('Tide Gauges'), fileEntry('Tide Gauges/a.csv', '1')]), {
      ...opts(),
      metadata: { title: 'Tide Gauges', description: 'Hourly sea level.', keywords: ['tides', 'sea level'], creators: [{ name: 'Ada Lovelace' }], license: 'CC-BY-4.0', funding: [{ funder: 'NERC' }] },
    });
    const created = emu.state.projects.find((x) => x.name === 'Tide Gauges')!;
    expect(created).toMatchObject({ description: 'Hourly sea level.', topics: ['tides', 'sea level'] });
    expect(top.notes).toEqual([
      expect.stringMatching(/^GitLab lists a project's members as GitLab accounts, so the creators \(Ada Lovelace\) were not added/),
      "GitLab reads a project's licence from a LICENSE file in it, so the licence 'CC-BY-4.0' was not set; add that file.",
      "A GitLab project holds no funding; the source's were not carried.",
    ]);
    // without metadata the project says which job made it, as before
    await target.write(ctx(), null, iterate([folderEntry('Plain'), fileEntry('Plain/a.csv', '1')]), opts());
    expect(emu.state.projects.find((x) => x.name === 'Plain')!.description).toBe('Created by Ferry from "Plain" (Ferry upload 9f8e7d)');
  });

  it('waits for a near rate-limit reset, fails clearly on a far one', async () => {
    emu.state.addProject(alice, 'one');
    emu.state.rateLimit.remaining = 0;
    emu.state.rateLimit.reset = Math.floor(Date.now() / 1000) + 2;
    const started = Date.now();
    expect(await collect(target.list(ctx(), { container: null }))).toHaveLength(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);

    emu.state.rateLimit.remaining = 0;
    emu.state.rateLimit.reset = Math.floor(Date.now() / 1000) + 3600;
    const count = emu.state.requests.length;
    await expect(collect(target.list(ctx(), { container: null }))).rejects.toMatchObject({ status: 429, code: 'rate_limited' });
    expect(emu.state.requests.length - count).toBe(1);
  });
});

describe('gitlab target: a failed new top-level upload', () => {
  it('deletes the project it made, so nothing is left behind', async () => {
    const broken: Entry = { path: 'Study/b.bin', kind: 'file', size: 3, mtime: null, hashes: {}, open: () => Promise.reject(new Error('the source disk went away')) };
    const failure = await target.write(ctx(), null, iterate([folderEntry('Study'), fileEntry('Study/a.txt', 'a'), broken]), opts()).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Error);
    expect((failure as Error).message).toContain('The new GitLab project alice/study was removed again, so nothing is left behind.');
    expect(emu.state.projects.map((project) => project.name)).not.toContain('Study');
  });

  it('where GitLab deletes later, the project it marked is gone to Ferry: not listed, not read, not written, its name free again', async () => {
    emu.state.delayedDeletion = true;
    try {
      const broken: Entry = { path: 'Kept/b.bin', kind: 'file', size: 3, mtime: null, hashes: {}, open: () => Promise.reject(new Error('the source disk went away')) };
      const failure = await target.write(ctx(), null, iterate([folderEntry('Kept'), fileEntry('Kept/a.txt', 'a'), broken]), opts()).catch((error: unknown) => error);
      expect((failure as Error).message).toContain('The new GitLab project alice/kept was removed again');
      // GitLab keeps it, renamed and marked (test/emulators/gitlab/server.ts delayedDeletion) …
      const marked = emu.state.projects.find((project) => project.name.startsWith('Kept-deletion_scheduled-'))!;
      expect(marked.markedForDeletionOn).toMatch(/^\d{4}-\d\d-\d\d$/);
      // … and Ferry treats it as deleted
      expect((await collect(target.list(ctx(), { container: null }))).map((node) => node.title)).not.toContain(marked.name);
      for (const attempt of [target.detail(ctx(), `p${marked.id}`), target.write(ctx(), `p${marked.id}`, iterate([fileEntry('x.txt', 'x')]), opts())]) {
        await expect(attempt).rejects.toMatchObject({ status: 404, message: expect.stringContaining('was deleted on') });
      }
      const again = await target.write(ctx(), null, iterate([folderEntry('Kept'), fileEntry('Kept/a.txt', 'a')]), opts());
      expect(again.newResource?.title).toBe('Kept');
    } finally {
      emu.state.delayedDeletion = false;
    }
  });
});
