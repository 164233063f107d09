import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startGithubEmulator, type GithubEmulator, type GithubUser } from '../../../../test/emulators/github/server.js';
import { FaultPlan } from '../../../../test/emulators/shared/faults.js';
import { collect, drain, readAll } from '../../../../test/target-suite/test-entries.js';
import { makeConfig } from '../../config.js';
import { FerryError } from '../../errors.js';
import { MemorySecretStore } from '../../keychain/memory.js';
import type { Entry, ResourceNode, Target, TargetContext, WriteOptions } from '../../target.js';
import { gitBlobSha } from '../forge/git-hash.js';
import { createGithubTarget } from './index.js';
import { sanitizeRepoName } from './github-write.js';

const TOKEN = 'ghp_test_token_alice';
let emu: GithubEmulator;
let alice: GithubUser;
let target: Target;
const ctx = (token = TOKEN): TargetContext => ({ token, signal: new AbortController().signal });
const writeOptions = (duplicateAction: 'ignore' | 'update' = 'ignore'): WriteOptions => ({ duplicateAction, signal: new AbortController().signal, jobLabel: 'Ferry upload 1b2c3d' });

function fileEntry(path: string, content: string | Buffer, size?: number | null): Entry {
  const bytes = Buffer.from(content);
  return { path, kind: 'file', size: size === undefined ? bytes.length : size, mtime: null, hashes: {}, open: async () => Readable.from([bytes]) };
}
function folderEntry(path: string): Entry {
  return { path, kind: 'folder', size: null, mtime: null, hashes: {}, open: () => Promise.reject(new Error('folder')) };
}
async function* iterate(entries: Entry[]): AsyncGenerator<Entry> {
  yield* entries;
}

beforeEach(async () => {
  emu = await startGithubEmulator();
  alice = { id: 1, login: 'alice' };
  emu.state.tokens.set(TOKEN, alice);
  emu.state.tokens.set('ghp_bob', { id: 2, login: 'bob' });
  target = createGithubTarget(makeConfig({ remotes: { ...makeConfig().remotes, githubApiUrl: emu.url } }), new MemorySecretStore(), { writeSpacingMs: 0, maxRateWaitMs: 5000 });
});
afterEach(async () => {
  await emu.close();
});

