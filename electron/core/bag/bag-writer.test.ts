import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Entry } from '../target.js';
import { bagNameFor, writeBagZip} from './bag-writer.js';
import type { ProvenanceLog } from '../provenance/format.js';
import { parseManifest, parseTagFields } from './bagit-format.js';
import { folderReadResult, memoryReadResult } from './testing/folder-source.js';
import { listZip, readZipText, run } from '../zip/testing/zip-inspect.js';

let work: string;
beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'ferry-bag-writer-'));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

const md5 = (bytes: Buffer) => createHash('md5').update(bytes).digest('hex');
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

async function writeZip(stream: Readable, name: string): Promise<string> {
  const zipPath = path.join(work, name);
  await pipeline(stream, createWriteStream(zipPath));
  return zipPath;
}

describe('bagNameFor', () => {
  it('keeps only [A-Za-z0-9._-] of the id', () => {
    expect(bagNameFor('osf', 'abc/def ghé')).toBe('osf_download_abc_def_gh_');
    expect(bagNameFor('local', 'l_YWJj-9.x')).toBe('local_download_l_YWJj-9.x');
  });
});

describe('writeBagZip over a real folder', () => {
  const title = 'My Data';
  const odd = 'ünï 日本 #1 100% sure.txt';
  const text = Buffer.from('temperature,site\n'.repeat(20_000));
  const photo = randomBytes(150_000);
  const noise = randomBytes(300_000);
  const oddBytes = Buffer.from('odd name\n');
  const mtime = new Date('2021-03-04T05:06:08Z');
  let folder: string;
  let zipPath: string;
  let extracted: string;
  const bag = bagNameFor('local', 'res-1');

  beforeAll(async () => {
    folder = path.join(work, 'src', title);
    await mkdir(path.join(folder, 'sub', 'empty'), { recursive: true });
    await writeFile(path.join(folder, 'notes.csv'), text);
    await writeFile(path.join(folder, 'photo.jpg'), photo);
    await writeFile(path.join(folder, 'sub', 'noise.bin'), noise);
    await writeFile(path.join(folder, 'sub', odd), oddBytes);
    await writeFile(path.join(folder, 'zero.dat'), Buffer.alloc(0));
    await utimes(path.join(folder, 'notes.csv'), mtime, mtime);

    const read = folderReadResult(folder, {
      hashes: {
        [`${title}/notes.csv`]: { md5: md5(text) },
        [`${title}/photo.jpg`]: { sha256: '0'.repeat(64) },
        [`${title}/sub/noise.bin`]: { sha1: createHash('sha1').update(noise).digest('hex') },
      },
    });
    zipPath = await writeZip(writeBagZip(read, { targetName: 'local', resourceId: 'res-1', bagName: bag, now: new Date('2024-05-06T07:08:09.123Z') }), 'folder.zip');
    extracted = path.join(work, 'extracted');
    await mkdir(extracted);
    await run('unzip', ['-q', zipPath, '-d', extracted], { env: { ...process.env, LC_ALL: 'C.UTF-8' } });
  });

  it('passes unzip -t', async () => {
    const { stdout } = await run('unzip', ['-t', zipPath]);
    expect(stdout).toMatch(/No errors detected/);
  });

  it('extracts the payload byte for byte under data/<title>/, empty folder included', async () => {
    const data = path.join(extracted, bag, 'data', title);
    // hashes, not toEqual: deep-equal of big Buffers is very slow
    expect(sha256(await readFile(path.join(data, 'notes.csv')))).toBe(sha256(text));
    expect(sha256(await readFile(path.join(data, 'photo.jpg')))).toBe(sha256(photo));
    expect(sha256(await readFile(path.join(data, 'sub', 'noise.bin')))).toBe(sha256(noise));
    expect(sha256(await readFile(path.join(data, 'sub', odd)))).toBe(sha256(oddBytes));
    expect((await readFile(path.join(data, 'zero.dat'))).length).toBe(0);
    expect((await stat(path.join(data, 'sub', 'empty'))).isDirectory()).toBe(true);
    expect(await readdir(path.join(data, 'sub', 'empty'))).toEqual([]);
    expect(Math.abs((await stat(path.join(data, 'notes.csv'))).mtime.getTime() - mtime.getTime())).toBeLessThan(2000);
  });

  it('writes bagit.txt and bag-info.txt as RFC 8493 asks', async () => {
    expect(await readFile(path.join(extracted, bag, 'bagit.txt'), 'utf8')).toBe('BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n');
    const info = parseTagFields(await readFile(path.join(extracted, bag, 'bag-info.txt'), 'utf8'));
    const bytes = text.length + photo.length + noise.length + oddBytes.length;
    expect(info.get('Payload-Oxum')).toEqual([`${bytes}.5`]);
    expect(info.get('Bagging-Date')).toEqual(['2024-05-06']);
    expect(info.get('Bag-Software-Agent')).toEqual(['Ferry']);
    expect(info.get('External-Identifier')).toEqual(['local:res-1']);
  });

  it('has manifests whose every line matches the extracted bytes, and every payload file listed', async () => {
    const payloadFiles = (await readdir(path.join(extracted, bag, 'data'), { recursive: true, withFileTypes: true }))
      .filter((d) => d.isFile())
      .map((d) => path.relative(path.join(extracted, bag), path.join(d.parentPath, d.name)).split(path.sep).join('/'))
      .sort();
    expect(payloadFiles).toHaveLength(5);
    for (const [algorithm, hash] of [['md5', md5], ['sha256', sha256]] as const) {
      const { lines, malformed } = parseManifest(await readFile(path.join(extracted, bag, `manifest-${algorithm}.txt`), 'utf8'));
      expect(malformed).toEqual([]);
      expect(lines.map((l) => l.path).sort()).toEqual(payloadFiles);
      for (const line of lines) expect(line.hex).toBe(hash(await readFile(path.join(extracted, bag, line.path))));
    }
    // RFC 8493: `%` in a path is written %25
    expect(await readFile(path.join(extracted, bag, 'manifest-md5.txt'), 'utf8')).toContain('100%25 sure.txt');
  });

  it('has tag manifests covering every tag file, provenance included', async () => {
    for (const [algorithm, hash] of [['md5', md5], ['sha256', sha256]] as const) {
      const { lines } = parseManifest(await readFile(path.join(extracted, bag, `tagmanifest-${algorithm}.txt`), 'utf8'));
      expect(lines.map((l) => l.path).sort()).toEqual(['bag-info.txt', 'bagit.txt', 'ferry-provenance.json', 'manifest-md5.txt', 'manifest-sha256.txt', 'ro-crate-metadata.json']);
      for (const line of lines) expect(line.hex).toBe(hash(await readFile(path.join(extracted, bag, line.path))));
    }
  });

  it('records provenance with source and computed hashes and the fixity verdict', async () => {
    const log = JSON.parse(await readFile(path.join(extracted, bag, 'ferry-provenance.json'), 'utf8')) as ProvenanceLog;
    expect(log.format).toBe('ferry-provenance/1');
    expect(log.entries).toHaveLength(1);
    const provenance = log.entries[0]!;
    expect(provenance).toMatchObject({
      action: 'download',
      at: '2024-05-06T07:08:09.123000Z',
      job: null,
      source: { target: 'local', resource_id: 'res-1', title },
      destination: { target: 'bag', resource_id: bag, title },
    });
    const byPath = new Map(provenance.files.map((f) => [f.path, f]));
    expect(byPath.get(`${title}/notes.csv`)).toEqual({
      path: `${title}/notes.csv`,
      size: text.length,
      source_hashes: { md5: md5(text) },
      computed_hashes: { md5: md5(text), sha256: sha256(text) },
      fixity: 'ok',
      verified: true,
      verification: "The md5 of the bytes written into the bag matched the source's.",
    });
    expect(byPath.get(`${title}/photo.jpg`)).toMatchObject({ verified: false, verification: expect.stringMatching(/^Not verified: the sha256/) });
    expect(byPath.get(`${title}/sub/${odd}`)).toMatchObject({ verified: false, verification: 'Not verified: the source reports no hash Ferry could compare.' });
    expect(byPath.get(`${title}/photo.jpg`)?.fixity).toBe('mismatch');
    expect(byPath.get(`${title}/sub/noise.bin`)?.fixity).toBe('ok');
    expect(byPath.get(`${title}/sub/noise.bin`)?.computed_hashes.sha1).toBe(createHash('sha1').update(noise).digest('hex'));
    expect(byPath.get(`${title}/sub/${odd}`)?.fixity).toBe('no-source-hash');
  });

  it('stores incompressible files and deflates text', async () => {
    const methods = new Map((await listZip(zipPath)).map((e) => [e.name, e.compressionMethod]));
    expect(methods.get(`${bag}/data/${title}/photo.jpg`)).toBe(0); // by extension
    expect(methods.get(`${bag}/data/${title}/sub/noise.bin`)).toBe(0); // by sampling
    expect(methods.get(`${bag}/data/${title}/notes.csv`)).toBe(8);
    expect(methods.get(`${bag}/data/${title}/sub/${odd}`)).toBe(0); // tiny
    expect(methods.get(`${bag}/data/${title}/sub/empty/`)).toBe(0);
  });
});

