import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, truncate, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { spawnSync } from 'node:child_process';
import yazl from 'yazl';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../limits.js';
import type { ResourceNode, TargetContext } from '../../target.js';
import { bagNameFor, writeBagZip } from '../../bag/bag-writer.js';
import { LocalTarget } from '../local/local-target.js';
import { OfflineTarget } from './offline-target.js';
import { indexArchive } from './archive-index.js';
import { writeManyEntriesZip } from '../../../../test/support/many-entries-zip.js';
import { overlapBombZip, rawZip } from '../../zip/testing/raw-zip.js';
import { deflateRawSync } from 'node:zlib';

const ctx = (): TargetContext => ({ token: 'checked-by-the-http-layer', signal: new AbortController().signal });
const md5 = (bytes: Buffer) => createHash('md5').update(bytes).digest('hex');
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of iterable) items.push(item);
  return items;
}

let dir: string;
let workspace: string;
let libraryDir: string;
let offline: OfflineTarget;
const original = new Map<string, Buffer>();

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-offline-'));
  workspace = path.join(dir, 'workspace');
  libraryDir = path.join(dir, 'library');
  await mkdir(libraryDir, { recursive: true });
  original.clear();
  const files: Record<string, Buffer> = {
    'Survey/answers.csv': Buffer.from('id,answer\n1,yes\n2,no\n'.repeat(200)),
    'Survey/raw/scan 1.bin': randomBytes(200_000),
    'Survey/raw/ünïcode #%.txt': Buffer.from('awkward name\n'),
    'Survey/notes/readme.md': Buffer.from('# Notes\n'),
  };
  for (const [relative, bytes] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(workspace, relative)), { recursive: true });
    await writeFile(path.join(workspace, relative), bytes);
    original.set(relative, bytes);
  }
  offline = new OfflineTarget({ libraryDirs: [libraryDir], stateDir: path.join(dir, 'state'), limits: DEFAULT_LIMITS });
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Downloads a local resource as our bag into the library, as "keep offline" does. */
async function downloadIntoLibrary(title: string): Promise<string> {
  const local = new LocalTarget({ root: workspace });
  const top = (await collect(local.list(ctx(), { container: null }))).find((node) => node.title === title)!;
  const read = await local.read(ctx(), top.id);
  const file = path.join(libraryDir, `${bagNameFor('local', top.id)}.zip`);
  await pipeline(writeBagZip(read, { targetName: 'local', resourceId: top.id, bagName: bagNameFor('local', top.id) }), createWriteStream(file));
  return file;
}

function pathsOf(nodes: ResourceNode[], byId: Map<string, ResourceNode>): string[] {
  const pathOf = (node: ResourceNode): string => {
    const parent = node.container ? byId.get(node.container) : undefined;
    return parent ? `${pathOf(parent)}/${node.title}` : node.title;
  };
  return nodes.map(pathOf).sort();
}

