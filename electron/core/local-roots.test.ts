import { mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LOCAL_ROOTS_FILE, LocalRoots, type LocalRoot } from './local-roots.js';
import { TargetRegistry } from './registry.js';
import type { Target } from './target.js';

let base: string;
let dataDir: string;
let workspace: string;
let data: string;

beforeEach(async () => {
  base = await mkdtemp(path.join(os.tmpdir(), 'ferry-roots-'));
  dataDir = path.join(base, 'data');
  workspace = path.join(base, 'workspace');
  data = path.join(base, 'Field Data');
  for (const dir of [dataDir, path.join(dataDir, 'jobs'), workspace, data]) await mkdir(dir, { recursive: true });
  await writeFile(path.join(base, 'a-file.txt'), 'x');
});
afterEach(() => rm(base, { recursive: true, force: true }));

const fakeTarget = (root: LocalRoot) => ({ info: { name: root.name, readable_name: root.label }, root }) as unknown as Target;
function roots(registry = new TargetRegistry()) {
  return { registry, roots: new LocalRoots({ dataDir, workspace, registry, createTarget: fakeTarget }) };
}

describe('LocalRoots.put refuses, with a sentence', () => {
  it.each([
    ['', /Enter the folder/],
    ['relative/folder', /whole path/],
    ['/no/such/folder/anywhere', /no folder at that path/],
    ['<base>/a-file.txt', /is a file/],
    ['<data>', /Ferry's own data folder/],
    ['<data>/jobs', /Ferry's own data folder/],
    ['<workspace>', /already shows as "Local folders"/],
  ])('%s', async (given, sentence) => {
    const { roots: subject, registry } = roots();
    const raw = given.replace('<base>', base).replace('<data>', dataDir).replace('<workspace>', workspace);
    await expect(subject.put(raw)).rejects.toMatchObject({ status: 400, message: expect.stringMatching(sentence) });
    expect(registry.all()).toHaveLength(0);
    // nothing written, and the message never carries the path
    await expect(stat(path.join(dataDir, LOCAL_ROOTS_FILE))).rejects.toThrow();
    await subject.put(raw).catch((error: Error) => expect(raw && error.message.includes(raw)).toBeFalsy());
  });
});

describe('LocalRoots', () => {
  it('adds a folder as local-<slug>, persists it 0600, and a new core registers it again', async () => {
    const { roots: subject, registry } = roots();
    const root = await subject.put(data);
    expect(root).toEqual({ name: 'local-field-data', label: 'Field Data', path: data });
    expect(registry.find('local-field-data')).toBeDefined();
    const file = path.join(dataDir, LOCAL_ROOTS_FILE);
    if (process.platform !== 'win32') expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ roots: [root] });

    const again = roots();
    await again.roots.load();
    expect(again.roots.list()).toEqual([root]);
    expect(again.registry.find('local-field-data')).toBeDefined();
  });

  it('the same folder twice (also through a symbolic link) renames instead of adding', async () => {
    const { roots: subject, registry } = roots();
    await subject.put(data);
    const link = path.join(base, 'link');
    await symlink(data, link);
    const renamed = await subject.put(link, '  Survey  2026 ');
    expect(renamed).toEqual({ name: 'local-field-data', label: 'Survey 2026', path: data });
    expect(subject.list()).toHaveLength(1);
    expect(registry.get('local-field-data').info.readable_name).toBe('Survey 2026');
  });

  it('two folders with one name get distinct targets', async () => {
    const other = path.join(base, 'other', 'Field Data');
    await mkdir(other, { recursive: true });
    const { roots: subject } = roots();
    const [a, b] = await Promise.all([subject.put(data), subject.put(other)]);
    expect([a.name, b.name]).toEqual(['local-field-data', 'local-field-data-2']);
  });

  it('remove forgets the folder (and its target) but leaves its files', async () => {
    const { roots: subject, registry } = roots();
    const root = await subject.put(data);
    await subject.remove(root.name);
    expect(registry.find(root.name)).toBeUndefined();
    expect(subject.list()).toEqual([]);
    expect((await stat(data)).isDirectory()).toBe(true);
    await expect(subject.remove(root.name)).rejects.toMatchObject({ status: 404 });
  });

  it('a damaged file leaves only the workspace, said once', async () => {
    await writeFile(path.join(dataDir, LOCAL_ROOTS_FILE), '{not json');
    const { roots: subject, registry } = roots();
    await subject.load();
    expect(registry.all()).toHaveLength(0);
  });
});

describe('TargetRegistry.generation', () => {
  it('moves when a local folder comes or goes, so cached target lists are renewed', async () => {
    const { roots: subject, registry } = roots();
    const before = registry.generation;
    const root = await subject.put(data);
    expect(registry.generation).toBeGreaterThan(before);
    const added = registry.generation;
    await subject.remove(root.name);
    expect(registry.generation).toBeGreaterThan(added);
  });
});