function memoryFile(entryPath: string, bytes: Buffer | (() => Readable), hashes: Record<string, string> = {}): Entry {
  return {
    path: entryPath,
    kind: 'file',
    size: Buffer.isBuffer(bytes) ? bytes.length : null,
    mtime: new Date('2020-01-01T00:00:00Z'),
    hashes,
    open: async () => (Buffer.isBuffer(bytes) ? Readable.from([bytes]) : bytes()),
  };
}

describe('writeBagZip edge cases', () => {
  it('percent-encodes CR, LF and % of names in manifests', async () => {
    const names = ['T/a\nb.txt', 'T/c\rd.txt', 'T/50%.txt'];
    const read = memoryReadResult('T', names.map((n) => memoryFile(n, Buffer.from(n))));
    const zipPath = await writeZip(writeBagZip(read, { targetName: 'x', resourceId: 'y', bagName: 'b' }), 'names.zip');
    const manifest = await readZipText(zipPath, 'b/manifest-sha256.txt');
    expect(manifest.split('\n').filter(Boolean)).toHaveLength(3);
    expect(manifest).toContain('data/T/a%0Ab.txt');
    expect(manifest).toContain('data/T/c%0Dd.txt');
    expect(manifest).toContain('data/T/50%25.txt');
    expect(parseManifest(manifest).lines.map((l) => l.path).sort()).toEqual(names.map((n) => `data/${n}`).sort());
  });

  it('turns a backslash in a name into "_" so ZIP paths and manifests agree', async () => {
    const read = memoryReadResult('T', [memoryFile('T/a\\b.txt', Buffer.from('x'))]);
    const zipPath = await writeZip(writeBagZip(read, { targetName: 'x', resourceId: 'y', bagName: 'b' }), 'backslash.zip');
    expect((await listZip(zipPath)).map((e) => e.name)).toContain('b/data/T/a_b.txt');
    expect(await readZipText(zipPath, 'b/manifest-md5.txt')).toContain('data/T/a_b.txt');
    const provenance = (JSON.parse(await readZipText(zipPath, 'b/ferry-provenance.json')) as ProvenanceLog).entries[0]!;
    expect(provenance.files[0]).toMatchObject({ path: 'T/a_b.txt', source_path: 'T/a\\b.txt' });
  });

  it('destroys the output with the error of a failing source stream', async () => {
    const failing = () =>
      new Readable({
        read() {
          this.destroy(new Error('disk on fire'));
        },
      });
    const read = memoryReadResult('T', [memoryFile('T/ok.txt', Buffer.from('fine')), memoryFile('T/bad.txt', failing)]);
    await expect(writeZip(writeBagZip(read, { targetName: 'x', resourceId: 'y', bagName: 'b' }), 'failing.zip')).rejects.toThrow('disk on fire');
  });

  it('destroys the output when the signal aborts mid-stream, and stops reading the source', async () => {
    const controller = new AbortController();
    let sourceDestroyed = false;
    const endless = () =>
      new Readable({
        // pushed asynchronously, like real IO: a source that pushes synchronously forever
        // would starve the event loop through nextTick and never let the timer fire
        read() {
          setImmediate(() => this.push(randomBytes(64 * 1024)));
        },
        destroy(error, callback) {
          sourceDestroyed = true;
          callback(error);
        },
      });
    const read = memoryReadResult('T', [memoryFile('T/endless.bin', endless)]);
    const output = writeBagZip(read, { targetName: 'x', resourceId: 'y', bagName: 'b', signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    await expect(writeZip(output, 'aborted.zip')).rejects.toThrow(/cancelled/);
    expect(sourceDestroyed).toBe(true);
  });

  it('stops reading the source when the consumer destroys the output', async () => {
    let sourceDestroyed = false;
    const endless = () =>
      new Readable({
        // pushed asynchronously, like real IO: a source that pushes synchronously forever
        // would starve the event loop through nextTick and never let the timer fire
        read() {
          setImmediate(() => this.push(randomBytes(64 * 1024)));
        },
        destroy(error, callback) {
          sourceDestroyed = true;
          callback(error);
        },
      });
    const output = writeBagZip(memoryReadResult('T', [memoryFile('T/endless.bin', endless)]), { targetName: 'x', resourceId: 'y', bagName: 'b' });
    output.resume();
    await new Promise((resolve) => setTimeout(resolve, 50));
    output.destroy();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(sourceDestroyed).toBe(true);
  });

  it('records the bytes actually read when the source announced another size', async () => {
    const entry = { ...memoryFile('T/a.txt', Buffer.from('four')), size: 10 };
    const zipPath = await writeZip(writeBagZip(memoryReadResult('T', [entry]), { targetName: 'x', resourceId: 'y', bagName: 'b' }), 'size.zip');
    const provenance = (JSON.parse(await readZipText(zipPath, 'b/ferry-provenance.json')) as ProvenanceLog).entries[0]!;
    expect(provenance.files[0]).toMatchObject({ path: 'T/a.txt', size: 4, source_size: 10 });
  });
});