describe('github target: listing and detail', () => {
  it('pages through /user/repos via Link headers and walks trees', async () => {
    for (let i = 0; i < 105; i++) emu.state.addRepo(alice, `repo-${String(i).padStart(3, '0')}`);
    emu.state.addRepo(alice, 'zz-data', { 'README.md': 'hello', 'data/a.csv': '1,2\n', 'data/sub/b.txt': 'b' });
    const top = await collect(target.list(ctx(), { container: null }));
    expect(top).toHaveLength(106);
    expect(emu.state.requests.filter((r) => r === 'GET /user/repos')).toHaveLength(2);
    for (const node of top) expect(node.id).toMatch(/^[A-Za-z0-9_-]+$/);

    const all = await collect(target.list(ctx()));
    const data = all.filter((n) => n.id.startsWith(top.at(-1)!.id));
    const titles = data.map((n) => `${n.kind_name}:${n.title}`).sort();
    expect(titles).toEqual(['file:README.md', 'file:a.csv', 'file:b.txt', 'folder:data', 'folder:sub', 'folder:zz-data']);
    const sub = data.find((n) => n.title === 'sub') as ResourceNode;
    const b = data.find((n) => n.title === 'b.txt') as ResourceNode;
    expect(b.container).toBe(sub.id);
    expect(b.id).not.toContain('.');

    const children = await collect(target.list(ctx(), { container: sub.id }));
    expect(children.map((c) => c.title)).toEqual(['b.txt']);
  });

  it('walks sub-trees when the recursive listing is truncated', async () => {
    const repo = emu.state.addRepo(alice, 'big', { 'a/1.txt': '1', 'a/2.txt': '2', 'b/c/3.txt': '3', 'top.txt': 't' });
    emu.state.treeTruncateAt = 2;
    const nodes = await collect(target.list(ctx(), undefined));
    expect(nodes.filter((n) => n.kind === 'item').map((n) => n.title).sort()).toEqual(['1.txt', '2.txt', '3.txt', 'top.txt']);
    expect(repo.name).toBe('big');
  });

  it('reports git blob ids as git-sha1 and repo dates', async () => {
    const repo = emu.state.addRepo(alice, 'hashes', { 'test.txt': 'Test content' });
    const detail = await target.detail(ctx(), `r${repo.id}`);
    expect(detail.kind).toBe('container');
    expect(detail.hashes).toEqual({});
    expect(detail.date_created).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    const [file] = (await collect(target.list(ctx(), { container: `r${repo.id}` })));
    const fileDetail = await target.detail(ctx(), file!.id);
    // the value GitHub itself recorded for these 12 bytes (octokit/fixtures create-file)
    expect(fileDetail.hashes).toEqual({ 'git-sha1': '3f3f005b29247e51a4f4d6b8ce07b67646cd6074' });
    expect(fileDetail.extra.size).toBe(12);
    expect(fileDetail.date_modified).not.toBeNull();
    expect(target.info.supported_hash_algorithms).toEqual(['git-sha1']);
  });

  it('flags LFS pointer files in extra', async () => {
    const pointer = 'version https://git-lfs.github.com/spec/v1\noid sha256:' + 'a'.repeat(64) + '\nsize 123456789\n';
    const repo = emu.state.addRepo(alice, 'lfs', { 'big.bin': pointer });
    const [file] = await collect(target.list(ctx(), { container: `r${repo.id}` }));
    const detail = await target.detail(ctx(), file!.id);
    expect(detail.extra.lfs_pointer).toBe(true);
    expect(detail.extra.lfs_size).toBe(123456789);
  });

  it('401 for a bad token, 404 with a scope hint for a hidden private repo', async () => {
    const bobs = emu.state.addRepo({ id: 2, login: 'bob' }, 'secret', { 'x.txt': 'x' });
    await expect(collect(target.list(ctx('ghp_wrong'), { container: null }))).rejects.toMatchObject({ status: 401, code: 'unauthorized', message: 'The GitHub token is invalid or expired.' });
    const error = await target.detail(ctx(), `r${bobs.id}`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FerryError);
    expect(error).toMatchObject({ status: 404, code: 'resource_not_found' });
    expect((error as Error).message).toContain('`repo` scope');
    await expect(target.detail(ctx(), 'not-an-id')).rejects.toMatchObject({ status: 404 });
  });

  it('treats an empty repository as a container with no items', async () => {
    const repo = emu.state.addRepo(alice, 'empty');
    expect(await collect(target.list(ctx(), { container: `r${repo.id}` }))).toEqual([]);
    const read = await target.read(ctx(), `r${repo.id}`);
    expect((await collect(read.entries)).map((e) => e.path)).toEqual(['empty']);
  });
});

