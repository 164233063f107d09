import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import * as roCrate from 'ro-crate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../limits.js';
import { bagNameFor, writeBagZip } from './bag-writer.js';
import { parseManifest } from './bagit-format.js';
import { folderReadResult } from './testing/folder-source.js';
import { run } from '../zip/testing/zip-inspect.js';
import { openUploadZip } from './upload-reader.js';

// A downloaded bag is also an RO-Crate (RO-Crate 1.2, the crate's root at the bag's top).
// Checked by an independent implementation (the `ro-crate` npm package, Language Research
// Technology) and against the spec's required entities by hand; the bag must still
// validate and upload back.

let work: string;
let bagDir: string;
let zipPath: string;
const title = 'Survey 2024';
const bag = bagNameFor('local', 'survey');
const csv = Buffer.from('site,value\nA,1\n');
const notes = Buffer.from('notes\n');

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'ferry-ro-crate-'));
  const folder = path.join(work, 'src', title);
  await mkdir(path.join(folder, 'raw'), { recursive: true });
  await writeFile(path.join(folder, 'data.csv'), csv);
  await writeFile(path.join(folder, 'raw', 'notes.txt'), notes);
  const read = folderReadResult(folder);
  zipPath = path.join(work, 'bag.zip');
  await pipeline(
    writeBagZip(read, {
      targetName: 'local',
      resourceId: 'survey',
      bagName: bag,
      now: new Date('2024-05-06T07:08:09.123Z'),
      describe: { identifier: 'https://doi.org/10.5281/zenodo.123' },
    }),
    createWriteStream(zipPath),
  );
  await run('unzip', ['-q', zipPath, '-d', work]);
  bagDir = path.join(work, bag);
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

const { ROCrate } = roCrate;
/** The package's validator (exported, but not in its type declarations). */
interface CrateValidator {
  results: { id: string; status: string }[];
  parseJSON(text: string): void;
  isCrate(): void;
  rootDataEntity(): void;
  checkFiles(files: Record<string, { exists: boolean; isDir: boolean }>): void;
}
const { Validator } = roCrate as unknown as { Validator: new () => CrateValidator };

const crateJson = async () => JSON.parse(await readFile(path.join(bagDir, 'ro-crate-metadata.json'), 'utf8')) as { '@context': unknown; '@graph': Record<string, unknown>[] };
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('ro-crate-metadata.json in a downloaded bag', () => {
  it('has the RO-Crate 1.2 metadata descriptor and root data entity with its required properties', async () => {
    const json = await crateJson();
    const byId = new Map(json['@graph'].map((node) => [node['@id'], node]));
    expect(byId.get('ro-crate-metadata.json')).toMatchObject({ '@type': 'CreativeWork', conformsTo: { '@id': 'https://w3id.org/ro/crate/1.2' }, about: { '@id': './' } });
    const root = byId.get('./')!;
    expect(root['@type']).toBe('Dataset');
    expect(root.name).toBe(title);
    expect(typeof root.description).toBe('string');
    expect(root.datePublished).toBe('2024-05-06T07:08:09.123Z');
    expect(root.identifier).toBe('https://doi.org/10.5281/zenodo.123');
  });

  it('is read by the ro-crate package, which finds every payload file with its size and sha256', async () => {
    const crate = new ROCrate(await crateJson(), { array: true, link: true });
    const parts = crate.rootDataset.hasPart.map((part: { '@id': string }) => part['@id']).sort();
    expect(parts).toEqual([`data/${title}/`, `data/${title}/data.csv`, `data/${title}/raw/`, `data/${title}/raw/notes.txt`]);
    const file = crate.getEntity(`data/${title}/data.csv`)!;
    expect(file['@type']).toEqual(['File']);
    expect(file.contentSize).toEqual([String(csv.length)]);
    expect(file.sha256).toEqual([sha256(csv)]);
    expect(crate.getEntity(`data/${title}/raw/notes.txt`)!.sha256).toEqual([sha256(notes)]);
  });

  it("passes the ro-crate package's validator; the only finding is the licence the source did not give", async () => {
    const validator = new Validator();
    validator.parseJSON(await readFile(path.join(bagDir, 'ro-crate-metadata.json'), 'utf8'));
    validator.isCrate();
    // hasContext() fetches the context over the network; the context is checked above instead
    validator.rootDataEntity();
    const onDisk: Record<string, { exists: boolean; isDir: boolean }> = {};
    for (const dirent of await readdir(path.join(bagDir, 'data'), { recursive: true, withFileTypes: true })) {
      const relative = path.relative(bagDir, path.join(dirent.parentPath, dirent.name)).split(path.sep).join('/');
      onDisk[dirent.isDirectory() ? `${relative}/` : relative] = { exists: true, isDir: dirent.isDirectory() };
    }
    validator.checkFiles(onDisk);
    const problems = validator.results.filter((result) => result.status !== 'success');
    expect(problems.map((problem) => `${problem.status}:${problem.id}`)).toEqual(['error:licenseRequired']);
  });

  it('is a tag file: both tag manifests cover it, and the bag still uploads back', async () => {
    for (const algorithm of ['md5', 'sha256']) {
      const { lines } = parseManifest(await readFile(path.join(bagDir, `tagmanifest-${algorithm}.txt`), 'utf8'));
      const line = lines.find((l) => l.path === 'ro-crate-metadata.json');
      expect(line?.hex).toBe(createHash(algorithm).update(await readFile(path.join(bagDir, 'ro-crate-metadata.json'))).digest('hex'));
    }
    const archive = await openUploadZip(zipPath, DEFAULT_LIMITS);
    try {
      expect(archive.kind).toBe('bag');
      expect(archive.fileCount).toBe(2);
    } finally {
      await archive.close();
    }
  });
});