describe('offline library', () => {
  it('lists a downloaded bag as exactly the original tree, titled by its provenance', async () => {
    await downloadIntoLibrary('Survey');
    const nodes = await collect(offline.list(ctx()));
    const byId = new Map(nodes.map((node) => [node.id, node]));
    const tops = nodes.filter((node) => node.container === null);
    expect(tops.map((node) => node.title)).toEqual(['Survey']);
    const files = nodes.filter((node) => node.kind === 'item');
    // The bag's payload is data/Survey/...; the archive is titled Survey, so that folder is not shown twice.
    expect(pathsOf(files, byId)).toEqual([...original.keys()].sort());
    expect(nodes.filter((node) => node.title === 'Survey')).toHaveLength(1);
    expect(nodes.some((node) => /bagit|manifest|provenance/.test(node.title))).toBe(false);
    for (const node of nodes) expect(node.id).not.toContain('.');
    // info.plainIds promises the HTTP layer ids it may write unescaped: awkward names included
    expect(offline.info.plainIds).toBe(true);
    for (const node of nodes) expect(node.id).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it('gives detail hashes equal to the originals, and the source from the provenance file', async () => {
    await downloadIntoLibrary('Survey');
    const nodes = await collect(offline.list(ctx()));
    const byId = new Map(nodes.map((node) => [node.id, node]));
    for (const node of nodes.filter((candidate) => candidate.kind === 'item')) {
      const bytes = original.get(pathsOf([node], byId)[0]!)!;
      const detail = await offline.detail(ctx(), node.id);
      expect(detail.hashes).toEqual({ md5: md5(bytes), sha256: sha256(bytes) });
      expect(detail.extra.size).toBe(bytes.length);
      expect(detail.extra.source).toMatchObject({ target: 'local' });
      expect(detail.extra.fixity).toEqual({ state: 'unverified' });
      expect(detail.date_modified).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    }
  });

  it('downloads a sub-folder from the library as a valid bag with the same bytes', async () => {
    await downloadIntoLibrary('Survey');
    const nodes = await collect(offline.list(ctx()));
    const raw = nodes.find((node) => node.title === 'raw')!;
    const read = await offline.read(ctx(), raw.id);
    const out = path.join(dir, 'raw.zip');
    await pipeline(writeBagZip(read, { targetName: 'offline', resourceId: raw.id, bagName: 'offline_download_raw' }), createWriteStream(out));
    const extractTo = path.join(dir, 'extracted');
    expect(spawnSync('unzip', ['-q', out, '-d', extractTo]).status).toBe(0);
    const bag = path.join(extractTo, 'offline_download_raw');
    for (const relative of ['raw/scan 1.bin', 'raw/ünïcode #%.txt']) {
      expect(await readFile(path.join(bag, 'data', relative))).toEqual(original.get(`Survey/${relative}`));
    }
    const manifest = await readFile(path.join(bag, 'manifest-sha256.txt'), 'utf8');
    for (const line of manifest.trim().split('\n')) {
      const [hex, file] = line.split(/\s+(.+)/) as [string, string];
      expect(sha256(await readFile(path.join(bag, decodeURIComponent(file))))).toBe(hex);
    }
    const provenance = JSON.parse(await readFile(path.join(bag, 'ferry-provenance.json'), 'utf8')).entries[0];
    expect(provenance.files.every((file: { fixity: string }) => file.fixity === 'ok')).toBe(true);
  });

  it('shows an archive dropped into the folder, and forgets a removed one, without a restart', async () => {
    expect(await collect(offline.list(ctx(), { container: null }))).toEqual([]);
    const file = await downloadIntoLibrary('Survey');
    expect((await collect(offline.list(ctx(), { container: null }))).map((node) => node.title)).toEqual(['Survey']);
    await rm(file);
    expect(await collect(offline.list(ctx(), { container: null }))).toEqual([]);
  });

  it('verify: a flipped byte fails that file and verifies the rest; detail shows it', async () => {
    const file = await downloadIntoLibrary('Survey');
    const archiveId = (await collect(offline.list(ctx(), { container: null })))[0]!.id;
    // The random binary is stored (incompressible): its bytes sit verbatim in the archive.
    const zipBytes = await readFile(file);
    const target = original.get('Survey/raw/scan 1.bin')!;
    const at = zipBytes.indexOf(target.subarray(0, 64));
    expect(at).toBeGreaterThan(0);
    zipBytes[at + 1000] = zipBytes[at + 1000]! ^ 0xff;
    await writeFile(file, zipBytes);

    const progress: number[] = [];
    const outcome = await offline.verify(ctx(), archiveId, { signal: new AbortController().signal, onProgress: (done) => progress.push(done.files) });
    expect(outcome.failed.map((failure) => failure.path)).toContain('Survey/raw/scan 1.bin');
    expect(new Set(outcome.failed.map((failure) => failure.path))).toEqual(new Set(['Survey/raw/scan 1.bin']));
    expect(outcome.verified.sort()).toEqual(['Survey/answers.csv', 'Survey/notes/readme.md', 'Survey/raw/ünïcode #%.txt']);
    expect(progress.at(-1)).toBe(4);
    const sha = outcome.failed.find((failure) => failure.algorithm === 'sha256')!;
    expect(sha.expected).toBe(sha256(target));
    expect(sha.actual).not.toBe(sha.expected);

    const nodes = await collect(offline.list(ctx()));
    const scan = nodes.find((node) => node.title === 'scan 1.bin')!;
    const readme = nodes.find((node) => node.title === 'readme.md')!;
    expect((await offline.detail(ctx(), scan.id)).extra.fixity).toMatchObject({ state: 'failed', expected: expect.any(String), actual: expect.any(String) });
    expect((await offline.detail(ctx(), readme.id)).extra.fixity).toMatchObject({ state: 'verified' });
    expect((await offline.detail(ctx(), archiveId)).extra.fixity).toMatchObject({ verified: 3, failed: 1 });
  });

  it('verify: a plain ZIP gets its hashes recorded, and later corruption is caught', async () => {
    const file = path.join(libraryDir, 'plain.zip');
    const payload = randomBytes(50_000);
    const zip = new yazl.ZipFile();
    zip.addBuffer(payload, 'folder/data.bin', { compress: false });
    zip.addBuffer(Buffer.from('hello'), 'folder/hello.txt');
    zip.end();
    await pipeline(zip.outputStream, createWriteStream(file));
    const archiveId = (await collect(offline.list(ctx(), { container: null })))[0]!.id;
    const first = await offline.verify(ctx(), archiveId, { signal: new AbortController().signal, onProgress: () => {} });
    expect(first.failed).toEqual([]);
    expect(first.verified.sort()).toEqual(['folder/data.bin', 'folder/hello.txt']);

    // Corrupt the stored bytes: the hashes recorded at the first verification catch it.
    const bytes = await readFile(file);
    const at = bytes.indexOf(payload.subarray(0, 64));
    bytes[at + 10] = bytes[at + 10]! ^ 0x01;
    await writeFile(file, bytes);
    const second = await offline.verify(ctx(), archiveId, { signal: new AbortController().signal, onProgress: () => {} });
    const againsts = second.failed.filter((failure) => failure.path === 'folder/data.bin').map((failure) => failure.algorithm);
    expect(againsts).toEqual(expect.arrayContaining(['md5', 'sha256']));
    expect(second.verified).toEqual(['folder/hello.txt']);
  });
});

describe("a bag's one payload folder is the archive itself", () => {
  it('read() yields the title once: a download is data/Survey/..., a transfer makes Survey/... once', async () => {
    await downloadIntoLibrary('Survey');
    const [archive] = await collect(offline.list(ctx(), { container: null }));
    const read = await offline.read(ctx(), archive!.id);
    expect(read.title).toBe('Survey');
    const paths = (await collect(read.entries)).map((entry) => entry.path);
    expect(paths.filter((entryPath) => entryPath.startsWith('Survey/Survey'))).toEqual([]);
    expect(paths.filter((entryPath) => !paths.some((other) => other.startsWith(`${entryPath}/`)))).toEqual(expect.arrayContaining([...original.keys()]));

    // downloaded from the library: the same payload layout as the original bag
    const out = path.join(dir, 'again.zip');
    await pipeline(writeBagZip(await offline.read(ctx(), archive!.id), { targetName: 'offline', resourceId: archive!.id, bagName: 'again' }), createWriteStream(out));
    const listing = spawnSync('unzip', ['-Z1', out], { encoding: 'utf8' }).stdout.split('\n').filter((name) => name.startsWith('again/data/') && !name.endsWith('/'));
    expect(listing.sort()).toEqual([...original.keys()].map((key) => `again/data/${key}`).sort());

    // transferred into a local folder: Survey/... once
    const destination = path.join(dir, 'destination');
    await mkdir(destination);
    const local = new LocalTarget({ root: destination });
    const outcome = await local.write(ctx(), null, (await offline.read(ctx(), archive!.id)).entries, { duplicateAction: 'ignore', signal: new AbortController().signal, jobLabel: 'test' });
    expect(outcome.newResource?.title).toBe('Survey');
    expect(outcome.fileErrors).toEqual([]);
    for (const [key, bytes] of original) expect(await readFile(path.join(destination, key))).toEqual(bytes);
    expect(await readdir(path.join(destination, 'Survey'))).not.toContain('Survey');
  });

  it('sub-folders: ids, detail paths, reads relative to the folder; ids made before still resolve', async () => {
    const file = await downloadIntoLibrary('Survey');
    const nodes = await collect(offline.list(ctx()));
    const archive = nodes.find((node) => node.container === null)!;
    const raw = nodes.find((node) => node.title === 'raw')!;
    expect(raw.container).toBe(archive.id);
    expect((await collect(offline.list(ctx(), { container: archive.id }))).map((node) => node.title)).toEqual(['answers.csv', 'notes', 'raw']);
    const rawDetail = await offline.detail(ctx(), raw.id);
    expect(rawDetail.extra.path).toBe('/raw/');
    expect((await collect((await offline.read(ctx(), raw.id)).entries)).map((entry) => entry.path).sort()).toEqual(['raw', 'raw/scan 1.bin', 'raw/ünïcode #%.txt']);
    const scan = nodes.find((node) => node.title === 'scan 1.bin')!;
    const [read] = await collect((await offline.read(ctx(), scan.id)).entries);
    expect(read).toMatchObject({ path: 'scan 1.bin', hashes: { sha256: sha256(original.get('Survey/raw/scan 1.bin')!) } });
    // found in the provenance file (by its data/-relative path); a local source reports no hashes of its own
    expect((await offline.detail(ctx(), scan.id)).extra.source_hashes).toEqual({});

    // ids encoded with the payload folder (as listed before) lead to the same things
    const oldId = (payloadPath: string) => `${archive.id}-${Buffer.from(payloadPath, 'utf8').toString('base64url')}`;
    expect((await offline.detail(ctx(), oldId('Survey/raw'))).id).toBe(raw.id);
    expect((await offline.detail(ctx(), oldId('Survey'))).id).toBe(archive.id);
    await expect(offline.detail(ctx(), oldId('Survey/nothing'))).rejects.toMatchObject({ status: 404 });
    expect(file).toBeTruthy();
  });

  it('keeps the payload as it is when it is not one folder alone', async () => {
    const file = path.join(libraryDir, 'two.zip');
    const zip = new yazl.ZipFile();
    const lines: string[] = [];
    for (const [name, text] of [['data/one/a.txt', 'a'], ['data/top.txt', 'top']] as const) {
      zip.addBuffer(Buffer.from(text), `two/${name}`);
      lines.push(`${sha256(Buffer.from(text))}  ${name}\n`);
    }
    zip.addBuffer(Buffer.from('BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n'), 'two/bagit.txt');
    zip.addBuffer(Buffer.from(lines.join('')), 'two/manifest-sha256.txt');
    zip.end();
    await pipeline(zip.outputStream, createWriteStream(file));
    const nodes = await collect(offline.list(ctx()));
    expect(pathsOf(nodes, new Map(nodes.map((node) => [node.id, node])))).toEqual(['two', 'two/one', 'two/one/a.txt', 'two/top.txt']);
    const archive = nodes.find((node) => node.container === null)!;
    const outcome = await offline.verify(ctx(), archive.id, { signal: new AbortController().signal, onProgress: () => {} });
    expect(outcome.verified.sort()).toEqual(['one/a.txt', 'top.txt']);
  });
});

describe('hashes of a file that failed fixity', () => {
  it("detail reports the changed bytes' hashes; the manifest's are the expected ones in extra.fixity", async () => {
    const file = await downloadIntoLibrary('Survey');
    const archiveId = (await collect(offline.list(ctx(), { container: null })))[0]!.id;
    const scan = (await collect(offline.list(ctx()))).find((node) => node.title === 'scan 1.bin')!;
    const good = original.get('Survey/raw/scan 1.bin')!;
    const zipBytes = await readFile(file);
    const at = zipBytes.indexOf(good.subarray(0, 64));
    zipBytes[at + 1000] = zipBytes[at + 1000]! ^ 0xff;
    await writeFile(file, zipBytes);
    const changed = Buffer.from(good);
    changed[1000] = changed[1000]! ^ 0xff;

    expect((await offline.detail(ctx(), scan.id)).hashes).toEqual({ md5: md5(good), sha256: sha256(good) }); // not verified yet: the manifest's word
    await offline.verify(ctx(), archiveId, { signal: new AbortController().signal, onProgress: () => {} });
    const detail = await offline.detail(ctx(), scan.id);
    expect(detail.hashes).toEqual({ md5: md5(changed), sha256: sha256(changed) });
    const fixity = detail.extra.fixity as { state: string; failures: { algorithm: string; expected: string; actual: string }[] };
    expect(fixity.state).toBe('failed');
    expect(fixity.failures).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ algorithm: 'sha256', expected: sha256(good), actual: sha256(changed), against: 'manifest' }),
        expect.objectContaining({ algorithm: 'md5', expected: md5(good), actual: md5(changed) }),
      ]),
    );
    // a fresh target (same state directory) reads the same from the stored record
    const again = new OfflineTarget({ libraryDirs: [libraryDir], stateDir: path.join(dir, 'state'), limits: DEFAULT_LIMITS });
    expect((await again.detail(ctx(), scan.id)).hashes).toEqual({ md5: md5(changed), sha256: sha256(changed) });
  });

  it('a plain ZIP: detail shows the changed bytes, and every later verify still compares with the first hashes', async () => {
    const file = path.join(libraryDir, 'plain.zip');
    const payload = randomBytes(20_000);
    const zip = new yazl.ZipFile();
    zip.addBuffer(payload, 'folder/data.bin', { compress: false });
    zip.end();
    await pipeline(zip.outputStream, createWriteStream(file));
    const nodes = await collect(offline.list(ctx()));
    const archiveId = nodes.find((node) => node.container === null)!.id;
    const data = nodes.find((node) => node.title === 'data.bin')!;
    const run = () => offline.verify(ctx(), archiveId, { signal: new AbortController().signal, onProgress: () => {} });
    expect((await run()).verified).toEqual(['folder/data.bin']);

    const bytes = await readFile(file);
    const at = bytes.indexOf(payload.subarray(0, 64));
    bytes[at + 7] = bytes[at + 7]! ^ 0x01;
    await writeFile(file, bytes);
    const changed = Buffer.from(payload);
    changed[7] = changed[7]! ^ 0x01;
    for (let i = 0; i < 2; i++) {
      const outcome = await run();
      expect(outcome.failed.find((failure) => failure.algorithm === 'sha256')).toMatchObject({ expected: sha256(payload), actual: sha256(changed) });
      expect((await offline.detail(ctx(), data.id)).hashes).toEqual({ md5: md5(changed), sha256: sha256(changed) });
    }
  });
});