describe('github target: download', () => {
  it('streams files with the git blob id checked in flight', async () => {
    const big = Buffer.alloc(1_500_000, 7); // over the contents API's 1 MB JSON limit
    const repo = emu.state.addRepo(alice, 'dl', { 'docs/a.txt': 'alpha', 'docs/big.bin': big, 'root.txt': 'r' });
    const read = await target.read(ctx(), `r${repo.id}`);
    expect(read.title).toBe('dl');
    const entries = await collect(read.entries);
    expect(entries.map((e) => `${e.kind}:${e.path}`).sort()).toEqual(['file:dl/docs/a.txt', 'file:dl/docs/big.bin', 'file:dl/root.txt', 'folder:dl', 'folder:dl/docs']);
    const bigEntry = entries.find((e) => e.path === 'dl/docs/big.bin')!;
    expect(bigEntry.hashes['git-sha1']).toBe(gitBlobSha(big));
    expect((await readAll(await bigEntry.open())).equals(big)).toBe(true);

    const folder = (await collect(target.list(ctx(), { container: `r${repo.id}` }))).find((n) => n.title === 'docs')!;
    const folderRead = await target.read(ctx(), folder.id);
    expect((await collect(folderRead.entries)).map((e) => e.path).sort()).toEqual(['docs', 'docs/a.txt', 'docs/big.bin']);
  });

  it('downloads a repository of 3,000 files in one shallow fetch, within a primary budget of 100 requests', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 3000; i++) files[`d${i % 30}/f${i}.txt`] = `file ${i}\n`;
    const repo = emu.state.addRepo(alice, 'many-files', files);
    emu.state.rateLimit.remaining = 100;
    const read = await target.read(ctx(), `r${repo.id}`);
    const bytes = await drain(read.entries);
    expect([...bytes.values()].filter((b) => b !== null)).toHaveLength(3000);
    expect(bytes.get('many-files/d7/f2707.txt')!.toString()).toBe('file 2707\n');
    expect(emu.state.rateLimit.remaining).toBeGreaterThan(90);
    await target.close?.();
  });

  it('a shallow fetch that fails on the way (503, a corrupted pack, a reset mid-pack) is fetched again; one that never answers fails clearly', async () => {
    const plan = new FaultPlan();
    const faulty = await startGithubEmulator({ faults: plan });
    try {
      faulty.state.tokens.set(TOKEN, alice);
      const repo = faulty.state.addRepo(alice, 'flaky', { 'a.txt': 'alpha', 'd/b.bin': Buffer.alloc(50_000, 3) });
      const flaky = createGithubTarget(makeConfig({ remotes: { ...makeConfig().remotes, githubApiUrl: faulty.url } }), new MemorySecretStore(), { writeSpacingMs: 0, timeoutMs: 500 });
      plan.add({ kind: 'status', method: 'POST', path: '/git-upload-pack', status: 503, retryAfter: 0 });
      plan.add({ kind: 'corrupt', method: 'POST', path: '/git-upload-pack', afterBytes: 200 });
      plan.add({ kind: 'reset-download', method: 'POST', path: '/git-upload-pack', afterBytes: 100 });
      const bytes = await drain((await flaky.read(ctx(), `r${repo.id}`)).entries);
      expect(plan.pending).toEqual([]);
      expect(bytes.get('flaky/d/b.bin')!.equals(Buffer.alloc(50_000, 3))).toBe(true);
      await flaky.close?.();
      plan.add({ kind: 'stall', method: 'POST', path: '/git-upload-pack', times: Infinity });
      const fresh = createGithubTarget(makeConfig({ remotes: { ...makeConfig().remotes, githubApiUrl: faulty.url } }), new MemorySecretStore(), { writeSpacingMs: 0, timeoutMs: 300 });
      await expect(fresh.read(ctx(), `r${repo.id}`).then((r) => drain(r.entries))).rejects.toMatchObject({ message: expect.stringMatching(/did not answer within/) });
      await fresh.close?.();
    } finally {
      plan.clear();
      await faulty.close();
    }
  });

  it('fails the stream with a fixity error when the bytes do not match (a repository read file by file)', async () => {
    const repo = emu.state.addRepo(alice, 'bad', { 'a.txt': 'genuine bytes' });
    emu.state.corruptBlobs.add(gitBlobSha(Buffer.from('genuine bytes')));
    const restOnly = createGithubTarget(makeConfig({ remotes: { ...makeConfig().remotes, githubApiUrl: emu.url } }), new MemorySecretStore(), { writeSpacingMs: 0, shallowReadMaxBytes: -1 });
    const read = await restOnly.read(ctx(), `r${repo.id}`);
    const file = (await collect(read.entries)).find((e) => e.kind === 'file')!;
    await expect(readAll(await file.open())).rejects.toThrow(/Fixity check failed for "bad\/a.txt"/);
  });
});

