// A seeded, deterministic corpus of malformed and malicious ZIP archives, made at test time
// (never committed). Each archive says what a correct Ferry must do with it as an upload,
// and what the offline library must show. Three kinds of source: archives written byte by
// byte (raw-zip.ts, for lies no real tool writes), and mutations (cuts, patched fields,
// flipped bytes) of valid archives made by yazl and by Info-ZIP's `zip`.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { crc32, inflateRawSync } from 'node:zlib';
import yazl from 'yazl';
import { overlapBombZip, rawZip, rawZipLayout, zip64Extra, type RawEntry } from '../../../electron/core/zip/testing/raw-zip.js';
import { CENTRAL, END, LOCAL, zipLayout } from '../../../electron/core/zip/testing/zip-layout.js';
import { seededRandom } from '../../support/seeded-random.js';

const run = promisify(execFile);

/** Files by path relative to the container an upload lands in. */
export type Files = Record<string, Buffer>;

/** What the upload must come to. */
export type Expectation =
  /** refused at once (4xx) or a failed job */
  | { kind: 'refuse' }
  /** a succeeded job that wrote exactly these files */
  | { kind: 'exact'; files: Files }
  /** refused/failed, or succeeded with exactly these files */
  | { kind: 'exact-or-fail'; files: Files }
  /** refused/failed, or succeeded with some of these files (path and bytes) */
  | { kind: 'subset-or-fail'; files: Files }
  /** refused/failed, or succeeded with files whose bytes are among these (a mutation may rename) */
  | { kind: 'contents-or-fail'; files: Files };

export type Category =
  | 'control'
  | 'truncated'
  | 'corrupt-directory'
  | 'overlap'
  | 'zip-slip'
  | 'special-entry'
  | 'look-alike'
  | 'encrypted'
  | 'zip64-lie'
  | 'bomb'
  | 'bag'
  | 'random-flip';

export interface HostileArchive {
  /** stable, filesystem-safe: "<category>-<n>-<label>" */
  id: string;
  category: Category;
  label: string;
  expect: Expectation;
  /** the offline library must list it damaged (it cannot be browsed safely) */
  offlineDamaged: boolean;
  /** made on demand: a short run builds only its sample */
  build(): Buffer;
}


function randomBytesFrom(random: () => number, length: number): Buffer {
  const out = Buffer.alloc(length);
  for (let i = 0; i < length; i++) out[i] = Math.floor(random() * 256);
  return out;
}

// ---- the valid material everything is made from

interface Bases {
  files: Files;
  raw: Buffer;
  yazl: Buffer;
  yazlCommented: Buffer;
  infoZip: Buffer;
  infoZipEncrypted: Buffer | null;
  infoZipSymlink: Buffer | null;
  bag: Buffer;
}

function baseFiles(random: () => number): Files {
  const words = ['sample', 'depth', 'site', 'count', 'lat', 'lon', 'note'];
  const csv = Array.from({ length: 200 }, (_, i) => `${i},${words[i % words.length]},${Math.floor(random() * 1e6)}`).join('\n');
  return {
    'Data/readme.txt': Buffer.from('Field survey, spring.\nSee table.csv.\n'),
    'Data/sub/table.csv': Buffer.from(csv),
    'Data/sub/scan.bin': randomBytesFrom(random, 3000),
    'Data/empty.txt': Buffer.alloc(0),
  };
}

function rawEntriesOf(files: Files): RawEntry[] {
  const folders = [...new Set(Object.keys(files).flatMap((p) => p.split('/').slice(0, -1).map((_, i, all) => `${all.slice(0, i + 1).join('/')}/`)))];
  return [...folders.map((name): RawEntry => ({ name })), ...Object.entries(files).map(([name, data]): RawEntry => ({ name, data, method: name.endsWith('.bin') ? 0 : undefined }))];
}

function yazlZip(files: Files, comment?: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const zip = new yazl.ZipFile();
    for (const [name, data] of Object.entries(files)) zip.addBuffer(data, name, { mtime: new Date(Date.UTC(2024, 0, 2)), compress: !name.endsWith('.bin') });
    zip.addEmptyDirectory('Data/more/', { mtime: new Date(Date.UTC(2024, 0, 2)) });
    const chunks: Buffer[] = [];
    zip.outputStream.on('data', (chunk: Buffer) => chunks.push(chunk));
    zip.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
    zip.outputStream.on('error', reject);
    zip.end({ forceZip64Format: false, comment: comment ?? "" });
  });
}

