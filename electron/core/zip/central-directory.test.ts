import { execFileSync } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { crc32 } from 'node:zlib';
import yauzl from 'yauzl';
import yazl from 'yazl';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeManyEntriesZip } from '../../../test/support/many-entries-zip.js';
import { rawZip } from './testing/raw-zip.js';
import { readCentralDirectory, scanCentralDirectory } from './central-directory.js';
import { openZip } from '../targets/offline/archive-index.js';

// The chunked central-directory reader must give exactly what yauzl's readEntry gives, but
// names: those are decoded by entry-name.ts (ASCII as ASCII, UTF-8 written without the flag
// as UTF-8) and never judged or changed here (a backslash stays one: the policy refuses it).

/** The records without their names, for the comparison with yauzl. */
const unnamed = (entries: Record<string, unknown>[]) => entries.map(({ fileName: _name, ...rest }) => rest);

const FIELDS = [
  'versionMadeBy', 'versionNeededToExtract', 'generalPurposeBitFlag', 'compressionMethod', 'lastModFileTime', 'lastModFileDate',
  'crc32', 'compressedSize', 'uncompressedSize', 'fileNameLength', 'extraFieldLength', 'fileCommentLength',
  'internalFileAttributes', 'externalFileAttributes', 'relativeOffsetOfLocalHeader', 'fileName', 'fileComment', 'comment',
] as const;

function describeEntry(entry: yauzl.Entry): Record<string, unknown> {
  const record = entry as unknown as Record<string, unknown>;
  return {
    ...Object.fromEntries(FIELDS.map((field) => [field, record[field]])),
    fileNameRaw: Buffer.from(record.fileNameRaw as Buffer).toString('hex'),
    extraFieldRaw: Buffer.from(record.extraFieldRaw as Buffer).toString('hex'),
    extraFields: entry.extraFields.map((field) => `${field.id}:${field.data.toString('hex')}`),
    lastModDate: entry.getLastModDate().toISOString(),
  };
}

async function viaYauzl(file: string): Promise<Record<string, unknown>[]> {
  const zip = await openZip(file);
  try {
    const out: Record<string, unknown>[] = [];
    await new Promise<void>((resolve, reject) => {
      zip.on('entry', (entry: yauzl.Entry) => {
        out.push(describeEntry(entry));
        zip.readEntry();
      });
      zip.on('end', resolve);
      zip.on('error', reject);
      zip.readEntry();
    });
    return out;
  } finally {
    zip.close();
  }
}

async function viaChunks(file: string): Promise<Record<string, unknown>[]> {
  const zip = await openZip(file);
  let entries: yauzl.Entry[];
  try {
    entries = await readCentralDirectory(file, zip);
  } finally {
    zip.close();
  }
  // the table's columns (a plain name's fast path included) say what the full records say
  const again = await openZip(file);
  try {
    const table = await scanCentralDirectory(file, again);
    const columns = (i: number) => ({
      name: table.names[i],
      flags: table.flags[i],
      compressedSize: table.compressedSize[i],
      uncompressedSize: table.uncompressedSize[i],
      offset: table.localHeaderOffset[i],
    });
    const fields = (entry: yauzl.Entry) => ({
      name: entry.fileName,
      flags: entry.generalPurposeBitFlag,
      compressedSize: entry.compressedSize,
      uncompressedSize: entry.uncompressedSize,
      offset: entry.relativeOffsetOfLocalHeader,
    });
    expect(table.count).toBe(entries.length);
    for (let i = 0; i < table.count; i++) expect(columns(i)).toEqual(fields(entries[i]!));
  } finally {
    again.close();
  }
  return entries.map(describeEntry);
}

/** yazl's typings lack fileComment (yazl 3 supports it) */
type YazlOptions = Partial<yazl.Options>;

let work: string;
beforeAll(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), 'ferry-cd-'));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

