import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Entry, RememberedDigests } from '../target.js';
import { bagNameFor, writeBagZip} from './bag-writer.js';
import type { ProvenanceEntry as Provenance, ProvenanceLog } from '../provenance/format.js';
import { parseManifest } from './bagit-format.js';
import { memoryReadResult } from './testing/folder-source.js';
import { readZipText, run } from '../zip/testing/zip-inspect.js';

// A source that remembers a file's digests with the CRC-32 of the bytes they came from
// (the local target) lets a download skip md5 and sha256 while the bytes it reads still
// have that CRC-32, and only then.

let work: string;
beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'ferry-bag-remembered-'));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

const digest = (algorithm: string, bytes: Buffer) => createHash(algorithm).update(bytes).digest('hex');
const truth = (bytes: Buffer) => ({ md5: digest('md5', bytes), sha256: digest('sha256', bytes) });
/** digests no computation would give: seeing them in a manifest proves they were taken as remembered */
const FAKE = { md5: 'f'.repeat(32), sha256: 'e'.repeat(64) };
const SMALL = randomBytes(20_000);
/** over the bag writer's 1 MiB small-file limit: streamed */
const LARGE = randomBytes(3 * 1024 * 1024 + 5);

interface Source {
  entry: Entry;
  opened: () => number;
  remembered: RememberedDigests[];
}

/** A file entry whose every open() gives the next of `versions` (the last one repeated). */
function fileEntry(name: string, versions: Buffer[], remembered?: RememberedDigests): Source {
  let opens = 0;
  const told: RememberedDigests[] = [];
  const entry: Entry = {
    path: `Data/${name}`,
    kind: 'file',
    size: versions[0]!.length,
    mtime: null,
    hashes: remembered ? { ...remembered.hashes } : {},
    open: async () => Readable.from([versions[Math.min(opens++, versions.length - 1)]!]),
    remember: (digests) => told.push(digests),
  };
  if (remembered) entry.remembered = remembered;
  return { entry, opened: () => opens, remembered: told };
}

async function download(sources: Source[], name: string) {
  const folder: Entry = { path: 'Data', kind: 'folder', size: null, mtime: null, hashes: {}, open: () => Promise.reject(new Error('a folder')) };
  const read = memoryReadResult('Data', [folder, ...sources.map((source) => source.entry)]);
  const bag = bagNameFor('test', name);
  const zipPath = path.join(work, `${name}.zip`);
  await pipeline(writeBagZip(read, { targetName: 'test', resourceId: name, bagName: bag }), createWriteStream(zipPath));
  await run('unzip', ['-tq', zipPath]);
  const manifest = async (algorithm: string) => {
    const { lines } = parseManifest(await readZipText(zipPath, `${bag}/manifest-${algorithm}.txt`));
    return new Map(lines.map((line) => [line.path, line.hex]));
  };
  return {
    md5: await manifest('md5'),
    sha256: await manifest('sha256'),
    provenance: (JSON.parse(await readZipText(zipPath, `${bag}/ferry-provenance.json`)) as ProvenanceLog).entries[0]!,
  };
}

const fileOf = (provenance: Provenance, name: string) => provenance.files.find((file) => file.path === `Data/${name}`)!;

it('takes the remembered digests when the CRC-32 of the bytes read matches, small and large files alike', async () => {
  const small = fileEntry('small.csv', [SMALL], { hashes: FAKE, crc32: zlib.crc32(SMALL) });
  const large = fileEntry('large.bin', [LARGE], { hashes: FAKE, crc32: zlib.crc32(LARGE) });
  const { md5, sha256, provenance } = await download([small, large], 'matching');
  for (const name of ['small.csv', 'large.bin']) {
    expect(md5.get(`data/Data/${name}`)).toBe(FAKE.md5);
    expect(sha256.get(`data/Data/${name}`)).toBe(FAKE.sha256);
    expect(fileOf(provenance, name)).toMatchObject({ computed_hashes: FAKE, hashes_remembered: true, fixity: 'ok' });
  }
  expect(small.remembered).toEqual([]);
  expect(large.remembered).toEqual([]);
  expect(large.opened()).toBe(1);
});

it('hashes the bytes when their CRC-32 is not the remembered one, says so in the provenance, and hands the new digests back', async () => {
  const stale = { hashes: FAKE, crc32: (zlib.crc32(Buffer.from('what the file held before')) >>> 0) };
  const small = fileEntry('small.csv', [SMALL], stale);
  const large = fileEntry('large.bin', [LARGE], stale);
  const { md5, sha256, provenance } = await download([small, large], 'changed');
  for (const [name, bytes, source] of [['small.csv', SMALL, small], ['large.bin', LARGE, large]] as const) {
    expect(md5.get(`data/Data/${name}`)).toBe(truth(bytes).md5);
    expect(sha256.get(`data/Data/${name}`)).toBe(truth(bytes).sha256);
    const file = fileOf(provenance, name);
    expect(file).toMatchObject({ source_hashes: FAKE, computed_hashes: truth(bytes), fixity: 'mismatch' });
    expect(file.hashes_remembered).toBeUndefined();
    expect(source.remembered).toEqual([{ hashes: truth(bytes), crc32: zlib.crc32(bytes) }]);
  }
  // the large file's bytes were gone by the end: it was read a second time to hash it
  expect(large.opened()).toBe(2);
});

it('without remembered digests computes them, hands them back, and does not claim to have remembered them', async () => {
  const small = fileEntry('small.csv', [SMALL]);
  const large = fileEntry('large.bin', [LARGE]);
  const { md5, provenance } = await download([small, large], 'cold');
  expect(md5.get('data/Data/large.bin')).toBe(truth(LARGE).md5);
  expect(fileOf(provenance, 'large.bin').hashes_remembered).toBeUndefined();
  expect(small.remembered).toEqual([{ hashes: truth(SMALL), crc32: zlib.crc32(SMALL) }]);
  expect(large.remembered).toEqual([{ hashes: truth(LARGE), crc32: zlib.crc32(LARGE) }]);
});

it('fails the download, naming the file, when a large file read again is not what was written', async () => {
  const changing = Buffer.from(LARGE);
  changing[1000] = changing[1000]! ^ 0xff;
  const large = fileEntry('large.bin', [LARGE, changing], { hashes: FAKE, crc32: 12345 });
  await expect(download([large], 'torn')).rejects.toThrow("'Data/large.bin' changed while it was being downloaded; download it again.");
  expect(large.remembered).toEqual([]);
});

it('does not hand back digests of more or fewer bytes than the source listed (the file changed meanwhile)', async () => {
  const small = fileEntry('small.csv', [SMALL]);
  small.entry.size = SMALL.length - 1;
  const large = fileEntry('large.bin', [LARGE]);
  large.entry.size = LARGE.length + 1;
  const { md5 } = await download([small, large], 'resized');
  expect(md5.get('data/Data/small.csv')).toBe(truth(SMALL).md5);
  expect(md5.get('data/Data/large.bin')).toBe(truth(LARGE).md5);
  expect(small.remembered).toEqual([]);
  expect(large.remembered).toEqual([]);
});