async function infoZip(files: Files, args: string[], extra?: (dir: string) => Promise<void>): Promise<Buffer | null> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-hostile-base-'));
  try {
    for (const [name, data] of Object.entries(files)) {
      await mkdir(path.dirname(path.join(dir, 'src', name)), { recursive: true });
      await writeFile(path.join(dir, 'src', name), data);
    }
    await extra?.(path.join(dir, 'src'));
    await run('zip', ['-q', '-r', '-X', ...args, path.join(dir, 'out.zip'), 'Data'], { cwd: path.join(dir, 'src'), env: { ...process.env, LC_ALL: 'C.UTF-8', TZ: 'UTC' } });
    return await readFile(path.join(dir, 'out.zip'));
  } catch {
    return null; // no `zip` on this machine: the raw and yazl bases still cover every category
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

// ---- bags

const hex = (algorithm: string, data: Buffer) => createHash(algorithm).update(data).digest('hex');

interface BagParts {
  bagit?: string | null;
  bagInfo?: string | null;
  manifests?: Record<string, string>;
  tagAlgorithms?: string[];
  /** replace the tag manifest's text after it was computed */
  tagManifestText?: (text: string) => string;
  extraTag?: Record<string, string>;
}

/** A bag of `payload` (paths relative to data/), with its tag files made right unless told otherwise. */
export function bagEntries(payload: Files, parts: BagParts = {}, root = ''): RawEntry[] {
  const manifestOf = (algorithm: string) => Object.entries(payload).map(([p, d]) => `${hex(algorithm, d)}  data/${p}\n`).join('');
  const bytes = Object.values(payload).reduce((sum, d) => sum + d.length, 0);
  const tags: Record<string, string> = {};
  if (parts.bagit !== null) tags['bagit.txt'] = parts.bagit ?? 'BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n';
  if (parts.bagInfo !== null) tags['bag-info.txt'] = parts.bagInfo ?? `Bagging-Date: 2024-01-02\nPayload-Oxum: ${bytes}.${Object.keys(payload).length}\n`;
  Object.assign(tags, parts.manifests ?? { 'manifest-md5.txt': manifestOf('md5'), 'manifest-sha256.txt': manifestOf('sha256') });
  Object.assign(tags, parts.extraTag ?? {});
  for (const algorithm of parts.tagAlgorithms ?? ['sha256']) {
    const text = Object.entries(tags).map(([name, t]) => `${hex(algorithm, Buffer.from(t))}  ${name}\n`).join('');
    tags[`tagmanifest-${algorithm}.txt`] = parts.tagManifestText ? parts.tagManifestText(text) : text;
  }
  const prefix = root ? `${root}/` : '';
  return [
    ...Object.entries(tags).map(([name, text]): RawEntry => ({ name: prefix + name, data: Buffer.from(text) })),
    ...Object.entries(payload).map(([name, data]): RawEntry => ({ name: `${prefix}data/${name}`, data })),
  ];
}

export function manifestText(payload: Files, algorithm: string): string {
  return Object.entries(payload).map(([p, d]) => `${hex(algorithm, d)}  data/${p}\n`).join('');
}

// ---- the corpus

interface Maker {
  category: Category;
  label: string;
  expect: Expectation;
  offlineDamaged?: boolean;
  build(): Buffer;
}

export async function buildCorpus(seed: number, options: { maxEntries: number }): Promise<HostileArchive[]> {
  const random = seededRandom(seed);
  const files = baseFiles(random);
  const bases: Bases = {
    files,
    raw: rawZip(rawEntriesOf(files)),
    yazl: await yazlZip(files),
    yazlCommented: await yazlZip(files, 'made by yazl for the hostile corpus'),
    infoZip: (await infoZip(files, [])) ?? (await yazlZip(files)),
    infoZipEncrypted: await infoZip(files, ['-P', 'secret']),
    infoZipSymlink: await infoZip(files, ['-y'], (dir) => symlink('../../../etc/passwd', path.join(dir, 'Data', 'passwd'))),
    bag: rawZip(bagEntries(files)),
  };
  const makers: Maker[] = [
    ...controls(bases),
    ...truncations(bases, random),
    ...corruptDirectories(bases),
    ...overlaps(bases),
    ...zipSlips(),
    ...specialEntries(bases),
    ...lookAlikes(),
    ...encrypted(bases),
    ...zip64Lies(bases),
    ...bombs(options.maxEntries),
    ...bags(files),
    ...randomFlips(bases, random),
  ];
  const counters = new Map<Category, number>();
  return makers.map((maker) => {
    const n = (counters.get(maker.category) ?? 0) + 1;
    counters.set(maker.category, n);
    const id = `${maker.category}-${String(n).padStart(3, '0')}-${maker.label.replace(/[^A-Za-z0-9]+/g, '_').slice(0, 40)}`;
    let built: Buffer | null = null;
    return {
      id,
      category: maker.category,
      label: maker.label,
      expect: maker.expect,
      offlineDamaged: maker.offlineDamaged ?? false,
      build: () => (built ??= maker.build()),
    };
  });
}

/** A stratified sample: `perCategory` archives of every category, spread over it, always the same ones. */
export function stratifiedSample(corpus: HostileArchive[], perCategory: number): HostileArchive[] {
  const byCategory = new Map<Category, HostileArchive[]>();
  for (const archive of corpus) byCategory.set(archive.category, [...(byCategory.get(archive.category) ?? []), archive]);
  const sample: HostileArchive[] = [];
  for (const list of byCategory.values()) {
    const step = Math.max(1, list.length / perCategory);
    for (let i = 0; i < Math.min(perCategory, list.length); i++) sample.push(list[Math.floor(i * step)]!);
  }
  return sample;
}

const refuse: Expectation = { kind: 'refuse' };
const only = (files: Files, ...paths: string[]): Files => Object.fromEntries(paths.map((p) => [p, files[p]!]));
const fileEntry = (name: string | Buffer, extra: Partial<RawEntry> = {}): RawEntry => ({ name, data: Buffer.from('payload\n'), ...extra });
const patch = (zip: Buffer, edit: (copy: Buffer) => void): Buffer => {
  const copy = Buffer.from(zip);
  edit(copy);
  return copy;
};

function controls(bases: Bases): Maker[] {
  const { files } = bases;
  const x = Buffer.from('x\n');
  const literal = (name: string): Maker => ({ category: 'control', label: `literal name ${name}`, expect: { kind: 'exact', files: { [name]: x } }, build: () => rawZip([fileEntry(name, { data: x })]) });
  const inner = rawZip([fileEntry('Data/inner.txt')]);
  return [
    { category: 'control', label: 'raw writer', expect: { kind: 'exact', files }, build: () => bases.raw },
    { category: 'control', label: 'yazl', expect: { kind: 'exact', files }, build: () => bases.yazl },
    { category: 'control', label: 'yazl with comment', expect: { kind: 'exact', files }, build: () => bases.yazlCommented },
    { category: 'control', label: 'info-zip', expect: { kind: 'exact', files }, build: () => bases.infoZip },
    { category: 'control', label: 'bag', expect: { kind: 'exact', files }, build: () => bases.bag },
    { category: 'control', label: 'bag in one top folder', expect: { kind: 'exact', files }, build: () => rawZip(bagEntries(files, {}, 'my-bag')) },
    { category: 'control', label: 'empty zip', expect: { kind: 'exact', files: {} }, build: () => rawZip([]) },
    {
      category: 'control',
      label: 'desktop litter skipped',
      expect: { kind: 'exact', files: only(files, 'Data/readme.txt') },
      build: () => rawZip([fileEntry('Data/readme.txt', { data: files['Data/readme.txt'] }), fileEntry('__MACOSX/Data/._readme.txt'), fileEntry('Data/.DS_Store'), fileEntry('Data/Thumbs.db')]),
    },
    { category: 'control', label: 'zip inside a zip stays a file', expect: { kind: 'exact', files: { 'Data/inner.zip': inner } }, build: () => rawZip([{ name: 'Data/inner.zip', data: inner }]) },
    ...['Data/%2e%2e/x', 'Data/%252e%252e', 'Data/a‥b', 'Data/..a', 'Data/a..', 'Data/.hidden', 'Data/~', 'Data/a b/c d.txt', 'Data/naïve #1?.txt', 'Data/日本語/データ.csv'].map(literal),
    {
      category: 'control',
      label: 'UTF-8 name without the flag (Info-ZIP on Linux)',
      expect: { kind: 'exact', files: { 'Data/café.txt': x } },
      build: () => rawZip([{ name: 'Data/café.txt', data: x, utf8: false }]),
    },
    {
      category: 'control',
      label: 'ZIP64 sizes that tell the truth',
      expect: { kind: 'exact', files: { 'Data/z.txt': x } },
      build: () => rawZip([{ name: 'Data/z.txt', data: x, method: 0, declaredSize: 0xffffffff, declaredCompressedSize: 0xffffffff, centralExtra: zip64Extra(x.length, x.length) }]),
    },
    {
      category: 'control',
      label: 'repeated folder entry',
      expect: { kind: 'exact', files: { 'Data/d/x': x } },
      build: () => rawZip([{ name: 'Data/d/' }, { name: 'Data/d/' }, { name: 'Data/d/x', data: x }]),
    },
  ];
}

/** Cut points through every structure of every base: header starts ±1, inside data, the directory, the end record. */
function truncations(bases: Bases, random: () => number): Maker[] {
  const makers: Maker[] = [];
  const sources: [string, Buffer][] = [
    ['raw', bases.raw],
    ['yazl', bases.yazl],
    ['yazl+comment', bases.yazlCommented],
    ['info-zip', bases.infoZip],
    ['bag', bases.bag],
  ];
  for (const [name, zip] of sources) {
    const layout = zipLayout(zip);
    const points = new Set<number>([0, 1, 3, 4, 5, 29, 30, 31, zip.length - 1, zip.length - 2, zip.length - 21, zip.length - 22, zip.length - 23]);
    for (const entry of layout.entries) {
      for (const at of [entry.localOffset, entry.dataOffset, entry.dataOffset + Math.floor(entry.compressedSize / 2), entry.dataOffset + entry.compressedSize, entry.centralOffset, entry.centralOffset + 20, entry.centralOffset + entry.centralLength - 1]) {
        for (const delta of [-1, 0, 1]) points.add(at + delta);
      }
    }
    for (const at of [layout.directoryOffset, layout.endOffset, layout.endOffset + 10, layout.endOffset + 20]) points.add(at);
    for (let i = 0; i < 12; i++) points.add(Math.floor(random() * zip.length));
    for (const cut of [...points].filter((p) => p >= 0 && p < zip.length).sort((a, b) => a - b)) {
      makers.push({ category: 'truncated', label: `${name} cut at ${cut} of ${zip.length}`, expect: refuse, offlineDamaged: true, build: () => zip.subarray(0, cut) });
    }
  }
  return makers;
}

/** Patched fields of the central directory and the end record, and directory/local header disagreements. */
function corruptDirectories(bases: Bases): Maker[] {
  const makers: Maker[] = [];
  const sources: [string, Buffer][] = [
    ['raw', bases.raw],
    ['yazl', bases.yazl],
    ['info-zip', bases.infoZip],
  ];
  for (const [source, zip] of sources) {
    const layout = zipLayout(zip);
    const end = layout.endOffset;
    const add = (label: string, edit: (copy: Buffer) => void, expect: Expectation = { kind: 'subset-or-fail', files: bases.files }) =>
      makers.push({ category: 'corrupt-directory', label: `${source}: ${label}`, expect, build: () => patch(zip, edit) });
    const count = layout.entries.length;
    for (const entries of [0, 1, count - 1, count + 1, count + 50, 0xfffe, 0xffff]) {
      add(`end record claims ${entries} entries`, (c) => {
        c.writeUInt16LE(entries, end + END.entries);
        c.writeUInt16LE(entries, end + END.diskEntries);
      });
    }
    add('disk entry count disagrees', (c) => c.writeUInt16LE(count + 3, end + END.diskEntries));
    add('a second disk', (c) => c.writeUInt16LE(1, end + 4));
    for (const size of [0, 1, layout.directorySize - 1, layout.directorySize + 1, 0x7fffffff, 0xffffffff]) add(`directory size ${size}`, (c) => c.writeUInt32LE(size >>> 0, end + END.directorySize));
    for (const offset of [0, 1, layout.directoryOffset - 1, layout.directoryOffset + 1, end, zip.length, zip.length + 1000, 0x7fffffff, 0xfffffffe]) {
      add(`directory offset ${offset}`, (c) => c.writeUInt32LE(offset >>> 0, end + END.directoryOffset));
    }
    for (const delta of [1, 7, 100, 0xffff]) add(`comment length lies by +${delta}`, (c) => c.writeUInt16LE((c.readUInt16LE(end + END.commentLength) + delta) & 0xffff, end + END.commentLength));
    add('end record signature broken', (c) => c.writeUInt32LE(0x06054b51, end));
    layout.entries.forEach((entry, k) => {
      const at = entry.centralOffset;
      add(`#${k} central signature broken`, (c) => c.writeUInt32LE(0x02014b51, at));
      add(`#${k} local signature broken`, (c) => c.writeUInt32LE(0x04034b51, entry.localOffset));
      for (const offset of [entry.localOffset + 1, entry.dataOffset, zip.length, 0x7fffffff, 0xffffffff]) add(`#${k} local offset ${offset}`, (c) => c.writeUInt32LE(offset >>> 0, at + CENTRAL.localOffset));
      if (k > 0) add(`#${k} local offset of #0 (shared)`, (c) => c.writeUInt32LE(layout.entries[0]!.localOffset, at + CENTRAL.localOffset), refuse);
      add(`#${k} crc lie`, (c) => c.writeUInt32LE((c.readUInt32LE(at + CENTRAL.crc) ^ 0x5a5a5a5a) >>> 0, at + CENTRAL.crc));
      for (const size of [0, 1, 0xfffffffe]) {
        add(`#${k} size ${size}`, (c) => c.writeUInt32LE(size, at + CENTRAL.size));
        add(`#${k} compressed size ${size}`, (c) => c.writeUInt32LE(size, at + CENTRAL.compressedSize));
      }
      for (const method of [0, 8, 12, 14, 99]) add(`#${k} method ${method}`, (c) => c.writeUInt16LE(method, at + CENTRAL.method));
      add(`#${k} local method disagrees`, (c) => c.writeUInt16LE(c.readUInt16LE(entry.localOffset + LOCAL.method) === 8 ? 0 : 8, entry.localOffset + LOCAL.method));
      add(`#${k} local name length +1`, (c) => c.writeUInt16LE(c.readUInt16LE(entry.localOffset + LOCAL.nameLength) + 1, entry.localOffset + LOCAL.nameLength));
      add(`#${k} local extra length 0xffff`, (c) => c.writeUInt16LE(0xffff, entry.localOffset + LOCAL.extraLength));
      add(`#${k} local sizes lie`, (c) => {
        c.writeUInt32LE(7, entry.localOffset + LOCAL.size);
        c.writeUInt32LE(3, entry.localOffset + LOCAL.compressedSize);
      });
      add(`#${k} name length +1`, (c) => c.writeUInt16LE(c.readUInt16LE(at + CENTRAL.nameLength) + 1, at + CENTRAL.nameLength), { kind: 'contents-or-fail', files: bases.files });
      add(`#${k} name length 0`, (c) => c.writeUInt16LE(0, at + CENTRAL.nameLength), { kind: 'contents-or-fail', files: bases.files });
      add(`#${k} extra length 0xffff`, (c) => c.writeUInt16LE(0xffff, at + CENTRAL.extraLength));
      add(`#${k} comment length 0xffff`, (c) => c.writeUInt16LE(0xffff, at + CENTRAL.commentLength));
      add(`#${k} flags: data descriptor`, (c) => c.writeUInt16LE(c.readUInt16LE(at + CENTRAL.flags) | 0x8, at + CENTRAL.flags));
    });
  }
  // the local header and the directory name different files: the directory's name is the one used
  const x = Buffer.from('x\n');
  makers.push(
    { category: 'corrupt-directory', label: 'local name ../../evil, directory Data/ok.txt', expect: { kind: 'exact-or-fail', files: { 'Data/ok.txt': x } }, build: () => rawZip([{ name: 'Data/ok.txt', localName: '../../evil', data: x }]) },
    { category: 'corrupt-directory', label: 'directory name ../../evil, local Data/ok.txt', expect: refuse, offlineDamaged: true, build: () => rawZip([{ name: '../../evil', localName: 'Data/ok.txt', data: x }]) },
    { category: 'corrupt-directory', label: 'self-extractor stub, offsets unadjusted', expect: { kind: 'subset-or-fail', files: bases.files }, build: () => rawZip(rawEntriesOf(bases.files), { prefix: Buffer.from('#!/bin/sh\nexit 0\n') }) },
    { category: 'corrupt-directory', label: 'junk after the end record', expect: { kind: 'subset-or-fail', files: bases.files }, build: () => rawZip(rawEntriesOf(bases.files), { suffix: Buffer.from('trailing junk') }) },
    { category: 'corrupt-directory', label: 'entry only in the local headers', expect: { kind: 'exact-or-fail', files: { 'Data/seen.txt': x } }, build: () => rawZip([{ name: 'Data/hidden.txt', data: x, central: false }, { name: 'Data/seen.txt', data: x }]) },
    { category: 'corrupt-directory', label: 'directory record with no local header', expect: refuse, build: () => rawZip([{ name: 'Data/a.txt', data: x }, { name: 'Data/ghost.txt', data: x, local: false, localOffset: 5000 }]) },
  );
  return makers;
}

/** Entries whose stored data overlap, or share one local header. */
function overlaps(bases: Bases): Maker[] {
  const x = Buffer.from('shared bytes\n');
  // B's local header and data sit inside A's stored data: both read back correctly, from overlapping bytes
  const nested = (): Buffer => {
    const innerHeader = rawZipLayout([{ name: 'Data/b.txt', data: x, method: 0 }]);
    const bLocal = innerHeader.bytes.subarray(0, innerHeader.locals[0]!.dataOffset + x.length);
    const aName = 'Data/a.txt';
    return rawZip([
      { name: aName, data: bLocal, method: 0 },
      { name: 'Data/b.txt', data: x, method: 0, local: false, localOffset: 30 + Buffer.byteLength(aName) },
    ]);
  };
  const nestedA = rawZipLayout([{ name: 'Data/b.txt', data: x, method: 0 }]).bytes.subarray(0, 30 + 'Data/b.txt'.length + x.length);
  return [
    { category: 'overlap', label: 'two names, one local header', expect: refuse, build: () => rawZip([{ name: 'Data/a.txt', data: x }, { name: 'Data/b.txt', data: x, local: false, localOffset: 0 }]) },
    { category: 'overlap', label: 'three names, one local header', expect: refuse, build: () => rawZip([{ name: 'Data/a.txt', data: x }, { name: 'Data/b.txt', data: x, local: false, localOffset: 0 }, { name: 'Data/c.txt', data: x, local: false, localOffset: 0 }]) },
    { category: 'overlap', label: 'one entry listed twice', expect: refuse, build: () => rawZip([{ name: 'Data/a.txt', data: x }, { name: 'Data/a.txt', data: x, local: false, localOffset: 0 }]) },
    { category: 'overlap', label: 'local header inside another entry data', expect: { kind: 'exact-or-fail', files: { 'Data/a.txt': nestedA, 'Data/b.txt': x } }, build: nested },
    { category: 'overlap', label: 'every entry covers all after it (stored overlap bomb)', expect: refuse, offlineDamaged: true, build: () => overlapBombZip(1000, 60_000) },
    { category: 'overlap', label: 'overlap bomb caught by the total', expect: refuse, offlineDamaged: true, build: () => overlapBombZip(2500, 500_000) },
    { category: 'overlap', label: 'overlap bomb under the ratio limit (headers only)', expect: refuse, offlineDamaged: true, build: () => overlapBombZip(1500, 0) },
    { category: 'overlap', label: 'overlap bomb, 40 entries', expect: refuse, build: () => overlapBombZip(40, 2000) },
    ...[1, 2, 5].map((shift): Maker => ({
      category: 'overlap',
      label: `second header ${shift} bytes into the first data`,
      expect: { kind: 'subset-or-fail', files: bases.files },
      build: () => {
        const layout = rawZipLayout(rawEntriesOf(bases.files));
        const zip = Buffer.from(layout.bytes);
        const second = layout.centrals[layout.centrals.length - 1]!;
        zip.writeUInt32LE(layout.locals[layout.locals.length - 2]!.dataOffset + shift, second.offset + CENTRAL.localOffset);
        return zip;
      },
    })),
  ];
}

/** Every spelling of "outside the folder" we know of, each in several placements. */
export const SLIP_NAMES: (string | Buffer)[] = [
  '../x', '../../../../../../tmp/x', 'Data/../../x', 'Data/a/../../../x', './../x', 'Data/./../../x', '..', 'Data/..', 'Data/../..', 'Data/x/..',
  '/x', '/etc/passwd', '//server/share/x', '///x', '/../x',
  '..\\x', 'Data\\..\\..\\x', '\\x', '\\\\server\\share\\x', '\\\\?\\C:\\x', 'Data/..\\..\\x',
  'C:x', 'C:/x', 'C:\\x', 'c:', 'Z:\\Windows\\x', 'C:..\\x',
  Buffer.from('Data/ok.txt\0/../../x'), Buffer.from('\0'), Buffer.from('Data/a\0b'), Buffer.from('..\0/x'), Buffer.from('Data/\0/x'),
  'Data/.. /x', 'Data/ ../x', 'Data/.../x', 'Data/. ./x', 'Data/..../x', 'Data/.. . /x', '.../x', '. ./x',
  'Data/．．/x', '．．/x', 'Data/．./x', 'Data/‥/x', '‥/x', 'Data/\u2024\u2024/x', 'Data/\ufe52\ufe52/x', 'Data/..\u00a0/x', 'Data/..\u3000/x', 'Data/\uff0e\uff0e\uff0f',
];

/** Overlong UTF-8 spellings of '.' (C0 AE, E0 80 AE) and '/' (C0 AF): never a valid name. */
const OVERLONG: Buffer[] = [
  Buffer.from([0xc0, 0xae, 0xc0, 0xae, 0x2f, 0x78]), // ../x
  Buffer.from([0x44, 0x2f, 0xc0, 0xae, 0xc0, 0xae, 0xc0, 0xaf, 0xc0, 0xae, 0xc0, 0xae, 0xc0, 0xaf, 0x78]), // D/..\u2215../x
  Buffer.from([0xe0, 0x80, 0xae, 0xe0, 0x80, 0xae, 0x2f, 0x78]),
  Buffer.from([0x2e, 0x2e, 0xc0, 0xaf, 0x78]), // ..(/)x
  Buffer.from([0xc0, 0xaf, 0x65, 0x74, 0x63, 0xc0, 0xaf, 0x78]), // (/)etc(/)x
  Buffer.from([0xf0, 0x80, 0x80, 0xae, 0xf0, 0x80, 0x80, 0xae, 0x2f, 0x78]),
];

function zipSlips(): Maker[] {
  const makers: Maker[] = [];
  const ok = fileEntry('Data/ok.txt');
  for (const name of SLIP_NAMES) {
    const label = JSON.stringify(Buffer.isBuffer(name) ? name.toString('latin1') : name);
    const asBuffer = Buffer.isBuffer(name) ? name : Buffer.from(name);
    const placements: [string, () => Buffer][] = [
      ['alone', () => rawZip([fileEntry(name)])],
      ['after a good entry', () => rawZip([ok, fileEntry(name)])],
      ['as a folder', () => rawZip([ok, { name: asBuffer.at(-1) === 0x2f ? asBuffer : Buffer.concat([asBuffer, Buffer.from('/')]) }])],
      ['without the UTF-8 flag', () => rawZip([ok, fileEntry(name, { utf8: false })])],
      ['in the Info-ZIP Unicode path field', () => rawZip([ok, fileEntry('Data/innocent.txt', { centralExtra: unicodePathField('Data/innocent.txt', asBuffer) })])],
    ];
    for (const [where, build] of placements) makers.push({ category: 'zip-slip', label: `${label} ${where}`, expect: refuse, offlineDamaged: false, build });
  }
  for (const name of OVERLONG) {
    const label = name.toString('hex');
    // flagged UTF-8 but not valid UTF-8: a corrupt name, refused; without the flag CP437 reads it as harmless letters
    makers.push({ category: 'zip-slip', label: `overlong ${label} flagged UTF-8`, expect: refuse, build: () => rawZip([ok, fileEntry(name)]) });
    makers.push({ category: 'zip-slip', label: `overlong ${label} as a folder`, expect: refuse, build: () => rawZip([ok, { name: Buffer.concat([name, Buffer.from('/')]) }]) });
    makers.push({ category: 'zip-slip', label: `overlong ${label} in the Unicode path field`, expect: refuse, build: () => rawZip([ok, fileEntry('Data/innocent.txt', { centralExtra: unicodePathField('Data/innocent.txt', name) })]) });
    makers.push({ category: 'zip-slip', label: `overlong ${label} CP437`, expect: { kind: 'contents-or-fail', files: { 'Data/ok.txt': Buffer.from('payload\n') } }, build: () => rawZip([ok, fileEntry(name, { utf8: false })]) });
  }
  // long names
  makers.push({ category: 'zip-slip', label: 'segment of 300 bytes', expect: refuse, build: () => rawZip([fileEntry(`Data/${'a'.repeat(300)}`)]) });
  makers.push({ category: 'zip-slip', label: 'path of 5000 characters', expect: refuse, build: () => rawZip([fileEntry(`Data/${'abcdefgh/'.repeat(560)}x`)]) });
  makers.push({ category: 'zip-slip', label: 'path of 65535 bytes', expect: refuse, build: () => rawZip([fileEntry(`Data/${'a/'.repeat(32763)}x`)]) });
  return makers;
}

/** The Info-ZIP Unicode Path extra field (0x7075): version 1, CRC-32 of the plain name, the UTF-8 name. */
function unicodePathField(plainName: string, utf8Name: Buffer): Buffer {
  const field = Buffer.alloc(4 + 5 + utf8Name.length);
  field.writeUInt16LE(0x7075, 0);
  field.writeUInt16LE(5 + utf8Name.length, 2);
  field.writeUInt8(1, 4);
  field.writeUInt32LE(crc32(Buffer.from(plainName)), 5);
  utf8Name.copy(field, 9);
  return field;
}

function specialEntries(bases: Bases): Maker[] {
  const types: [string, number][] = [
    ['symlink', 0o120777],
    ['character device', 0o020644],
    ['block device', 0o060644],
    ['fifo', 0o010644],
    ['socket', 0o140644],
    ['unknown type 0o170000', 0o170644],
    ['door/whiteout 0o160000', 0o160644],
  ];
  const makers: Maker[] = [];
  for (const [what, mode] of types) {
    for (const target of ['../../../etc/passwd', '/etc/passwd', 'Data/readme.txt']) {
      makers.push({ category: 'special-entry', label: `${what} to ${target}`, expect: refuse, build: () => rawZip([fileEntry('Data/ok.txt'), { name: 'Data/link', data: Buffer.from(target), mode }]) });
    }
    makers.push({ category: 'special-entry', label: `${what} as a folder entry`, expect: refuse, build: () => rawZip([{ name: 'Data/dir/', mode }]) });
  }
  makers.push(
    { category: 'special-entry', label: 'symlink then a file through it', expect: refuse, build: () => rawZip([{ name: 'Data/up', data: Buffer.from('../..'), mode: 0o120777 }, fileEntry('Data/up/evil.txt')]) },
    { category: 'special-entry', label: 'symlink made by MS-DOS host', expect: refuse, build: () => rawZip([{ name: 'Data/link', data: Buffer.from('../x'), mode: 0o120777, host: 0 }]) },
    { category: 'special-entry', label: 'setuid executable (mode bits only)', expect: { kind: 'exact-or-fail', files: { 'Data/run.sh': Buffer.from('payload\n') } }, build: () => rawZip([fileEntry('Data/run.sh', { mode: 0o104755 })]) },
  );
  if (bases.infoZipSymlink) {
    const zip = bases.infoZipSymlink;
    makers.push({ category: 'special-entry', label: 'info-zip -y with a real symlink', expect: refuse, build: () => zip });
  }
  return makers;
}

function lookAlikes(): Maker[] {
  const x = Buffer.from('one\n');
  const y = Buffer.from('two\n');
  const pairs: [string, string][] = [
    ['Data/a.txt', 'Data/a.txt'],
    ['Data/a.txt', 'Data/A.txt'],
    ['Data/README.md', 'Data/readme.md'],
    ['Data/caf\u00e9.txt', 'Data/cafe\u0301.txt'],
    ['Data/\u00c5ngstr\u00f6m', 'Data/A\u030angstro\u0308m'],
    ['Data/sub/x', 'Data/SUB/y'],
    ['Data/\u00e9t\u00e9/x', 'Data/e\u0301te\u0301/y'],
    ['Data/a.txt', 'Data/./a.txt'],
    ['Data/a.txt', 'Data//a.txt'],
    ['Data/a', 'Data/a/b'],
    ['Data/a/b', 'Data/a'],
    ['Data/\u0130.txt', 'Data/i\u0307.txt'],
    ['Data/\u212b.txt', 'Data/\u00c5.txt'], // Kelvin-like: Angstrom sign vs A-ring (NFC equal)
  ];
  const makers: Maker[] = [];
  for (const [a, b] of pairs) {
    makers.push({ category: 'look-alike', label: `${a} and ${b}`, expect: refuse, build: () => rawZip([{ name: a, data: x }, { name: b, data: y }]) });
    makers.push({ category: 'look-alike', label: `${b} and ${a}, folder entries too`, expect: refuse, build: () => rawZip([{ name: 'Data/' }, { name: b, data: y }, { name: a, data: x }]) });
  }
  makers.push({ category: 'look-alike', label: 'same name ten times', expect: refuse, build: () => rawZip(Array.from({ length: 10 }, (_, i) => ({ name: 'Data/same.txt', data: Buffer.from(`v${i}`) }))) });
  makers.push({ category: 'look-alike', label: 'file and folder of one name', expect: refuse, build: () => rawZip([{ name: 'Data/a', data: x }, { name: 'Data/a/' }]) });
  return makers;
}

function encrypted(bases: Bases): Maker[] {
  const x = Buffer.from('secret\n');
  const aes = Buffer.from([0x01, 0x99, 0x07, 0x00, 0x02, 0x00, 0x41, 0x45, 0x03, 0x08, 0x00]); // AE-2, AES-256, deflate
  const makers: Maker[] = [
    { category: 'encrypted', label: 'flag bit 0 (ZipCrypto)', expect: refuse, build: () => rawZip([{ name: 'Data/s.txt', data: Buffer.concat([randomHeader(), x]), method: 0, flags: 0x1 }]) },
    { category: 'encrypted', label: 'flag bit 0, deflated', expect: refuse, build: () => rawZip([{ name: 'Data/s.txt', data: x, flags: 0x1 }]) },
    { category: 'encrypted', label: 'AES extra 0x9901, method 99', expect: refuse, build: () => rawZip([{ name: 'Data/s.txt', data: x, method: 99, flags: 0x1, centralExtra: aes, localExtra: aes, packed: randomHeader() }]) },
    { category: 'encrypted', label: 'AES extra 0x9901 without flag bit 0', expect: refuse, build: () => rawZip([{ name: 'Data/s.txt', data: x, method: 99, centralExtra: aes, packed: randomHeader() }]) },
    { category: 'encrypted', label: 'strong encryption flag 0x40', expect: refuse, build: () => rawZip([{ name: 'Data/s.txt', data: x, flags: 0x41 }]) },
    { category: 'encrypted', label: 'encrypted central directory flag 0x2000', expect: { kind: 'exact-or-fail', files: { 'Data/s.txt': x } }, build: () => rawZip([{ name: 'Data/s.txt', data: x, flags: 0x2000 }]) },
    { category: 'encrypted', label: 'one of three entries encrypted', expect: refuse, build: () => rawZip([fileEntry('Data/a.txt'), { name: 'Data/s.txt', data: x, flags: 0x1 }, fileEntry('Data/b.txt')]) },
    { category: 'encrypted', label: 'only the local header says encrypted', expect: { kind: 'exact-or-fail', files: { 'Data/s.txt': x } }, build: () => rawZip([{ name: 'Data/s.txt', data: x, localFlags: 0x801 }]) },
    { category: 'encrypted', label: 'encrypted folder entry', expect: { kind: 'exact-or-fail', files: { 'Data/ok.txt': Buffer.from('payload\n') } }, build: () => rawZip([{ name: 'Data/d/', flags: 0x1 }, fileEntry('Data/ok.txt')]) },
  ];
  for (const method of [1, 6, 9, 12, 14, 19, 93, 95, 96, 97, 98]) {
    makers.push({ category: 'encrypted', label: `compression method ${method}`, expect: refuse, build: () => rawZip([{ name: 'Data/m.bin', data: x, method, packed: x }]) });
  }
  if (bases.infoZipEncrypted) {
    const zip = bases.infoZipEncrypted;
    makers.push({ category: 'encrypted', label: 'info-zip -P', expect: refuse, build: () => zip });
  }
  return makers;
}

function randomHeader(): Buffer {
  return Buffer.from('0123456789ab');
}

function zip64Lies(bases: Bases): Maker[] {
  const x = Buffer.from('sixty-four\n');
  const entry = (over: Partial<RawEntry>): RawEntry => ({ name: 'Data/z.txt', data: x, method: 0, ...over });
  const big = { declaredSize: 0xffffffff, declaredCompressedSize: 0xffffffff };
  const one = { 'Data/z.txt': x };
  const files = bases.files;
  const layout = rawZipLayout(rawEntriesOf(files));
  const makers: Maker[] = [
    { category: 'zip64-lie', label: 'extra size +5', expect: refuse, build: () => rawZip([entry({ ...big, centralExtra: zip64Extra(x.length + 5, x.length + 5) })]) },
    { category: 'zip64-lie', label: 'extra size -1', expect: refuse, build: () => rawZip([entry({ ...big, centralExtra: zip64Extra(x.length - 1, x.length - 1) })]) },
    { category: 'zip64-lie', label: 'extra sizes disagree (stored)', expect: refuse, build: () => rawZip([entry({ ...big, centralExtra: zip64Extra(x.length, x.length + 1) })]) },
    { category: 'zip64-lie', label: 'extra says 1 TiB', expect: refuse, build: () => rawZip([entry({ ...big, method: 8, centralExtra: zip64Extra(2 ** 40, 20) })]) },
    { category: 'zip64-lie', label: 'extra says 2^64-1', expect: refuse, build: () => rawZip([entry({ ...big, method: 8, centralExtra: zip64Extra(0xffffffffffffffffn, 20) })]) },
    { category: 'zip64-lie', label: 'extra says 2^53+1', expect: refuse, build: () => rawZip([entry({ ...big, method: 8, centralExtra: zip64Extra(2n ** 53n + 1n, 20) })]) },
    { category: 'zip64-lie', label: '0xffffffff sizes, no extra', expect: refuse, build: () => rawZip([entry({ ...big })]) },
    { category: 'zip64-lie', label: 'extra too short', expect: refuse, build: () => rawZip([entry({ ...big, centralExtra: Buffer.from([0x01, 0x00, 0x04, 0x00, 1, 2, 3, 4]) })]) },
    { category: 'zip64-lie', label: 'extra field length past the record', expect: refuse, build: () => rawZip([entry({ centralExtra: Buffer.from([0x01, 0x00, 0xf0, 0x00, 1, 2]) })]) },
    { category: 'zip64-lie', label: 'offset 0xffffffff, extra past the file', expect: refuse, build: () => rawZip([entry({ declaredSize: x.length, localOffset: 0xffffffff, centralExtra: zip64Extra(2 ** 40) })]) },
    { category: 'zip64-lie', label: 'offset 0xffffffff, extra at another header', expect: refuse, build: () => rawZip([fileEntry('Data/a.txt'), entry({ localOffset: 0xffffffff, centralExtra: zip64Extra(0) })]) },
    { category: 'zip64-lie', label: 'local extra disagrees with the directory', expect: { kind: 'exact-or-fail', files: one }, build: () => rawZip([entry({ localExtra: zip64Extra(999, 999) })]) },
    { category: 'zip64-lie', label: 'end record 0xffff, no locator', expect: refuse, build: () => rawZip([entry({})], { eocd: { entries: 0xffff } }) },
    { category: 'zip64-lie', label: 'end record 0xffffffff offset, no locator', expect: refuse, build: () => rawZip([entry({})], { eocd: { directoryOffset: 0xffffffff } }) },
    { category: 'zip64-lie', label: 'true ZIP64 end record', expect: { kind: 'exact', files: one }, build: () => rawZip([entry({})], { eocd: { entries: 0xffff }, zip64: {} }) },
  ];
  const lie = (label: string, zip64: NonNullable<Parameters<typeof rawZip>[1]>['zip64'], expect: Expectation = refuse) =>
    makers.push({ category: 'zip64-lie', label, expect, build: () => rawZip(rawEntriesOf(files), { eocd: { entries: 0xffff, directoryOffset: 0xffffffff }, zip64 }) });
  const n = layout.centrals.length;
  lie('locator points nowhere (past the end)', { locatorOffset: layout.bytes.length + 4096 });
  lie('locator points at 0', { locatorOffset: 0 });
  lie('locator points at 2^62', { locatorOffset: 2 ** 62 });
  lie('locator points into the directory', { locatorOffset: layout.directoryOffset + 10 });
  lie('count +1', { entries: n + 1 });
  lie('count 2^40', { entries: 2 ** 40 });
  lie('count 2^63', { entries: 2n ** 63n as unknown as number });
  lie('count -1', { entries: n - 1 }, { kind: 'subset-or-fail', files });
  lie('count 0', { entries: 0 }, { kind: 'subset-or-fail', files });
  lie('directory offset past the end', { directoryOffset: layout.bytes.length * 4 });
  lie('directory offset 2^60', { directoryOffset: 2 ** 60 });
  lie('directory offset 1', { directoryOffset: 1 });
  lie('directory size 2^50', { directorySize: 2 ** 50 }, { kind: 'subset-or-fail', files });
  lie('record size 2^60', { recordSize: 2n ** 60n }, { kind: 'subset-or-fail', files });
  lie('record size 0', { recordSize: 0n }, { kind: 'subset-or-fail', files });
  return makers;
}

function bombs(maxEntries: number): Maker[] {
  const zeros = (bytes: number) => Buffer.alloc(bytes);
  const nest = (depth: number, inner: Buffer): Buffer => {
    let zip = inner;
    for (let i = 0; i < depth; i++) zip = rawZip([{ name: `Data/level-${depth - i}.zip`, data: zip }]);
    return zip;
  };
  const innerBomb = () => rawZip([{ name: 'zeros.bin', data: zeros(8 * 1024 * 1024) }]);
  const makers: Maker[] = [
    { category: 'bomb', label: 'ratio: 8 MiB of zeros deflated', expect: refuse, offlineDamaged: true, build: () => rawZip([{ name: 'Data/zeros.bin', data: zeros(8 * 1024 * 1024) }]) },
    { category: 'bomb', label: 'ratio: 64 MiB of zeros deflated', expect: refuse, offlineDamaged: true, build: () => rawZip([{ name: 'Data/zeros.bin', data: zeros(64 * 1024 * 1024) }]) },
    { category: 'bomb', label: 'ratio over the whole archive (many 512 KiB entries)', expect: refuse, offlineDamaged: true, build: () => rawZip(Array.from({ length: 40 }, (_, i) => ({ name: `Data/z${i}.bin`, data: zeros(512 * 1024) }))) },
    { category: 'bomb', label: 'declared 4 GiB from 20 bytes', expect: refuse, offlineDamaged: true, build: () => rawZip([{ name: 'Data/big.bin', data: Buffer.from('x'), declaredSize: 0xfffffff0 }]) },
    { category: 'bomb', label: 'declared size smaller than the real data', expect: refuse, build: () => rawZip([{ name: 'Data/liar.bin', data: Buffer.alloc(200_000, 7), declaredSize: 1000 }]) },
    { category: 'bomb', label: 'declared size larger than the real data', expect: refuse, build: () => rawZip([{ name: 'Data/liar.bin', data: Buffer.alloc(200_000, 7), declaredSize: 300_000 }]) },
    { category: 'bomb', label: 'deflate stream longer than the compressed size', expect: refuse, build: () => rawZip([{ name: 'Data/cut.bin', data: Buffer.alloc(100_000, 3), declaredCompressedSize: 50 }]) },
    { category: 'bomb', label: `count: ${maxEntries + 1} entries`, expect: refuse, offlineDamaged: true, build: () => rawZip(Array.from({ length: maxEntries + 1 }, (_, i) => ({ name: `Data/${i}` }))) },
    { category: 'bomb', label: 'count: 65,536 entries (ZIP64 count)', expect: refuse, offlineDamaged: true, build: () => rawZip(Array.from({ length: 65_536 }, (_, i) => ({ name: `${i}` }))) },
    { category: 'bomb', label: 'count: end record says 65,535, three present', expect: refuse, offlineDamaged: true, build: () => rawZip([fileEntry('Data/a'), fileEntry('Data/b'), fileEntry('Data/c')], { eocd: { entries: 0xfffe } }) },
    {
      category: 'bomb',
      label: 'count: 1,000 empty files (under the limit)',
      expect: { kind: 'exact', files: Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`Data/f/${i}.txt`, Buffer.alloc(0)])) },
      build: () => rawZip(Array.from({ length: 1000 }, (_, i) => ({ name: `Data/f/${i}.txt` }))),
    },
    { category: 'bomb', label: 'count: 60 folders deep', expect: { kind: 'exact-or-fail', files: { [`Data/${'d/'.repeat(60)}x`]: Buffer.from('payload\n') } }, build: () => rawZip([fileEntry(`Data/${'d/'.repeat(60)}x`)]) },
  ];
  for (const depth of [1, 3, 10]) {
    // the outermost ZIP holds Data/level-1.zip: exactly the ZIP one level in, never unpacked
    const outer = nest(depth, innerBomb());
    const inner = zipLayout(outer).entries[0]!;
    const expected = deflatedOrStored(outer, inner.dataOffset, inner.compressedSize);
    makers.push({
      category: 'bomb',
      label: `nested ${depth} deep around a ratio bomb (stored as a file)`,
      expect: { kind: 'exact', files: { 'Data/level-1.zip': expected } },
      build: () => outer,
    });
  }
  const inner = rawZip([{ name: 'zeros.bin', data: zeros(1024 * 1024) }]);
  makers.push({
    category: 'bomb',
    label: '42.zip style: 16 copies of a nested bomb',
    expect: { kind: 'exact', files: Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`Data/${i}.zip`, inner])) },
    build: () => rawZip(Array.from({ length: 16 }, (_, i) => ({ name: `Data/${i}.zip`, data: inner }))),
  });
  return makers;
}

