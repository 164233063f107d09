import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Entry, ReadResult } from '../target.js';
import { LocalTarget } from '../targets/local/local-target.js';
import { encodeLocalId } from '../targets/local/ids.js';
import { writeBagZip } from './bag-writer.js';
import { memoryReadResult } from './testing/folder-source.js';
import { listZip, readZipText, run } from '../zip/testing/zip-inspect.js';

// Small files go to the bag workers whole (read by them, or handed over as bytes), many at once: memory must stay bounded when the
// client does not read, and the bag must be the same as ever (hashes, store/deflate, order).

let work: string;
beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'ferry-small-files-'));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

const FILES = 1500;
const SIZE = 40 * 1024;

function smallEntries(opened: { count: number }): { entries: Entry[]; bytes: Buffer[] } {
  const bytes = Array.from({ length: FILES }, (_, i) => (i % 2 ? randomBytes(SIZE) : Buffer.from(`${i},text,`.repeat(SIZE / 8).slice(0, SIZE))));
  const entries: Entry[] = [{ path: 'Small', kind: 'folder', size: null, mtime: null, hashes: {}, open: () => Promise.reject(new Error('folder')) }];
  bytes.forEach((data, i) =>
    entries.push({
      path: `Small/f${String(i).padStart(5, '0')}.dat`,
      kind: 'file',
      size: data.length,
      mtime: null,
      hashes: { md5: createHash('md5').update(data).digest('hex') },
      open: async () => {
        opened.count++;
        return Readable.from([data]);
      },
    }),
  );
  return { entries, bytes };
}

it('does not read far ahead of a client that is not reading', async () => {
  const opened = { count: 0 };
  const { entries } = smallEntries(opened);
  const output = writeBagZip(memoryReadResult('Small', entries), { targetName: 't', resourceId: 'small', bagName: 'bag' });
  output.pause();
  await new Promise((resolve) => setTimeout(resolve, 600));
  const early = opened.count;
  await new Promise((resolve) => setTimeout(resolve, 600));
  // the writer has stopped (files read here and queued + unread output within 16 MiB):
  // far from all 1,500 files (60 MiB)
  expect(opened.count).toBe(early);
  expect(opened.count).toBeLessThan(FILES / 2);
  output.destroy();
});

it('writes the same bag: every file, its md5 in the manifest, random data stored and text deflated', { timeout: 60_000 }, async () => {
  const { entries, bytes } = smallEntries({ count: 0 });
  const zipPath = path.join(work, 'small.zip');
  await pipeline(writeBagZip(memoryReadResult('Small', entries), { targetName: 't', resourceId: 'small', bagName: 'bag' }), createWriteStream(zipPath));
  await run('unzip', ['-tqq', zipPath]);
  const manifest = await readZipText(zipPath, 'bag/manifest-md5.txt');
  bytes.forEach((data, i) => expect(manifest).toContain(`${createHash('md5').update(data).digest('hex')}  data/Small/f${String(i).padStart(5, '0')}.dat`));
  const { stdout } = await run('unzip', ['-v', zipPath]);
  expect(stdout).toMatch(/Stored.*f00001\.dat/);
  expect(stdout).toMatch(/Defl.*f00000\.dat/);
  const provenance = (JSON.parse(await readZipText(zipPath, 'bag/ferry-provenance.json')) as { entries: { files: { fixity: string }[] }[] }).entries[0]!;
  expect(provenance.files.every((file) => file.fixity === 'ok')).toBe(true);
});

