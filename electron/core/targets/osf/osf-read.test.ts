import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResourceNode } from '../../target.js';
import { FILE_EXTRA_FIELDS } from './mapping.js';
import { fileNodeId, nodeId, storageId } from './ids.js';
import { collect, md5, osfFixture, readAll, sha256, type OsfFixture } from './test-helpers.js';

const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;

describe('OSF target: list, detail, read (emulator over HTTP)', () => {
  let f: OsfFixture;
  let project: string;
  let component: string;
  let bigFolder: string;
  let fileA: string;
  let nested: string;

  beforeAll(async () => {
    f = await osfFixture();
    const s = f.emu.state;
    const p = s.addNode({ title: '> Study & <Data', owner: f.userId, description: 'a study', tags: ['x'] });
    project = p.id;
    fileA = s.addFile(p.id, '/a.txt', 'alpha bytes').id;
    nested = s.addFile(p.id, '/raw/2024/b.csv', 'x,y\n1,2\n').id;
    s.addFolder(p.id, '/empty/');
    bigFolder = s.addFolder(p.id, '/many/').id;
    // 120 files: more than the default page (10) and more than the largest page (100)
    for (let i = 0; i < 120; i++) s.addFile(p.id, `/many/f-${String(i).padStart(3, '0')}.txt`, `file ${i}`);
    const c = s.addNode({ title: 'Analysis', owner: f.userId, parent: p.id, category: 'analysis' });
    component = c.id;
    s.addFile(c.id, '/script.R', 'print(1)');
    // a component titled like a folder of its project
    const clash = s.addNode({ title: 'raw', owner: f.userId, parent: p.id });
    s.addFile(clash.id, '/c.txt', 'clash');
    s.addNode({ title: 'Second project', owner: f.userId, public: true });
    // somebody else's private project stays invisible
    const other = s.addUser('Other');
    s.addNode({ title: 'Not mine', owner: other.id });
  });
  afterAll(() => f.emu.close());

  it('lists the top level: projects only, titles unescaped', async () => {
    const top = await collect(f.target.list(f.ctx, { container: null }));
    expect(top.map((r) => r.title).sort()).toEqual(['> Study & <Data', 'Second project']);
    expect(top.every((r) => r.container === null && r.kind === 'container' && r.kind_name === 'folder')).toBe(true);
    expect(top.find((r) => r.title === '> Study & <Data')!.id).toBe(nodeId(project));
  });

  it('lists everything recursively, every file once, across pages, waiting out a 429', async () => {
    f.emu.state.failNext({ path: `/files/osfstorage/${bigFolder}/`, server: 'api', status: 429, retryAfter: 1 });
    const started = Date.now();
    const all = await collect(f.target.list(f.ctx));
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    const ids = all.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    const many = all.filter((r) => r.container === fileNodeId(project, 'osfstorage', bigFolder));
    expect(many).toHaveLength(120);
    expect(many.every((r) => r.kind === 'item' && r.kind_name === 'file')).toBe(true);
    const byId = new Map(all.map((r) => [r.id, r] as [string, ResourceNode]));
    expect(byId.get(nodeId(component))!.container).toBe(nodeId(project));
    expect(byId.get(storageId(component, 'osfstorage'))!.container).toBe(nodeId(component));
    expect(byId.get(fileNodeId(project, 'osfstorage', nested))!.title).toBe('b.csv');
    expect(all.some((r) => r.title === 'Not mine')).toBe(false);
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_-]+$/);
    // pinned version, explicit sort, largest page, token on API requests
    const listings = f.emu.state.requests.filter((r) => r.server === 'api' && r.url.includes('/files/osfstorage/'));
    expect(listings.every((r) => r.accept?.includes('version=2.20') && r.authorization)).toBe(true);
    expect(listings.filter((r) => r.status === 200).every((r) => /sort=name/.test(r.url) && /page%5Bsize%5D=100|page\[size\]=100/.test(r.url))).toBe(true);
    expect(listings.some((r) => r.status === 429)).toBe(true);
  });

  it('retries a failing listing once per allowed attempt, then passes the 503 on (one retry layer, not two nested)', async () => {
    const before = f.emu.state.requests.length;
    f.emu.state.failNext({ path: `/files/osfstorage/${bigFolder}/`, server: 'api', status: 503, retryAfter: 0, times: 50 });
    try {
      const error = await collect(f.target.list(f.ctx, { container: fileNodeId(project, 'osfstorage', bigFolder) })).catch((e: unknown) => e);
      expect(error).toMatchObject({ status: 503, code: 'upstream_unavailable' });
      const attempts = f.emu.state.requests.slice(before).filter((r) => r.url.includes(`/files/osfstorage/${bigFolder}/`));
      // the fixture's target allows 3 retries: 4 attempts in all
      expect(attempts.map((r) => r.status)).toEqual([503, 503, 503, 503]);
    } finally {
      f.emu.state.faults.length = 0;
    }
  });

  it('lists the children of a node, a storage and a folder', async () => {
    const ofNode = await collect(f.target.list(f.ctx, { container: nodeId(project) }));
    expect(ofNode.map((r) => r.title)).toEqual(['osfstorage', 'Analysis', 'raw']);
    const ofStorage = await collect(f.target.list(f.ctx, { container: storageId(project, 'osfstorage') }));
    expect(ofStorage.map((r) => r.title)).toEqual(['a.txt', 'empty', 'many', 'raw']);
    const raw = ofStorage.find((r) => r.title === 'raw')!;
    const ofFolder = await collect(f.target.list(f.ctx, { container: raw.id }));
    expect(ofFolder).toEqual([expect.objectContaining({ title: '2024', container: raw.id, kind: 'container' })]);
  });

  it('gives file detail with the contract extra, OSF hashes and normalised timestamps', async () => {
    const detail = await f.target.detail(f.ctx, fileNodeId(project, 'osfstorage', fileA));
    expect(detail).toMatchObject({ kind: 'item', kind_name: 'file', title: 'a.txt', container: storageId(project, 'osfstorage') });
    expect(Object.keys(detail.extra)).toEqual([...FILE_EXTRA_FIELDS]);
    expect(detail.extra).toMatchObject({ materialized_path: '/a.txt', current_version: 1, provider: 'osfstorage', path: `/${fileA}`, guid: null, checkout: null, tags: [], size: 11, last_touched: null });
    expect(detail.hashes).toEqual({ md5: md5('alpha bytes'), sha256: sha256('alpha bytes') });
    expect(detail.date_created).toMatch(TIMESTAMP);
    expect(detail.date_modified).toMatch(TIMESTAMP);
    const deep = await f.target.detail(f.ctx, fileNodeId(project, 'osfstorage', nested));
    expect(deep.container).toMatch(/^f-/);
    expect(deep.extra.materialized_path).toBe('/raw/2024/b.csv');
  });

  it('gives node, storage and folder detail', async () => {
    const node = await f.target.detail(f.ctx, nodeId(component));
    expect(node).toMatchObject({ title: 'Analysis', container: nodeId(project), hashes: {}, extra: { category: 'analysis', public: false } });
    expect(node.date_created).toMatch(TIMESTAMP);
    const top = await f.target.detail(f.ctx, nodeId(project));
    expect(top).toMatchObject({ title: '> Study & <Data', container: null, extra: { category: 'project', description: 'a study', tags: ['x'] } });
    const storage = await f.target.detail(f.ctx, storageId(project, 'osfstorage'));
    expect(storage).toMatchObject({ kind: 'container', title: 'osfstorage', container: nodeId(project), hashes: {} });
    const folder = await f.target.detail(f.ctx, fileNodeId(project, 'osfstorage', bigFolder));
    expect(folder).toMatchObject({ kind: 'container', title: 'many', hashes: {}, date_created: null });
  });

  it('downloads a file through WaterButler; the storage host never sees the token', async () => {
    const before = f.emu.state.requests.length;
    const result = await f.target.read(f.ctx, fileNodeId(project, 'osfstorage', fileA));
    const [entry] = await collect(result.entries);
    expect(entry).toMatchObject({ path: 'a.txt', kind: 'file', size: 11, hashes: { md5: md5('alpha bytes'), sha256: sha256('alpha bytes') } });
    expect((await readAll(await entry!.open())).toString()).toBe('alpha bytes');
    const traffic = f.emu.state.requests.slice(before);
    const files = traffic.filter((r) => r.server === 'files');
    const storage = traffic.filter((r) => r.server === 'storage');
    expect(files).toHaveLength(1);
    expect(files[0]).toMatchObject({ authorization: true, status: 302 });
    expect(storage).toHaveLength(1);
    expect(storage[0]).toMatchObject({ authorization: false, status: 200 });
  });

  it('refuses an HTML sign-in page in place of a file', async () => {
    const result = await f.target.read(f.ctx, fileNodeId(project, 'osfstorage', fileA));
    const [entry] = await collect(result.entries);
    f.emu.state.failNext({ path: `/${fileA}`, server: 'files', status: 200, contentType: 'text/html; charset=utf-8', body: '<html><title>OSF | Sign in</title></html>' });
    await expect(entry!.open()).rejects.toThrow(/OSF answered with a sign-in page instead of the file 'a\.txt'/);
  });

  it('reads a folder as entries with OSF hashes', async () => {
    const raw = (await collect(f.target.list(f.ctx, { container: storageId(project, 'osfstorage') }))).find((r) => r.title === 'raw')!;
    const result = await f.target.read(f.ctx, raw.id);
    expect(result.title).toBe('raw');
    const list = await collect(result.entries);
    expect(list.map((e) => `${e.kind}:${e.path}`)).toEqual(['folder:raw', 'folder:raw/2024', 'file:raw/2024/b.csv']);
    const file = list[2]!;
    expect(file.hashes.sha256).toBe(sha256('x,y\n1,2\n'));
    expect((await readAll(await file.open())).toString()).toBe('x,y\n1,2\n');
  });

  it('reads a whole project: osfstorage at its root, components as subfolders', async () => {
    const result = await f.target.read(f.ctx, nodeId(project));
    expect(result.title).toBe('> Study & <Data');
    const paths = (await collect(result.entries)).map((e) => e.path);
    expect(paths[0]).toBe('> Study & <Data');
    expect(paths).toContain('> Study & <Data/a.txt');
    expect(paths).toContain('> Study & <Data/empty');
    expect(paths).toContain('> Study & <Data/raw/2024/b.csv');
    expect(paths).toContain('> Study & <Data/Analysis/script.R');
    expect(paths.filter((p) => p.startsWith('> Study & <Data/many/'))).toHaveLength(120);
    // the component named "raw" does not merge into the folder "raw"
    expect(paths.some((p) => /^> Study & <Data\/raw \([a-z0-9]+\)\/c\.txt$/.test(p))).toBe(true);
    expect(new Set(paths).size).toBe(paths.length);
  });

  it('maps a bad token to 401 with an actionable message, and a foreign project to 403', async () => {
    const bad = { token: 'not-a-token', signal: new AbortController().signal };
    await expect(collect(f.target.list(bad, { container: null }))).rejects.toMatchObject({ status: 401, code: 'unauthorized', message: expect.stringMatching(/the OSF token is invalid or expired/i) });
    const other = [...f.emu.state.nodes.values()].find((n) => n.title === 'Not mine')!;
    await expect(f.target.detail(f.ctx, nodeId(other.id))).rejects.toMatchObject({ status: 403, code: 'forbidden' });
    await expect(f.target.detail(f.ctx, 'n-zzzzz')).rejects.toMatchObject({ status: 404 });
    await expect(f.target.detail(f.ctx, 'x.json')).rejects.toMatchObject({ status: 404 });
  });
});