describe('readCentralDirectory matches yauzl', () => {
  it('on a ZIP64 archive of 66,000 entries (spans several read chunks), and entries still open through yauzl', { timeout: 60_000 }, async () => {
    const file = path.join(work, 'many.zip');
    await writeManyEntriesZip(file, 66_000, (i) => `many/d${i % 100}/f${i}-${'x'.repeat(i % 50)}.txt`);
    const chunked = await viaChunks(file);
    expect(chunked).toHaveLength(66_000);
    expect(chunked).toEqual(await viaYauzl(file));
  });

  it('on ZIP64 extra fields (sizes and offsets in the 0x0001 field), comments, unicode names and stored/deflated data', async () => {
    const file = path.join(work, 'zip64.zip');
    const zip = new yazl.ZipFile();
    const payload = Buffer.from('ferry '.repeat(10_000));
    zip.addBuffer(payload, 'plain.txt', { forceZip64Format: true, fileComment: 'a comment' } as YazlOptions);
    zip.addBuffer(payload, 'données/résumé ☃.txt', { forceZip64Format: true, compress: false });
    zip.addBuffer(Buffer.from('x'), 'emoji/🦀.txt', { fileComment: 'ünïcode comment' } as YazlOptions);
    zip.addEmptyDirectory('empty/');
    zip.end({ forceZip64Format: true } as Parameters<yazl.ZipFile['end']>[0]);
    await pipeline(zip.outputStream, createWriteStream(file));
    const chunked = await viaChunks(file);
    expect(chunked.map((entry) => entry.fileName)).toEqual(['plain.txt', 'données/résumé ☃.txt', 'emoji/🦀.txt', 'empty/']);
    expect(chunked.some((entry) => (entry.extraFields as string[]).some((field) => field.startsWith('1:')))).toBe(true);
    expect(chunked).toEqual(await viaYauzl(file));

    // entry data opens through yauzl from the parsed records
    const opened = await openZip(file);
    try {
      const [first, second] = await readCentralDirectory(file, opened);
      for (const entry of [first!, second!]) {
        const chunks: Buffer[] = [];
        const stream = await new Promise<NodeJS.ReadableStream>((resolve, reject) => opened.openReadStream(entry, (error, s) => (error ? reject(error) : resolve(s!))));
        for await (const chunk of stream) chunks.push(chunk as Buffer);
        expect(Buffer.concat(chunks).equals(payload)).toBe(true);
      }
    } finally {
      opened.close();
    }
  });

  it('on Info-ZIP archives (UT timestamps, names as this zip build writes them)', async () => {
    const folder = path.join(work, 'infozip');
    await mkdir(path.join(folder, 'Ünïcødé dir'), { recursive: true });
    await writeFile(path.join(folder, 'Ünïcødé dir', 'naïve café.txt'), 'bonjour\n');
    await writeFile(path.join(folder, 'ascii.txt'), 'hello\n');
    const file = path.join(work, 'infozip.zip');
    execFileSync('zip', ['-q', '-r', file, '.'], { cwd: folder, env: { ...process.env, LC_ALL: 'C.UTF-8' } });
    const chunked = await viaChunks(file);
    expect(chunked).toHaveLength(3);
    expect(unnamed(chunked)).toEqual(unnamed(await viaYauzl(file)));
    // this zip writes UTF-8 names without the flag: read as UTF-8, not as CP437 (as yauzl does)
    expect(chunked.map((entry) => entry.fileName).sort()).toEqual(['ascii.txt', 'Ünïcødé dir/', 'Ünïcødé dir/naïve café.txt'].sort());
  });

  it('on the Info-ZIP unicode path field (0x7075): used when its CRC matches the raw name, ignored when not', async () => {
    const file = path.join(work, 'unicode-path.zip');
    const raw = Buffer.from([0x6e, 0x61, 0x81, 0x76, 0x65]); // "na\x81ve" in CP437
    const good = unicodePathField(raw, 'naïve ☃.txt');
    const stale = unicodePathField(Buffer.from('other'), 'stale.txt');
    await writeFile(file, zipWithExtras([{ name: raw, extra: good }, { name: Buffer.from('plain.txt'), extra: stale }]));
    const chunked = await viaChunks(file);
    expect(chunked.map((entry) => entry.fileName)).toEqual(['naïve ☃.txt', 'plain.txt']);
    expect(chunked).toEqual(await viaYauzl(file));
  });

  it('on CP437 names without the UTF-8 flag, and backslashes (kept: the policy refuses them)', async () => {
    const file = path.join(work, 'cp437.zip');
    await writeManyEntriesZip(file, 3, (i) => ['plain.txt', 'dir\\inner.txt', 'x'][i]!);
    const bytes = await readFile(file);
    // turn the UTF-8 flags off and put a CP437 byte (0x81 = ü) into the third name
    for (let at = bytes.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02])); at >= 0; at = bytes.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]), at + 4)) {
      bytes.writeUInt16LE(0, at + 8);
      if (bytes.readUInt16LE(at + 28) === 1) bytes[at + 46] = 0x81;
    }
    await writeFile(file, bytes);
    const chunked = await viaChunks(file);
    expect(chunked.map((entry) => entry.fileName)).toEqual(['plain.txt', 'dir\\inner.txt', 'ü']);
    expect(unnamed(chunked)).toEqual(unnamed(await viaYauzl(file)));
  });

  it('reads a hostile name as it is (the policy names what is wrong with it); refuses a broken record as yauzl does', async () => {
    const file = path.join(work, 'hostile.zip');
    await writeManyEntriesZip(file, 2, (i) => ['ok.txt', '../escape.txt'][i]!);
    expect((await viaChunks(file)).map((entry) => entry.fileName)).toEqual(['ok.txt', '../escape.txt']);

    const broken = path.join(work, 'broken.zip');
    const bytes = await readFile(file);
    bytes.writeUInt32LE(0x12345678, bytes.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02])));
    await writeFile(broken, bytes);
    await expect(viaChunks(broken)).rejects.toThrow('invalid central directory file header signature: 0x12345678');
  });
});

function unicodePathField(rawName: Buffer, unicode: string): Buffer {
  const name = Buffer.from(unicode, 'utf8');
  const field = Buffer.alloc(4 + 5 + name.length);
  field.writeUInt16LE(0x7075, 0);
  field.writeUInt16LE(5 + name.length, 2);
  field.writeUInt8(1, 4);
  field.writeUInt32LE(crc32(rawName), 5);
  name.copy(field, 9);
  return field;
}

/** Empty stored entries with the given raw names (no UTF-8 flag) and central extra fields. */
function zipWithExtras(entries: { name: Buffer; extra: Buffer }[]): Buffer {
  return rawZip(entries.map(({ name, extra }) => ({ name, utf8: false, centralExtra: extra })));
}
