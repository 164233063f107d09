import { execFileSync } from 'node:child_process';
import { mkdir, readFile, symlink, writeFile, utimes } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FerryError } from '../../errors.js';
import { encodeLocalId } from './ids.js';
import { LocalTarget } from './local-target.js';
import { collect, ctx, tempDir } from './test-helpers.js';

const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;

/** Names that break naive ids or URLs. */
const AWKWARD = ['data.json', 'with space.txt', 'café.txt', 'cafe\u0301.txt', '100% sure.txt', 'hash#tag.txt', 'what?.txt'];

async function expectStatus(promise: Promise<unknown>, status: number): Promise<FerryError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(FerryError);
  expect((error as FerryError).status).toBe(status);
  return error as FerryError;
}

describe('LocalTarget reading', () => {
  let root: string;
  let outside: string;
  let cleanups: (() => Promise<void>)[];
  let target: LocalTarget;

  beforeEach(async () => {
    const workspace = await tempDir('ws');
    const elsewhere = await tempDir('outside');
    root = workspace.dir;
    outside = elsewhere.dir;
    cleanups = [workspace.cleanup, elsewhere.cleanup];
    // Data/ a.txt, sub/b.txt, awkward names; notes.md at the top; Empty/ folder.
    await mkdir(path.join(root, 'Data', 'sub'), { recursive: true });
    await mkdir(path.join(root, 'Empty'));
    await writeFile(path.join(root, 'Data', 'a.txt'), 'alpha\n');
    await writeFile(path.join(root, 'Data', 'sub', 'b.txt'), 'bravo bravo\n');
    for (const name of AWKWARD) await writeFile(path.join(root, 'Data', name), `content of ${name}`);
    await writeFile(path.join(root, 'notes.md'), '# notes\n');
    await writeFile(path.join(outside, 'secret.txt'), 'do not leak');
    target = new LocalTarget({ root });
  });

  afterEach(async () => {
    for (const cleanup of cleanups) await cleanup();
  });

  it('describes itself', () => {
    expect(target.info).toEqual({
      name: 'local',
      readable_name: 'Local folders',
      supported_actions: { resource_collection: true, resource_detail: true, resource_download: true, resource_upload: true },
      supported_hash_algorithms: ['md5', 'sha256'],
      credential: 'access-key',
      plainIds: true,
      supported_operations: { delete: true, rename: true, move: true, create_folder: true },
    });
  });

  it('lists everything flat, depth first in name order, with containers pointing at listed ids', async () => {
    const nodes = await collect(target.list(ctx()));
    const titles = nodes.map((node) => node.title);
    // A folder is followed by its own contents before its next sibling.
    const dataChildren = [...AWKWARD, 'a.txt', 'sub'].sort().flatMap((name) => (name === 'sub' ? ['sub', 'b.txt'] : [name]));
    expect(titles).toEqual(['Data', ...dataChildren, 'Empty', 'notes.md']);
    const byId = new Map(nodes.map((node) => [node.id, node]));
    expect(byId.size).toBe(nodes.length);
    for (const node of nodes) {
      if (node.container !== null) expect(byId.get(node.container)?.kind).toBe('container');
      expect(node.kind_name).toBe(node.kind === 'container' ? 'folder' : 'file');
      expect(node.id).not.toContain('.');
    }
    const b = nodes.find((node) => node.title === 'b.txt')!;
    expect(byId.get(b.container!)?.title).toBe('sub');
  });

  it('lists the top level and the direct children of a folder', async () => {
    const top = await collect(target.list(ctx(), { container: null }));
    expect(top.map((node) => [node.title, node.kind, node.container])).toEqual([
      ['Data', 'container', null],
      ['Empty', 'container', null],
      ['notes.md', 'item', null],
    ]);
    const data = top[0]!;
    const children = await collect(target.list(ctx(), { container: data.id }));
    expect(children.map((node) => node.title)).toEqual([...AWKWARD, 'a.txt', 'sub'].sort());
    expect(children.every((node) => node.container === data.id)).toBe(true);
    expect(await collect(target.list(ctx(), { container: top[1]!.id }))).toEqual([]);
  });

  it('refuses to list the children of a file or of an unknown id', async () => {
    await expectStatus(collect(target.list(ctx(), { container: encodeLocalId('notes.md') })), 404);
    await expectStatus(collect(target.list(ctx(), { container: encodeLocalId('Nope') })), 404);
    await expectStatus(collect(target.list(ctx(), { container: 'garbage.json' })), 404);
  });

  it('round-trips awkward names through their ids to the right file', async () => {
    const nodes = await collect(target.list(ctx()));
    for (const name of AWKWARD) {
      const node = nodes.find((candidate) => candidate.title === name);
      expect(node, name).toBeDefined();
      const detail = await target.detail(ctx(), node!.id);
      expect(detail.title).toBe(name);
      expect(detail.extra.materialized_path).toBe(`/Data/${name}`);
      const read = await target.read(ctx(), node!.id);
      const [entry] = await collect(read.entries);
      expect((await collect(await entry!.open())).map(String).join('')).toBe(`content of ${name}`);
    }
  });

  it('gives file details with md5/sha256 equal to md5sum/sha256sum and microsecond timestamps', async () => {
    const file = path.join(root, 'Data', 'sub', 'b.txt');
    // A time with real microseconds, so the format keeps them.
    await utimes(file, 1_700_000_000.123456, 1_700_000_000.123456);
    const detail = await target.detail(ctx(), encodeLocalId('Data/sub/b.txt'));
    const md5 = execFileSync('md5sum', [file], { encoding: 'utf8' }).split(' ')[0];
    const sha256 = execFileSync('sha256sum', [file], { encoding: 'utf8' }).split(' ')[0];
    expect(detail.hashes).toEqual({ md5, sha256 });
    expect(detail.date_created).toMatch(TIMESTAMP);
    expect(detail.date_modified).toMatch(TIMESTAMP);
    expect(detail.date_modified).toMatch(/^2023-11-14T22:13:20\.1234\d\dZ$/);
    expect(detail).toMatchObject({ kind: 'item', kind_name: 'file', title: 'b.txt', container: encodeLocalId('Data/sub') });
    expect(detail.extra).toMatchObject({
      materialized_path: '/Data/sub/b.txt',
      path: '/Data/sub/b.txt',
      provider: 'local',
      size: 12,
      tags: [],
      last_touched: null,
    });
    expect(JSON.stringify(detail)).not.toContain(root);
  });

  it('gives folder details with no hashes and a trailing slash', async () => {
    const detail = await target.detail(ctx(), encodeLocalId('Data/sub'));
    expect(detail).toMatchObject({ kind: 'container', kind_name: 'folder', hashes: {}, container: encodeLocalId('Data') });
    expect(detail.extra).toMatchObject({ materialized_path: '/Data/sub/', size: null, provider: 'local' });
    expect(detail.date_modified).toMatch(TIMESTAMP);
  });

  it('hashes a file once and answers the next detail from the cache, until the file changes', async () => {
    const id = encodeLocalId('Data/a.txt');
    const first = await target.detail(ctx(), id);
    expect(target.hashCache.computations).toBe(1);
    const second = await target.detail(ctx(), id);
    expect(target.hashCache.computations).toBe(1);
    expect(second.hashes).toEqual(first.hashes);
    await writeFile(path.join(root, 'Data', 'a.txt'), 'changed bytes\n');
    const third = await target.detail(ctx(), id);
    expect(target.hashCache.computations).toBe(2);
    expect(third.hashes.md5).not.toBe(first.hashes.md5);
  });

  it('reads a folder as the folder itself and everything below, paths starting with its title', async () => {
    const result = await target.read(ctx(), encodeLocalId('Data'));
    expect(result.title).toBe('Data');
    expect(result.root).toMatchObject({ id: encodeLocalId('Data'), kind: 'container', container: null });
    const entries = await collect(result.entries);
    expect(entries[0]).toMatchObject({ path: 'Data', kind: 'folder', size: null });
    expect(entries.every((entry) => entry.path === 'Data' || entry.path.startsWith('Data/'))).toBe(true);
    const b = entries.find((entry) => entry.path === 'Data/sub/b.txt')!;
    expect(b).toMatchObject({ kind: 'file', size: 12 });
    expect(b.mtime).toBeInstanceOf(Date);
    // each file opens on its own: a writer may stream a large one alongside the next
    expect(entries.filter((entry) => entry.kind === 'file').every((entry) => entry.opensIndependently === true)).toBe(true);
    expect(Buffer.concat(await collect(await b.open())).toString()).toBe('bravo bravo\n');
    expect(entries.filter((entry) => entry.kind === 'file')).toHaveLength(AWKWARD.length + 2);
  });

  it('reads a nested folder with paths relative to its own title', async () => {
    const result = await target.read(ctx(), encodeLocalId('Data/sub'));
    expect((await collect(result.entries)).map((entry) => entry.path)).toEqual(['sub', 'sub/b.txt']);
    expect(result.root.container).toBe(encodeLocalId('Data'));
  });

  it('reports hashes on read entries only once they are known', async () => {
    const id = encodeLocalId('notes.md');
    const [before] = await collect((await target.read(ctx(), id)).entries);
    expect(before!.hashes).toEqual({});
    const detail = await target.detail(ctx(), id);
    const [after] = await collect((await target.read(ctx(), id)).entries);
    expect(after!.hashes).toEqual(detail.hashes);
  });

  it('skips symlinks in listings and refuses them by id, whether they point outside or inside', async () => {
    await symlink(path.join(outside, 'secret.txt'), path.join(root, 'escape.txt'));
    await symlink(outside, path.join(root, 'EscapeDir'));
    await symlink(path.join(root, 'Data'), path.join(root, 'Data', 'loop'));
    await symlink(path.join(root, 'notes.md'), path.join(root, 'inside-link.md'));
    const nodes = await collect(target.list(ctx()));
    const titles = nodes.map((node) => node.title);
    for (const link of ['escape.txt', 'EscapeDir', 'loop', 'inside-link.md']) expect(titles).not.toContain(link);
    for (const id of [encodeLocalId('escape.txt'), encodeLocalId('EscapeDir'), encodeLocalId('EscapeDir/secret.txt'), encodeLocalId('Data/loop/a.txt'), encodeLocalId('inside-link.md')]) {
      await expectStatus(target.detail(ctx(), id), 404);
      await expectStatus(target.read(ctx(), id), 404);
    }
    await expectStatus(collect(target.list(ctx(), { container: encodeLocalId('EscapeDir') })), 404);
    const read = await collect((await target.read(ctx(), encodeLocalId('Data'))).entries);
    expect(read.some((entry) => entry.path.includes('loop'))).toBe(false);
  });

  it('refuses ids that leave the root', async () => {
    for (const relativePath of ['..', '../outside', '/etc/passwd']) {
      await expectStatus(target.detail(ctx(), encodeLocalId(relativePath)), 404);
    }
  });

  it('works when the root itself is reached through a symlink', async () => {
    const linkedRoot = path.join(outside, 'linked-root');
    await symlink(root, linkedRoot);
    const linked = new LocalTarget({ root: linkedRoot });
    const nodes = await collect(linked.list(ctx(), { container: null }));
    expect(nodes.map((node) => node.title)).toEqual(['Data', 'Empty', 'notes.md']);
    expect((await linked.detail(ctx(), encodeLocalId('notes.md'))).title).toBe('notes.md');
  });

  it('treats a missing workspace as empty', async () => {
    const missing = new LocalTarget({ root: path.join(outside, 'does-not-exist') });
    expect(await collect(missing.list(ctx()))).toEqual([]);
    await expectStatus(missing.detail(ctx(), encodeLocalId('x')), 404);
  });

  it('never shows its own temporary files', async () => {
    await writeFile(path.join(root, 'Data', '.ferry-0123456789abcdef.part'), 'half');
    const titles = (await collect(target.list(ctx()))).map((node) => node.title);
    expect(titles.some((title) => title.endsWith('.part'))).toBe(false);
    expect(await readFile(path.join(root, 'Data', '.ferry-0123456789abcdef.part'), 'utf8')).toBe('half');
  });
});