describe('damaged archives in the library', () => {
  it('lists a truncated archive, one with ../ names and a 1:10,000 zip bomb as damaged, and writes nothing', async () => {
    const good = await downloadIntoLibrary('Survey');
    const truncated = path.join(libraryDir, 'truncated.zip');
    await writeFile(truncated, await readFile(good));
    await truncate(truncated, 3000);

    const slip = new yazl.ZipFile();
    slip.addBuffer(Buffer.from('evil'), 'fine.txt');
    slip.end();
    const slipBytes = Buffer.concat(await collect(slip.outputStream as AsyncIterable<Buffer>));
    // yazl refuses '..' names, so rename the entry in both headers (same length keeps offsets valid).
    const hostile = Buffer.from(slipBytes.toString('latin1').replaceAll('fine.txt', '../x.txt'), 'latin1');
    await writeFile(path.join(libraryDir, 'slip.zip'), hostile);

    const bomb = new yazl.ZipFile();
    bomb.addBuffer(Buffer.alloc(100 * 1024 * 1024), 'zeros.bin', { compressionLevel: 9 });
    bomb.end();
    await pipeline(bomb.outputStream, createWriteStream(path.join(libraryDir, 'bomb.zip')));

    const before = (await readdir(dir, { recursive: true })).sort();
    const tops = await collect(offline.list(ctx(), { container: null }));
    expect(tops.map((node) => node.title).sort()).toEqual(['Survey', 'bomb', 'slip', 'truncated']);
    const everything = await collect(offline.list(ctx()));
    expect(everything.filter((node) => node.kind === 'item')).toHaveLength(4);

    const errors: Record<string, unknown> = {};
    for (const top of tops) {
      const detail = await offline.detail(ctx(), top.id);
      expect(detail.extra.state).toBe(top.title === 'Survey' ? 'ok' : 'damaged');
      errors[top.title] = detail.extra.error;
    }
    expect(errors.truncated).toMatch(/truncated|damaged/i);
    expect(errors.slip).toMatch(/"\.\.\/x\.txt" contains "\.\."/);
    expect(errors.bomb).toMatch(/zip bomb/);
    const slipId = tops.find((node) => node.title === 'slip')!.id;
    await expect(offline.verify(ctx(), slipId, { signal: new AbortController().signal, onProgress: () => {} })).rejects.toThrow(/Cannot verify/);
    // never read out: a transfer or download gets the sentence an upload of it gets
    await expect(offline.read(ctx(), slipId)).rejects.toMatchObject({ status: 400, message: errors.slip });
    expect((await readdir(dir, { recursive: true })).sort()).toEqual(before);
  });

  it("marks names of only dots and spaces ('.. ', '...', fullwidth dots) damaged, as the upload reader refuses them", async () => {
    const hostile = { trailing: '.. /x.txt', dots: 'a/.../x.txt', fullwidth: '\uff0e\uff0e/x.txt', spaced: 'a/. ./x.txt' };
    for (const [name, entryName] of Object.entries(hostile)) {
      const zip = new yazl.ZipFile();
      zip.addBuffer(Buffer.from('evil'), 'fine.txt');
      zip.addBuffer(Buffer.from('ok'), 'ok/fine.txt');
      zip.addBuffer(Buffer.from('evil'), entryName);
      zip.end();
      await pipeline(zip.outputStream, createWriteStream(path.join(libraryDir, `${name}.zip`)));
    }
    const tops = await collect(offline.list(ctx(), { container: null }));
    expect(tops.map((node) => node.title).sort()).toEqual(Object.keys(hostile).sort());
    expect((await collect(offline.list(ctx()))).filter((node) => node.kind === 'item')).toEqual([]);
    for (const top of tops) {
      const detail = await offline.detail(ctx(), top.id);
      expect(detail.extra.state, top.title).toBe('damaged');
      expect(detail.extra.error).toMatch(/only of dots and spaces/);
      await expect(offline.verify(ctx(), top.id, { signal: new AbortController().signal, onProgress: () => {} })).rejects.toThrow(/Cannot verify/);
    }
    // a name that merely starts or ends with dots is fine
    const zip = new yazl.ZipFile();
    zip.addBuffer(Buffer.from('ok'), 'folder/..hidden/...and more.txt');
    zip.end();
    await pipeline(zip.outputStream, createWriteStream(path.join(libraryDir, 'zz-fine.zip')));
    const fine = (await collect(offline.list(ctx(), { container: null }))).find((node) => node.title === 'zz-fine')!;
    expect((await offline.detail(ctx(), fine.id)).extra.state).toBe('ok');
  });

  it('lists a file nested 2,000 folders deep; marks one with a path over the limit damaged, with a sentence', async () => {
    const deep = `${'a/'.repeat(2_000)}f.txt`;
    await writeFile(path.join(libraryDir, 'deep.zip'), rawZip([{ name: deep, data: Buffer.from('deep\n') }]));
    // 30,000 folders deep: each folder's id holds its whole path, 1.2 GB of ids in all
    await writeFile(path.join(libraryDir, 'deeper.zip'), rawZip([{ name: `${'a/'.repeat(30_000)}f.txt`, data: Buffer.from('deeper\n') }]));
    const nodes = await collect(offline.list(ctx()));
    const tops = nodes.filter((node) => node.container === null);
    expect(tops.map((node) => node.title).sort()).toEqual(['deep', 'deeper']);
    expect(nodes.filter((node) => node.kind === 'container')).toHaveLength(2 + 2_000);
    expect(nodes.find((node) => node.kind === 'item')!.title).toBe('f.txt');
    const deeper = await offline.detail(ctx(), tops.find((node) => node.title === 'deeper')!.id);
    expect(deeper.extra.state).toBe('damaged');
    expect(String(deeper.extra.error)).toMatch(/path is 60005 characters long; the limit is 4096/);
  }, 60_000);

  it('lists every entry of a 100,000-entry archive from the central directory', async () => {
    const file = path.join(libraryDir, 'many.zip');
    await writeManyEntriesZip(file, 100_000, (i) => `many/d${i % 100}/f${i}.txt`);
    expect(spawnSync('unzip', ['-l', file], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }).stdout).toMatch(/100000 files/);
    const index = await indexArchive(file, DEFAULT_LIMITS);
    expect(index.damage).toBeNull();
    const nodes = await collect(offline.list(ctx()));
    expect(nodes.filter((node) => node.kind === 'item')).toHaveLength(100_000);
    expect(nodes.filter((node) => node.kind === 'container')).toHaveLength(1 + 1 + 100);
  }, 120_000);

  // found by the hostile corpus (test/stress/hostile-zips)
  it('marks an overlap bomb damaged: stored entries each covering all after them, 1:1 each, far more than the file in all', async () => {
    await writeFile(path.join(libraryDir, 'overlap.zip'), overlapBombZip(400, 20_000)); // ~8 MB from ~50 kB
    offline = new OfflineTarget({ libraryDirs: [libraryDir], stateDir: path.join(dir, 'state'), limits: { ...DEFAULT_LIMITS, maxCompressionRatio: 100 } });
    const [top] = await collect(offline.list(ctx(), { container: null }));
    const detail = await offline.detail(ctx(), top!.id);
    expect(detail.extra.state).toBe('damaged');
    expect(detail.extra.error).toMatch(/overlap in the archive/);
    await expect(offline.verify(ctx(), top!.id, { signal: new AbortController().signal, onProgress: () => {} })).rejects.toThrow(/Cannot verify/);
  });

  it("reads 'a//b' and 'a/./c' as 'a/b' and 'a/c': no entry without a name", async () => {
    await writeFile(path.join(libraryDir, 'slashes.zip'), rawZip([{ name: 'a//b.txt', data: Buffer.from('b') }, { name: 'a/./c.txt', data: Buffer.from('c') }]));
    const nodes = await collect(offline.list(ctx()));
    expect(nodes.map((node) => node.title).sort()).toEqual(['a', 'b.txt', 'c.txt', 'slashes']);
  });

  it('a file whose bytes cannot be read: detail still answers (no hashes, the reason), verify reports it as a sentence', async () => {
    const zip = rawZip([{ name: 'good.txt', data: Buffer.from('good') }, { name: 'bad.txt', data: Buffer.from('bad') }]);
    zip.writeUInt32LE(0x04034b51, 30 + 'good.txt'.length + deflateRawSync(Buffer.from('good')).length); // bad.txt's local header signature
    await writeFile(path.join(libraryDir, 'broken.zip'), zip);
    const nodes = await collect(offline.list(ctx()));
    const bad = nodes.find((node) => node.title === 'bad.txt')!;
    const detail = await offline.detail(ctx(), bad.id);
    expect(detail.hashes).toEqual({});
    expect(detail.extra).toMatchObject({ state: 'damaged', error: expect.stringMatching(/^The file 'bad.txt' cannot be read: the archive is damaged: invalid local file header signature/) });
    const top = nodes.find((node) => node.container === null)!;
    const outcome = await offline.verify(ctx(), top.id, { signal: new AbortController().signal, onProgress: () => {} });
    expect(outcome.verified).toEqual(['good.txt']);
    expect(outcome.failed).toEqual([{ path: 'bad.txt', algorithm: 'read', expected: 'readable bytes', actual: expect.stringMatching(/^The file 'bad.txt' cannot be read/) }]);
  });

  it('refuses to upload into the library with a clear 405', async () => {
    await expect(offline.write()).rejects.toMatchObject({ status: 405, code: 'action_not_supported' });
  });

  it('listBatches: the same nodes as list(), in batches; an unchanged archive hands out the same batches again, marked kept', async () => {
    const file = path.join(libraryDir, 'many.zip');
    await writeManyEntriesZip(file, 10_000, (i) => `many/d${i % 10}/f${i}.txt`);
    // the first listing is not kept (nor frozen); from the second listing on it is
    const listed = await collect(offline.list(ctx()));
    const first = await collect(offline.listBatches(ctx()));
    expect(first.flat()).toEqual(listed);
    expect(first.length).toBeGreaterThan(2);
    for (const batch of first) expect(batch.length).toBeLessThanOrEqual(4096);
    const second = await collect(offline.listBatches(ctx()));
    expect(second).toHaveLength(first.length);
    second.forEach((batch, i) => {
      expect(batch).toBe(first[i]);
      expect(offline.capabilities.cacheableListings!.isKept(batch)).toBe(true);
      expect(Object.isFrozen(batch)).toBe(true);
    });
    const fresh = new OfflineTarget({ libraryDirs: [libraryDir], stateDir: path.join(dir, 'state'), limits: DEFAULT_LIMITS });
    for (const batch of await collect(fresh.listBatches(ctx()))) expect(fresh.capabilities.cacheableListings!.isKept(batch)).toBe(false);
    // a changed archive is read again: new batches, and ids stay what they were
    await utimes(file, new Date(), new Date(Date.now() - 60_000));
    const third = await collect(offline.listBatches(ctx()));
    expect(third[1]).not.toBe(first[1]);
    expect(third.flat()).toEqual(listed);
  });

  it('orders by path segments (a/… before a-b) and nests implied folders; an archive naming a path twice is damaged', async () => {
    await writeFile(
      path.join(libraryDir, 'odd.zip'),
      rawZip([
        { name: 'a-b.txt', data: Buffer.from('1') },
        { name: 'a/c.txt', data: Buffer.from('2') },
        { name: 'x/deep/er/f.txt', data: Buffer.from('3') },
        { name: 'dup.txt', data: Buffer.from('first') },
        { name: 'ü/é.txt', data: Buffer.from('4') },
        { name: 'x/' },
      ]),
    );
    const nodes = await collect(offline.list(ctx()));
    const byId = new Map(nodes.map((node) => [node.id, node]));
    const full = (node: ResourceNode): string => (node.container && byId.get(node.container) ? `${full(byId.get(node.container)!)}/${node.title}` : node.title);
    expect(nodes.map(full)).toEqual(['odd', 'odd/a', 'odd/a/c.txt', 'odd/a-b.txt', 'odd/dup.txt', 'odd/x', 'odd/x/deep', 'odd/x/deep/er', 'odd/x/deep/er/f.txt', 'odd/ü', 'odd/ü/é.txt']);
    const dup = nodes.find((node) => node.title === 'dup.txt')!;
    expect(dup.kind).toBe('item');
    expect((await offline.detail(ctx(), dup.id)).extra.size).toBe(5);
    // ids are base64url of the entry path, as before
    const unicode = nodes.find((node) => node.title === 'é.txt')!;
    expect(unicode.id.split('-')[1]).toBe(Buffer.from('ü/é.txt').toString('base64url'));
    expect((await collect(offline.list(ctx(), { container: nodes.find((node) => node.title === 'deep')!.id }))).map((node) => node.title)).toEqual(['er']);

    // as an upload of it is refused (entry-policy.ts)
    await writeFile(path.join(libraryDir, 'dups.zip'), rawZip([{ name: 'dup.txt', data: Buffer.from('first') }, { name: 'dup.txt', data: Buffer.from('second!') }]));
    const dups = (await collect(offline.list(ctx(), { container: null }))).find((node) => node.title === 'dups')!;
    expect((await offline.detail(ctx(), dups.id)).extra).toMatchObject({ state: 'damaged', error: 'The ZIP holds "dup.txt" twice; each path may appear only once.' });
  });

  it("dates a folder by its own record, even one named after the files inside it, else by the first entry in it", async () => {
    const zip = new yazl.ZipFile();
    const early = new Date('2020-03-04T05:06:08Z');
    const late = new Date('2022-07-08T09:10:12Z');
    zip.addBuffer(Buffer.from('x'), 'a/x.txt', { mtime: early });
    zip.addEmptyDirectory('a/', { mtime: late });
    zip.addBuffer(Buffer.from('y'), 'b/y.txt', { mtime: early });
    zip.end();
    await pipeline(zip.outputStream, createWriteStream(path.join(libraryDir, 'dated.zip')));
    const nodes = await collect(offline.list(ctx()));
    const dateOf = async (title: string) => (await offline.detail(ctx(), nodes.find((node) => node.title === title)!.id)).date_modified;
    const index = await indexArchive(path.join(libraryDir, 'dated.zip'), DEFAULT_LIMITS);
    expect(await dateOf('a')).toBe(`${index.find('a')!.mtime.toISOString().slice(0, -1)}000Z`);
    expect(index.find('a')!.mtime.getTime()).not.toBe(index.find('a/x.txt')!.mtime.getTime());
    expect(index.find('b')!.mtime.getTime()).toBe(index.find('b/y.txt')!.mtime.getTime());
    expect([...index.entries.keys()]).toEqual(['a/x.txt', 'a', 'b/y.txt', 'b']);
    expect(index.children.get('')).toEqual(['a', 'b']);
  });
});