/** An entry's bytes, inflated when the raw writer deflated them (it deflates anything non-empty by default). */
function deflatedOrStored(zip: Buffer, dataOffset: number, compressedSize: number): Buffer {
  const packed = zip.subarray(dataOffset, dataOffset + compressedSize);
  return inflateRawSync(packed);
}

function bags(payloadByPath: Files): Maker[] {
  // payload relative to data/; the container receives it as is
  const payload: Files = payloadByPath;
  const makers: Maker[] = [];
  const add = (label: string, entries: () => RawEntry[], expect: Expectation = refuse) => makers.push({ category: 'bag', label, expect, build: () => rawZip(entries()) });
  const md5 = manifestText(payload, 'md5');
  const sha = manifestText(payload, 'sha256');
  const first = Object.keys(payload)[0]!;
  const swapHex = (text: string) => text.replace(/^([0-9a-f])/, (c) => (c === '0' ? '1' : '0'));

  for (const root of ['', 'my-bag']) {
    const at = root ? ` in ${root}/` : '';
    const bag = (parts: BagParts = {}, extra: RawEntry[] = []) => () => [...bagEntries(payload, parts, root), ...extra.map((e) => ({ ...e, name: root ? `${root}/${String(e.name)}` : e.name }))];
    // without bagit.txt it is no bag: a plain ZIP, read as plain files
    const plain: Files = {};
    for (const e of bagEntries(payload, { bagit: null }, root)) plain[String(e.name)] = e.data!;
    add(`missing bagit.txt${at}`, bag({ bagit: null }), { kind: 'exact', files: plain });
    add(`bagit.txt without a version${at}`, bag({ bagit: 'Tag-File-Character-Encoding: UTF-8\n' }));
    add(`bagit.txt is binary junk${at}`, bag({ bagit: '\u0000\u0001\u0002' }));
    add(`manifest lists a missing file${at}`, bag({ manifests: { 'manifest-md5.txt': `${md5}${'0'.repeat(32)}  data/missing.txt\n` } }));
    add(`payload file not in the manifest${at}`, bag({}, [{ name: 'data/Data/extra.txt', data: Buffer.from('extra') }]));
    add(`wrong md5${at}`, bag({ manifests: { 'manifest-md5.txt': swapHex(md5), 'manifest-sha256.txt': sha } }));
    add(`wrong sha256, right md5${at}`, bag({ manifests: { 'manifest-md5.txt': md5, 'manifest-sha256.txt': swapHex(sha) } }));
    add(`hash of the wrong length${at}`, bag({ manifests: { 'manifest-md5.txt': md5.replace(/^[0-9a-f]{32}/, 'abc') } }));
    add(`manifest line without a path${at}`, bag({ manifests: { 'manifest-md5.txt': `${md5}${'0'.repeat(32)}\n` } }));
    add(`manifest line of junk${at}`, bag({ manifests: { 'manifest-md5.txt': `${md5}this is not a manifest line\n` } }));
    add(`manifest with non-hex checksum${at}`, bag({ manifests: { 'manifest-md5.txt': md5.replace(/^[0-9a-f]{4}/, 'zzzz') } }));
    add(`no payload manifest${at}`, bag({ manifests: {} }));
    add(`only an unknown algorithm${at}`, bag({ manifests: { 'manifest-crc32.txt': Object.entries(payload).map(([p, d]) => `${crc32(d).toString(16)}  data/${p}\n`).join('') } }));
    add(`manifest path with ..${at}`, bag({ manifests: { 'manifest-md5.txt': `${md5}${'0'.repeat(32)}  data/../../etc/passwd\n` } }));
    add(`manifest path outside data/${at}`, bag({ manifests: { 'manifest-md5.txt': `${md5}${hex('md5', Buffer.from('BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n'))}  bagit.txt\n` } }));
    add(`manifest path absolute${at}`, bag({ manifests: { 'manifest-md5.txt': `${md5}${'0'.repeat(32)}  /etc/passwd\n` } }));
    add(`manifest path with backslashes${at}`, bag({ manifests: { 'manifest-md5.txt': md5.replace(`data/${first}`, `data\\${first.replace(/\//g, '\\')}`) } }));
    add(`manifest path percent-encoded ..${at}`, bag({ manifests: { 'manifest-md5.txt': `${md5}${'0'.repeat(32)}  data/%2e%2e/%2e%2e/x\n` } }));
    add(`manifest line with a NUL${at}`, bag({ manifests: { 'manifest-md5.txt': `${md5}${'0'.repeat(32)}  data/\u0000x\n` } }));
    add(`one file listed twice, the first hash wrong${at}`, bag({ manifests: { 'manifest-md5.txt': `${swapHex(md5.split('\n')[0]!)}\n${md5}` } }));
    add(`one file listed twice, the last hash wrong${at}`, bag({ manifests: { 'manifest-md5.txt': `${md5}${swapHex(md5.split('\n')[0]!)}\n` } }));
    add(`tag manifest wrong${at}`, bag({ tagManifestText: swapHex }));
    add(`tag manifest lists a missing tag file${at}`, bag({ tagManifestText: (t) => `${t}${'0'.repeat(64)}  missing-tag.txt\n` }));
    add(`tag manifest lists a payload file${at}`, bag({ tagManifestText: (t) => `${t}${hex('sha256', payload[first]!)}  data/${first}\n` }));
    add(`tag manifest lists ../bagit.txt${at}`, bag({ tagManifestText: (t) => `${t}${'0'.repeat(64)}  ../bagit.txt\n` }));
    add(`tag manifest with an unknown algorithm${at}`, bag({ tagAlgorithms: [] }, [{ name: 'tagmanifest-crc32.txt', data: Buffer.from('00000000  bagit.txt\n') }]));
    add(`Payload-Oxum lies${at}`, bag({ bagInfo: 'Payload-Oxum: 1.1\n' }));
    add(`fetch.txt asks for downloads${at}`, bag({ extraTag: { 'fetch.txt': 'https://example.org/x 10 data/x\n' } }));
    add(`a folder named like a manifest${at}`, bag({ manifests: { 'manifest-sha256.txt': sha } }, [{ name: 'manifest-md5.txt/' }]), { kind: 'exact-or-fail', files: payload });
    add(`payload file replaced by a symlink${at}`, bag({}, [{ name: 'data/Data/link', data: Buffer.from('../../x'), mode: 0o120777 }]));
    add(`bag with a slip in the payload${at}`, bag({}, [{ name: 'data/../../x', data: Buffer.from('x') }]));
    add(`uppercase hex${at}`, bag({ manifests: { 'manifest-md5.txt': md5.replace(/^[0-9a-f]+/gm, (h) => h.toUpperCase()), 'manifest-sha256.txt': sha } }), { kind: 'exact-or-fail', files: payload });
    add(`CRLF manifest lines and a BOM${at}`, bag({ manifests: { 'manifest-md5.txt': `\ufeff${md5.replace(/\n/g, '\r\n')}`, 'manifest-sha256.txt': sha } }), { kind: 'exact-or-fail', files: payload });
    add(`tag manifest missing (optional)${at}`, bag({ tagAlgorithms: [] }), { kind: 'exact', files: payload });
  }
  add('two bags side by side', () => [...bagEntries(payload, {}, 'one'), ...bagEntries(payload, {}, 'two')], {
    kind: 'exact',
    files: Object.fromEntries([...bagEntries(payload, {}, 'one'), ...bagEntries(payload, {}, 'two')].map((e) => [String(e.name), e.data!])),
  });
  return makers;
}