describe("small local files read by the workers themselves (the local target's direct reads)", () => {
  const ctx = { token: '', signal: new AbortController().signal };

  /** Downloads `Data` of the workspace at `root` as a bag, removing `gone` from disk just after it is listed. */
  async function downloadWithFileGone(root: string, gone: string): Promise<void> {
    const inner = await new LocalTarget({ root }).read(ctx, encodeLocalId('Data'));
    const entries = (async function* () {
      for await (const entry of inner.entries) {
        // Data is at the workspace's top, so an entry's path is its path in the workspace
        if (entry.path === gone) await unlink(path.join(root, entry.path));
        yield entry;
      }
    })();
    const read: ReadResult = { ...inner, entries };
    await pipeline(writeBagZip(read, { targetName: 'local', resourceId: 'x', bagName: 'bag' }), createWriteStream(`${root}.zip`));
  }

  it('writes the files as they are on disk', { timeout: 60_000 }, async () => {
    const root = path.join(work, 'direct-ws');
    const contents = new Map<string, Buffer>();
    for (let i = 0; i < 300; i++) contents.set(`Data/d${i % 7}/f${i}.${i % 3 ? 'csv' : 'bin'}`, i % 3 ? Buffer.from(`${i},text,`.repeat(200 + i)) : randomBytes(1000 + i * 50));
    contents.set('Data/large.bin', randomBytes(3 * 1024 * 1024));
    for (const [name, data] of contents) {
      await mkdir(path.dirname(path.join(root, name)), { recursive: true });
      await writeFile(path.join(root, name), data);
    }
    const read = await new LocalTarget({ root }).read(ctx, encodeLocalId('Data'));
    const zipPath = path.join(work, 'direct.zip');
    await pipeline(writeBagZip(read, { targetName: 'local', resourceId: 'x', bagName: 'bag' }), createWriteStream(zipPath));
    await run('unzip', ['-tqq', zipPath]);
    const manifest = await readZipText(zipPath, 'bag/manifest-sha256.txt');
    for (const [name, data] of contents) expect(manifest).toContain(`${createHash('sha256').update(data).digest('hex')}  data/${name}`);
    expect(manifest.trim().split('\n')).toHaveLength(contents.size);
  });

  it('keeps the entry order when small files after a large one are made while it streams', { timeout: 60_000 }, async () => {
    const root = path.join(work, 'direct-overlap');
    const contents = new Map<string, Buffer>();
    // large files first (as a "raw" folder sorts before others), one stored, one deflated, then many small ones
    contents.set('Data/a-raw/big-0.bin', randomBytes(3 * 1024 * 1024));
    contents.set('Data/a-raw/big-1.csv', Buffer.from('1,text,'.repeat(400_000)));
    for (let i = 0; i < 400; i++) contents.set(`Data/s${i % 5}/f${String(i).padStart(3, '0')}.csv`, Buffer.from(`${i},text,`.repeat(100 + i)));
    contents.set('Data/s2/zz-big-2.bin', randomBytes(2 * 1024 * 1024));
    // named as text but random: deflated unsampled, and stored since deflate does not shrink it
    contents.set('Data/s3/noise.txt', randomBytes(20_000));
    for (const [name, data] of contents) {
      await mkdir(path.dirname(path.join(root, name)), { recursive: true });
      await writeFile(path.join(root, name), data);
    }
    const target = new LocalTarget({ root });
    const order: string[] = [];
    for await (const entry of (await target.read(ctx, encodeLocalId('Data'))).entries) order.push(entry.kind === 'folder' ? `${entry.path}/` : entry.path);
    const zipPath = path.join(work, 'overlap.zip');
    await pipeline(writeBagZip(await target.read(ctx, encodeLocalId('Data')), { targetName: 'local', resourceId: 'x', bagName: 'bag' }), createWriteStream(zipPath));
    await run('unzip', ['-tqq', zipPath]);
    const listed = await listZip(zipPath);
    const names = listed.map((entry) => entry.name);
    const noise = listed.find((entry) => entry.name === 'bag/data/Data/s3/noise.txt')!;
    expect([noise.compressionMethod, noise.compressedSize]).toEqual([0, 20_000]);
    expect(listed.find((entry) => entry.name === 'bag/data/Data/s3/f003.csv')!.compressionMethod).toBe(8);
    const payload = names.filter((name) => name.startsWith('bag/data/')).map((name) => name.slice('bag/data/'.length));
    expect(payload).toEqual(order);
    // the manifest and the provenance list the files in the same order, with the right digests
    const files = order.filter((name) => !name.endsWith('/'));
    const manifest = (await readZipText(zipPath, 'bag/manifest-md5.txt')).trim().split('\n');
    expect(manifest).toEqual(files.map((name) => `${createHash('md5').update(contents.get(name)!).digest('hex')}  data/${name}`));
    const provenance = (JSON.parse(await readZipText(zipPath, 'bag/ferry-provenance.json')) as { entries: { files: { path: string; size: number }[] }[] }).entries[0]!;
    expect(provenance.files.map((file) => file.path)).toEqual(files);
    expect(provenance.files.map((file) => file.size)).toEqual(files.map((name) => contents.get(name)!.length));
    const info = await readZipText(zipPath, 'bag/bag-info.txt');
    expect(info).toContain(`Payload-Oxum: ${[...contents.values()].reduce((sum, data) => sum + data.length, 0)}.${contents.size}`);
  });

  it('fails the download when a large file is gone by its turn (or its early opening), small files queued behind it', async () => {
    const root = path.join(work, 'direct-large-gone');
    await mkdir(path.join(root, 'Data', 'a'), { recursive: true });
    await mkdir(path.join(root, 'Data', 'b'), { recursive: true });
    // big.bin comes straight after another large file: it is opened early, while aa.bin ends
    await writeFile(path.join(root, 'Data', 'a', 'aa.bin'), randomBytes(2 * 1024 * 1024));
    await writeFile(path.join(root, 'Data', 'a', 'big.bin'), randomBytes(2 * 1024 * 1024));
    for (let i = 0; i < 50; i++) await writeFile(path.join(root, 'Data', 'b', `f${i}.txt`), `file ${i}\n`.repeat(100));
    await expect(downloadWithFileGone(root, 'Data/a/big.bin')).rejects.toThrow("There is no file or folder 'Data/a/big.bin' in the local workspace.");
  });

  it("fails the download with the target's error (a relative path) when a listed file is gone", async () => {
    const root = path.join(work, 'direct-gone');
    await mkdir(path.join(root, 'Data'), { recursive: true });
    for (let i = 0; i < 5; i++) await writeFile(path.join(root, 'Data', `f${i}.txt`), `file ${i}\n`.repeat(100));
    // f2.txt disappears between its listing and its reading
    await expect(downloadWithFileGone(root, 'Data/f2.txt')).rejects.toThrow("There is no file or folder 'Data/f2.txt' in the local workspace.");
  });
});
