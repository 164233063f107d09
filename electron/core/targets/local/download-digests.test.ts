import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, open, rm, stat, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { expect, it } from 'vitest';
import { bagNameFor, writeBagZip} from '../../bag/bag-writer.js';
import type { ProvenanceEntry as Provenance, ProvenanceLog } from '../../provenance/format.js';
import { readZipText } from '../../zip/testing/zip-inspect.js';
import { encodeLocalId } from './ids.js';
import { LocalTarget } from './local-target.js';
import { ctx, tempDirEach } from './test-helpers.js';

// A download of workspace files remembers their digests with the CRC-32 of the bytes; the
// next download takes them while the file is the same version and its bytes the same CRC-32.

const workspace = tempDirEach('download-digests');

const digests = (bytes: Buffer) => ({ md5: createHash('md5').update(bytes).digest('hex'), sha256: createHash('sha256').update(bytes).digest('hex') });
const SMALL = Buffer.from('site,value\n'.repeat(500));
const LARGE = randomBytes(2 * 1024 * 1024 + 3);
/** whole seconds, so utimes can put it back exactly */
const MTIME = new Date('2024-01-02T03:04:05Z');

async function makeFolder(): Promise<void> {
  await mkdir(path.join(workspace.dir, 'Data'));
  for (const [name, bytes] of [['small.csv', SMALL], ['large.bin', LARGE]] as const) {
    await writeFile(path.join(workspace.dir, 'Data', name), bytes);
    await utimes(path.join(workspace.dir, 'Data', name), MTIME, MTIME);
  }
}

let downloads = 0;
async function download(target: LocalTarget): Promise<Map<string, Provenance['files'][number]>> {
  const zipPath = path.join(workspace.dir, `..`, `${path.basename(workspace.dir)}-${downloads++}.zip`);
  const bag = bagNameFor('local', 'x');
  await pipeline(writeBagZip(await target.read(ctx(), encodeLocalId('Data')), { targetName: 'local', resourceId: 'x', bagName: bag }), createWriteStream(zipPath));
  try {
    const provenance = (JSON.parse(await readZipText(zipPath, `${bag}/ferry-provenance.json`)) as ProvenanceLog).entries[0]!;
    return new Map(provenance.files.map((file) => [file.path, file]));
  } finally {
    await rm(zipPath, { force: true });
  }
}

it('the second download takes the digests the first computed; a file changed in place with its size and mtime put back is hashed again', async () => {
  await makeFolder();
  const target = new LocalTarget({ root: workspace.dir, settledAfterMs: 0 });
  const first = await download(target);
  expect(first.get('Data/large.bin')).toMatchObject({ computed_hashes: digests(LARGE), fixity: 'no-source-hash' });
  expect(first.get('Data/large.bin')!.hashes_remembered).toBeUndefined();

  const second = await download(target);
  for (const [name, bytes] of [['small.csv', SMALL], ['large.bin', LARGE]] as const) {
    expect(second.get(`Data/${name}`)).toMatchObject({ computed_hashes: digests(bytes), hashes_remembered: true, fixity: 'ok' });
  }

  // one byte of each file changes in place; size, mtime and inode stay what they were
  for (const [name, bytes] of [['small.csv', SMALL], ['large.bin', LARGE]] as const) {
    const file = path.join(workspace.dir, 'Data', name);
    const before = await stat(file, { bigint: true });
    const handle = await open(file, 'r+');
    await handle.write(Buffer.from([bytes[7]! ^ 0x01]), 0, 1, 7);
    await handle.close();
    await utimes(file, MTIME, MTIME);
    const after = await stat(file, { bigint: true });
    expect([after.size, after.mtimeNs, after.ino]).toEqual([before.size, before.mtimeNs, before.ino]);
  }
  const third = await download(target);
  for (const [name, bytes] of [['small.csv', SMALL], ['large.bin', LARGE]] as const) {
    const changed = Buffer.from(bytes);
    changed[7] = changed[7]! ^ 0x01;
    const file = third.get(`Data/${name}`)!;
    // its ctime moved, so nothing is remembered of this version (the CRC-32 check behind it is bag-writer.remembered.test.ts's)
    expect(file).toMatchObject({ source_hashes: {}, computed_hashes: digests(changed), fixity: 'no-source-hash' });
    expect(file.hashes_remembered).toBeUndefined();
  }
});

it('files changed moments ago are not remembered: the next download hashes them again', async () => {
  await makeFolder();
  const target = new LocalTarget({ root: workspace.dir }); // the default: settled for 2 s
  await download(target);
  const second = await download(target);
  expect(second.get('Data/small.csv')!.hashes_remembered).toBeUndefined();
  expect(second.get('Data/large.bin')).toMatchObject({ computed_hashes: digests(LARGE), fixity: 'no-source-hash' });
});
