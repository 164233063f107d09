import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Entry } from '../target.js';
import { writeBagZip } from './bag-writer.js';
import { memoryReadResult } from './testing/folder-source.js';
import { readZipText, run } from './testing/zip-inspect.js';

// Small files go to yazl whole (addBuffer), many at once: memory must stay bounded when the
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
  // the writer has stopped (queued + unread output within 8 MiB, compressed text counting
  // less): far from all 1,500 files (60 MiB)
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
  const provenance = JSON.parse(await readZipText(zipPath, 'bag/ferry-provenance.json')) as { files: { fixity: string }[] };
  expect(provenance.files.every((file) => file.fixity === 'ok')).toBe(true);
});