/** 1-3 bytes flipped, anywhere, or only in the directory and end record. */
function randomFlips(bases: Bases, random: () => number): Maker[] {
  const makers: Maker[] = [];
  const sources: [string, Buffer][] = [
    ['raw', bases.raw],
    ['yazl', bases.yazl],
    ['info-zip', bases.infoZip],
    ['bag', bases.bag],
  ];
  for (const [name, zip] of sources) {
    const layout = zipLayout(zip);
    for (let i = 0; i < 60; i++) {
      const inDirectory = i % 2 === 0;
      const from = inDirectory ? layout.directoryOffset : 0;
      const flips = Array.from({ length: 1 + Math.floor(random() * 3) }, () => ({ at: from + Math.floor(random() * (zip.length - from)), mask: 1 + Math.floor(random() * 255) }));
      makers.push({
        category: 'random-flip',
        label: `${name} ${flips.map((f) => `${f.at}^${f.mask}`).join(',')}`,
        // a bag's payload must match its manifests; a flipped byte can only make it fail
        expect: { kind: 'contents-or-fail', files: name === 'bag' ? { ...bases.files, ...bagFilesOf(bases.files) } : bases.files },
        build: () => patch(zip, (c) => flips.forEach((f) => (c[f.at] = c[f.at]! ^ f.mask))),
      });
    }
  }
  return makers;
}

/** Every file of the bag made from `payload`, tag files included, by its path in the ZIP. */
function bagFilesOf(payload: Files): Files {
  return Object.fromEntries(bagEntries(payload).map((entry) => [String(entry.name), entry.data!]));
}