describe('github target: upload', () => {
  it('writes a job as exactly one commit, honouring ignore and update', async () => {
    const repo = emu.state.addRepo(alice, 'up', { 'keep.txt': 'old', 'same.txt': 'same' });
    const before = emu.state.commitCount(repo);
    const outcome = await target.write(ctx(), `r${repo.id}`, iterate([folderEntry('new'), fileEntry('new/a.txt', 'A'), fileEntry('keep.txt', 'changed'), fileEntry('same.txt', 'same')]), writeOptions('ignore'));
    expect(outcome.created).toEqual(['new/a.txt']);
    expect(outcome.ignored.sort()).toEqual(['keep.txt', 'same.txt']);
    expect(emu.state.commitCount(repo)).toBe(before + 1);
    expect(emu.state.files(repo)['keep.txt']!.toString()).toBe('old');

    const pushesBefore = emu.state.pushes.length;
    const second = await target.write(ctx(), `r${repo.id}`, iterate([fileEntry('keep.txt', 'changed'), fileEntry('same.txt', 'same')]), writeOptions('update'));
    expect(second.updated).toEqual(['keep.txt']);
    expect(second.ignored).toEqual(['same.txt']);
    // identical bytes were recognised by their git blob id, not uploaded again: one push with one blob
    expect(emu.state.pushes.slice(pushesBefore).map((p) => p.blobs)).toEqual([1]);
    expect(emu.state.commitCount(repo)).toBe(before + 2);
    expect(emu.state.files(repo)['keep.txt']!.toString()).toBe('changed');
    const head = repo.git.commit(repo.refs.get('refs/heads/main')!)!;
    expect(head.message).toBe('Ferry: Ferry upload 1b2c3d\n');
    expect(head.author.email).toBe('1+alice@users.noreply.github.com');

    // nothing to change → no commit at all
    await target.write(ctx(), `r${repo.id}`, iterate([fileEntry('same.txt', 'same')]), writeOptions('update'));
    expect(emu.state.commitCount(repo)).toBe(before + 2);
  });

  it('uploads 300 files as one commit without running into the secondary limits (80 content-creating requests a minute)', async () => {
    const repo = emu.state.addRepo(alice, 'many', { 'README.md': 'many' });
    const files = Array.from({ length: 300 }, (_, i) => fileEntry(`data/f${i}.txt`, `file ${i}`));
    const outcome = await target.write(ctx(), `r${repo.id}`, iterate(files), writeOptions());
    expect(outcome.fileErrors).toEqual([]);
    expect(outcome.created).toHaveLength(300);
    expect(emu.state.commitCount(repo)).toBe(2);
    expect(Object.keys(emu.state.files(repo))).toHaveLength(301);
    // no content-creating REST request at all: the bytes went in one git push
    expect(emu.state.contentCreations).toEqual([]);
  });

  it('writes into a folder', async () => {
    const repo = emu.state.addRepo(alice, 'folders', { 'data/x.txt': 'x' });
    const folder = (await collect(target.list(ctx(), { container: `r${repo.id}` })))[0]!;
    const outcome = await target.write(ctx(), folder.id, iterate([fileEntry('y.txt', 'y')]), writeOptions());
    expect(outcome.created).toEqual(['y.txt']);
    expect(Object.keys(emu.state.files(repo)).sort()).toEqual(['data/x.txt', 'data/y.txt']);
  });

  it('fills an empty repository with one commit', async () => {
    const repo = emu.state.addRepo(alice, 'blank');
    const outcome = await target.write(ctx(), `r${repo.id}`, iterate([fileEntry('a.txt', 'a'), fileEntry('d/b.txt', 'b'), fileEntry('d/c.txt', 'c')]), writeOptions());
    expect(outcome.created.sort()).toEqual(['a.txt', 'd/b.txt', 'd/c.txt']);
    expect(emu.state.commitCount(repo)).toBe(1);
    expect(Object.keys(emu.state.files(repo)).sort()).toEqual(['a.txt', 'd/b.txt', 'd/c.txt']);
  });

  it('creates a new private repository for a top-level upload, with a distinct name on a clash', async () => {
    emu.state.addRepo(alice, 'My-Study');
    const outcome = await target.write(ctx(), null, iterate([folderEntry('My Study'), fileEntry('My Study/notes.md', '# notes'), fileEntry('My Study/raw/r.csv', '1')]), writeOptions());
    expect(outcome.newResource?.title).toBe('My-Study-2');
    const repo = emu.state.repos.find((r) => r.name === 'My-Study-2')!;
    expect(repo.private).toBe(true);
    expect(outcome.newResource?.id).toBe(`r${repo.id}`);
    expect(Object.keys(emu.state.files(repo)).sort()).toEqual(['notes.md', 'raw/r.csv']);
    expect(emu.state.commitCount(repo)).toBe(1);
    expect(sanitizeRepoName('Données 2024 (final)')).toBe('Donn-es-2024-final');
  });

  it("tells the job of a new repository before anything is pushed, and of each file only once the push landed (the resume journal's order)", async () => {
    const told: string[] = [];
    const pushesBefore = emu.state.pushes.length;
    const outcome = await target.write(ctx(), null, iterate([folderEntry('Journal'), fileEntry('Journal/a.txt', 'a'), fileEntry('Journal/d/b.txt', 'b')]), {
      ...writeOptions(),
      onNewResource: (resource) => told.push(`repository ${resource.id} ${resource.title}: ${emu.state.pushes.length - pushesBefore} pushes, ${emu.state.repos.some((r) => `r${r.id}` === resource.id)}`),
      // the paths as the job handed them (the top folder included): the journal's keys
      onFileWritten: (path) => told.push(`file ${path}: ${emu.state.pushes.length - pushesBefore} pushes`),
    });
    expect(told).toEqual([`repository ${outcome.newResource!.id} Journal: 0 pushes, true`, 'file Journal/a.txt: 1 pushes', 'file Journal/d/b.txt: 1 pushes']);
  });

  it("a new repository takes a transfer's description, homepage and keywords as topics; the rest is named in notes", async () => {
    const outcome = await target.write(ctx(), null, iterate([folderEntry('Tide Gauges'), fileEntry('Tide Gauges/a.csv', '1')]), {
      ...writeOptions(),
      metadata: {
        title: 'Tide Gauges',
        description: 'Hourly sea level.\n\nFrom 12 stations.',
        keywords: ['tides', 'Sea Level', 'Meeresspiegel (Nordsee)'],
        creators: [{ name: 'Ada Lovelace' }],
        license: 'CC-BY-4.0',
        related_identifiers: [{ identifier: 'https://doi.org/10.5281/zenodo.123', relation: 'isIdenticalTo' }, { identifier: '10.1000/paper', relation: 'isCitedBy' }],
        funding: [{ funder: 'NERC' }],
      },
    });
    const repo = emu.state.repos.find((r) => r.name === 'Tide-Gauges')!;
    expect(repo).toMatchObject({ description: 'Hourly sea level. From 12 stations.', homepage: 'https://doi.org/10.5281/zenodo.123', topics: ['tides', 'sea-level'] });
    expect(emu.state.requests).toContain(`PUT /repos/alice/Tide-Gauges/topics`);
    expect(outcome.created).toEqual(['a.csv']);
    expect(outcome.notes).toEqual([
      'GitHub keeps a description of one line and at most 350 characters, so the source\'s was joined into one line.',
      "GitHub topics are lower case with hyphens for spaces, so these keywords were written as: 'Sea Level' → 'sea-level'.",
      "GitHub topics hold only lowercase letters, numbers and hyphens (at most 50 characters), so the keywords 'Meeresspiegel (Nordsee)' were not added as topics.",
      expect.stringMatching(/^GitHub lists a repository's collaborators as GitHub accounts, so the creators \(Ada Lovelace\) were not added/),
      "GitHub reads a repository's licence from a LICENSE file in it, so the licence 'CC-BY-4.0' was not set; add that file.",
      "A GitHub repository holds no related identifiers other than the one made its homepage, funding; the source's were not carried.",
    ]);
    // without metadata the repository says which job made it, and no topics are sent
    await target.write(ctx(), null, iterate([folderEntry('Plain'), fileEntry('Plain/a.csv', '1')]), writeOptions());
    expect(emu.state.repos.find((r) => r.name === 'Plain')!.description).toBe('Created by Ferry from "Plain" (Ferry upload 1b2c3d)');
    expect(emu.state.requests).not.toContain('PUT /repos/alice/Plain/topics');
  });

  it('keeps 20 topics and names the rest; topics GitHub refuses are named in a note while the files still go in', async () => {
    const many = await target.write(ctx(), null, iterate([folderEntry('Survey'), fileEntry('Survey/a.csv', '1')]), {
      ...writeOptions(),
      metadata: { keywords: Array.from({ length: 21 }, (_, i) => `k${i}`) },
    });
    expect(emu.state.repos.find((r) => r.name === 'Survey')!.topics).toEqual(Array.from({ length: 20 }, (_, i) => `k${i}`));
    expect(many.notes).toEqual(["GitHub keeps at most 20 topics, so the keywords 'k20' were not added."]);

    const plan = new FaultPlan();
    const faulty = await startGithubEmulator({ faults: plan });
    try {
      faulty.state.tokens.set(TOKEN, alice);
      const refusing = createGithubTarget(makeConfig({ remotes: { ...makeConfig().remotes, githubApiUrl: faulty.url } }), new MemorySecretStore(), { writeSpacingMs: 0 });
      plan.add({ kind: 'status', method: 'PUT', path: '/topics', status: 403 });
      const outcome = await refusing.write(ctx(), null, iterate([folderEntry('Tides'), fileEntry('Tides/a.csv', '1')]), { ...writeOptions(), metadata: { keywords: ['tides'] } });
      const repo = faulty.state.repos.find((r) => r.name === 'Tides')!;
      expect(Object.keys(faulty.state.files(repo))).toEqual(['a.csv']);
      expect(repo.topics).toEqual([]);
      expect(outcome.notes).toEqual([expect.stringMatching(/^The topics \(tides\) could not be set on alice\/Tides: The GitHub token may not do this .* Add them on GitHub in the repository's About settings\.$/)]);
    } finally {
      await faulty.close();
    }
  });

  it('a new repository whose git endpoint answers 404 for a moment after its creation still gets the upload', async () => {
    emu.state.newRepoGitDelay = 2;
    const outcome = await target.write(ctx(), null, iterate([folderEntry('Fresh'), fileEntry('Fresh/a.txt', 'a')]), writeOptions());
    expect(outcome.created).toEqual(['a.txt']);
    const repo = emu.state.repos.find((r) => r.name === 'Fresh')!;
    expect(Object.keys(emu.state.files(repo))).toEqual(['a.txt']);
  });

  it("a repository made moments ago (a paused job's, resumed at once) whose git endpoint still answers 404 gets the upload", async () => {
    emu.state.newRepoGitDelay = 2;
    const made = await fetch(`${emu.url}/user/repos`, { method: 'POST', headers: { authorization: `token ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Moments', private: true }) });
    expect(made.status).toBe(201);
    const { id } = (await made.json()) as { id: number };
    const outcome = await target.write(ctx(), `r${id}`, iterate([fileEntry('a.txt', 'a')]), writeOptions());
    expect(outcome.created).toEqual(['a.txt']);
    expect(Object.keys(emu.state.files(emu.state.repos.find((r) => r.id === id)!))).toEqual(['a.txt']);
  });

  it('refuses a bad path in a top-level upload before creating the repository', async () => {
    const before = emu.state.repos.length;
    const write = target.write(ctx(), null, iterate([folderEntry('Study'), fileEntry('Study/ok.txt', 'ok'), fileEntry('Study/.git/config', 'x')]), writeOptions());
    await expect(write).rejects.toBeInstanceOf(FerryError);
    expect(emu.state.repos.length).toBe(before);
  });

  it('files over the size limit go through Git LFS: a pointer in the commit, the bytes in LFS storage, a .gitattributes line', async () => {
    const small = createGithubTarget(makeConfig({ remotes: { ...makeConfig().remotes, githubApiUrl: emu.url } }), new MemorySecretStore(), {
      writeSpacingMs: 0,
      limits: { maxFileBytes: 1000, warnFileBytes: 900, lfsMaxFileBytes: 5000 },
    });
    const repo = emu.state.addRepo(alice, 'lfs', { '.gitattributes': '*.psd binary\n', 'x.txt': 'x' });
    const big = Buffer.alloc(3000, 5);
    const outcome = await small.write(ctx(), `r${repo.id}`, iterate([fileEntry('data/big scan.bin', big), fileEntry('too big.bin', Buffer.alloc(6000, 1)), fileEntry('ok.txt', 'ok')]), writeOptions());
    expect(outcome.created.sort()).toEqual(['data/big scan.bin', 'ok.txt']);
    expect(outcome.fileErrors).toEqual([{ path: 'too big.bin', error: expect.stringMatching(/Git LFS limit of 0 MB per file/) }]);
    const oid = createHash('sha256').update(big).digest('hex');
    expect(emu.state.lfsObjects.get(oid)?.equals(big)).toBe(true);
    const files = emu.state.files(repo);
    expect(files['data/big scan.bin']!.toString()).toBe(`version https://git-lfs.github.com/spec/v1\noid sha256:${oid}\nsize 3000\n`);
    expect(files['.gitattributes']!.toString()).toBe('*.psd binary\n/data/big[[:space:]]scan.bin filter=lfs diff=lfs merge=lfs -text\n');
    expect(emu.state.commitCount(repo)).toBe(2);
    // the storage got its own one-off credentials, never the token
    expect(emu.state.lfsStorageRequests).toHaveLength(1);
    expect(emu.state.lfsStorageRequests.join(' ')).not.toContain(TOKEN);
    // the same file again: already in LFS and in the tree, nothing to send
    const again = await small.write(ctx(), `r${repo.id}`, iterate([fileEntry('data/big scan.bin', big)]), writeOptions('update'));
    expect(again.ignored).toEqual(['data/big scan.bin']);
    expect(emu.state.commitCount(repo)).toBe(2);
  });

  it('reports files over the size limit as per-file errors and keeps going, where the repository has no Git LFS', async () => {
    emu.state.lfsEnabled = false;
    const repo = emu.state.addRepo(alice, 'sizes', { 'x.txt': 'x' });
    const huge: Entry = { path: 'huge.bin', kind: 'file', size: 101 * 1024 * 1024, mtime: null, hashes: {}, open: async () => Readable.from([Buffer.alloc(10)]) };
    const outcome = await target.write(ctx(), `r${repo.id}`, iterate([huge, fileEntry('ok.txt', 'ok')]), writeOptions());
    expect(outcome.created).toEqual(['ok.txt']);
    expect(outcome.fileErrors).toHaveLength(1);
    expect(outcome.fileErrors[0]!.path).toBe('huge.bin');
    expect(outcome.fileErrors[0]!.error).toMatch(/100 MB/);
  });

  it('waits for a near rate-limit reset instead of hammering, and fails clearly when it is far', async () => {
    emu.state.addRepo(alice, 'one');
    emu.state.rateLimit.remaining = 0;
    emu.state.rateLimit.reset = Math.floor(Date.now() / 1000) + 2;
    const started = Date.now();
    const nodes = await collect(target.list(ctx(), { container: null }));
    expect(nodes).toHaveLength(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);

    emu.state.rateLimit.remaining = 0;
    emu.state.rateLimit.reset = Math.floor(Date.now() / 1000) + 3600;
    const requests = emu.state.requests.length;
    await expect(collect(target.list(ctx(), { container: null }))).rejects.toMatchObject({ status: 429, code: 'rate_limited' });
    expect(emu.state.requests.length - requests).toBeLessThanOrEqual(1);
  });
});

describe('github target: a failed new top-level upload', () => {
  const broken = (path: string): Entry => ({ path, kind: 'file', size: 3, mtime: null, hashes: {}, open: () => Promise.reject(new Error('the source disk went away')) });

  it('deletes the repository it made, so nothing is left behind', async () => {
    emu.state.deleteRepoTokens.add(TOKEN);
    const failure = await target.write(ctx(), null, iterate([folderEntry('Study'), fileEntry('Study/a.txt', 'a'), broken('Study/b.bin')]), writeOptions()).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Error);
    expect((failure as Error).message).toContain("The new GitHub repository alice/Study was removed again, so nothing is left behind.");
    expect(emu.state.repos.map((repo) => repo.name)).not.toContain('Study');
  });

  it('names the repository and how to delete it when the token may not delete repositories', async () => {
    const failure = await target.write(ctx(), null, iterate([folderEntry('Study'), broken('Study/b.bin')]), writeOptions()).catch((error: unknown) => error);
    expect((failure as Error).message).toMatch(/The new GitHub repository alice\/Study was left behind and could not be removed \(.*Must have admin rights to Repository.*\); delete it on GitHub at http.*\/alice\/Study\/settings/);
    expect(emu.state.repos.map((repo) => repo.name)).toContain('Study');
  });
});
