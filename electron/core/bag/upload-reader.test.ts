import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { crc32 } from 'node:zlib';
import yazl from 'yazl';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { FerryError } from '../errors.js';
import { DEFAULT_LIMITS, type Limits } from '../limits.js';
import type { Entry } from '../target.js';
import { bagNameFor, writeBagZip } from './bag-writer.js';
import { openUploadZip, type UploadArchive } from './upload-reader.js';
import { folderReadResult } from './testing/folder-source.js';
import { rawZip, type RawEntry } from '../zip/testing/raw-zip.js';
import { run } from '../zip/testing/zip-inspect.js';

let work: string;
let counter = 0;
beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'ferry-upload-reader-'));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

const md5 = (bytes: Buffer) => createHash('md5').update(bytes).digest('hex');
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

async function fileFrom(bytes: Buffer): Promise<string> {
  const file = path.join(work, `upload-${++counter}.zip`);
  await writeFile(file, bytes);
  return file;
}

/** An Info-ZIP Unicode Path extra field (0x7075, version 1) naming `plain`'s UTF-8 spelling. */
function unicodePath(plain: string, utf8: Buffer): Buffer {
  const field = Buffer.alloc(9 + utf8.length);
  field.writeUInt16LE(0x7075, 0);
  field.writeUInt16LE(5 + utf8.length, 2);
  field.writeUInt8(1, 4);
  field.writeUInt32LE(crc32(Buffer.from(plain)) >>> 0, 5);
  utf8.copy(field, 9);
  return field;
}

async function yazlZip(files: [string, Buffer | null][]): Promise<string> {
  const zip = new yazl.ZipFile();
  for (const [name, bytes] of files) {
    if (bytes === null) zip.addEmptyDirectory(name);
    else zip.addBuffer(bytes, name);
  }
  zip.end();
  const file = path.join(work, `yazl-${++counter}.zip`);
  await pipeline(zip.outputStream, createWriteStream(file));
  return file;
}

interface Collected {
  path: string;
  kind: string;
  size: number | null;
  hashes: Record<string, string>;
  bytes?: Buffer;
}

async function collect(archive: UploadArchive): Promise<Collected[]> {
  const out: Collected[] = [];
  for await (const entry of archive.entries()) {
    const item: Collected = { path: entry.path, kind: entry.kind, size: entry.size, hashes: entry.hashes };
    if (entry.kind === 'file') item.bytes = await readAll(entry);
    out.push(item);
  }
  return out;
}

async function readAll(entry: Entry): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of await entry.open()) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function firstFile(archive: UploadArchive): Promise<Entry> {
  for await (const entry of archive.entries()) if (entry.kind === 'file') return entry;
  throw new Error('no file in the archive');
}

async function refusal(zipPath: string, limits: Limits = DEFAULT_LIMITS): Promise<FerryError> {
  try {
    const archive = await openUploadZip(zipPath, limits);
    await archive.close();
  } catch (error) {
    expect(error).toBeInstanceOf(FerryError);
    return error as FerryError;
  }
  throw new Error('the ZIP was accepted');
}

describe('plain ZIPs', () => {
  it('reads a ZIP made by the system zip command, skipping desktop litter', async () => {
    const src = path.join(work, 'zipsrc');
    await mkdir(path.join(src, 'Survey', 'raw', 'empty'), { recursive: true });
    await mkdir(path.join(src, '__MACOSX'), { recursive: true });
    await writeFile(path.join(src, 'Survey', 'readme.txt'), 'hello\n');
    await writeFile(path.join(src, 'Survey', 'raw', 'data.csv'), 'a,b\n'.repeat(1000));
    await writeFile(path.join(src, 'Survey', '.DS_Store'), 'junk');
    await writeFile(path.join(src, '__MACOSX', '._readme.txt'), 'junk');
    const zipPath = path.join(work, 'system.zip');
    await run('zip', ['-r', '-q', zipPath, 'Survey', '__MACOSX'], { cwd: src });

    const archive = await openUploadZip(zipPath, DEFAULT_LIMITS);
    try {
      expect(archive.kind).toBe('plain');
      expect(archive.topLevel).toEqual(['Survey']);
      expect(archive.fileCount).toBe(2);
      expect(archive.totalBytes).toBe(6 + 4000);
      const entries = await collect(archive);
      const byPath = new Map(entries.map((e) => [e.path, e]));
      expect([...byPath.keys()].sort()).toEqual(['Survey', 'Survey/raw', 'Survey/raw/data.csv', 'Survey/raw/empty', 'Survey/readme.txt']);
      expect(byPath.get('Survey/readme.txt')).toMatchObject({ kind: 'file', size: 6, hashes: {} });
      expect(byPath.get('Survey/readme.txt')?.bytes?.toString()).toBe('hello\n');
      expect(byPath.get('Survey/raw/data.csv')?.bytes?.toString()).toBe('a,b\n'.repeat(1000));
      expect(byPath.get('Survey/raw/empty')?.kind).toBe('folder');
      assertParentsFirst(entries);
    } finally {
      await archive.close();
    }
  });

  it('reads UTF-8 names that Linux zip writes without the UTF-8 flag', async () => {
    const src = path.join(work, 'unicode-src');
    await mkdir(path.join(src, 'Données'), { recursive: true });
    await writeFile(path.join(src, 'Données', 'naïve é.txt'), 'accents\n');
    const zipPath = path.join(work, 'unicode.zip');
    await run('zip', ['-r', '-q', zipPath, 'Données'], { cwd: src, env: { ...process.env, LC_ALL: 'C.UTF-8' } });
    const archive = await openUploadZip(zipPath, DEFAULT_LIMITS);
    try {
      expect((await collect(archive)).map((entry) => entry.path).sort()).toEqual(['Données', 'Données/naïve é.txt']);
    } finally {
      await archive.close();
    }
  });

  it('yields implied parent folders before their files, in central-directory order, and opens fresh streams', async () => {
    const zipPath = await yazlZip([
      ['b/deep/x.txt', Buffer.from('x')],
      ['a.txt', Buffer.from('a')],
      ['b/', null],
      ['b/y.txt', Buffer.from('y')],
    ]);
    const archive = await openUploadZip(zipPath, DEFAULT_LIMITS);
    try {
      const entries: Entry[] = [];
      for await (const entry of archive.entries()) entries.push(entry);
      expect(entries.map((e) => `${e.kind}:${e.path}`)).toEqual(['folder:b', 'folder:b/deep', 'file:b/deep/x.txt', 'file:a.txt', 'file:b/y.txt']);
      expect(archive.topLevel).toEqual(['b', 'a.txt']);
      const x = entries[2]!;
      expect((await readAll(x)).toString()).toBe('x');
      expect((await readAll(x)).toString()).toBe('x');
      // the listing can be walked again
      let again = 0;
      for await (const _ of archive.entries()) again++;
      expect(again).toBe(5);
    } finally {
      await archive.close();
    }
  });
});

describe('bags', () => {
  it('round-trips a bag made by the writer: same entries, bytes and manifest hashes', async () => {
    const src = path.join(work, 'bagsrc', 'Field Notes');
    await mkdir(path.join(src, 'photos'), { recursive: true });
    await mkdir(path.join(src, 'nothing here'), { recursive: true });
    const files: Record<string, Buffer> = {
      'Field Notes/a 100% #1.txt': Buffer.from('percent and hash\n'),
      'Field Notes/photos/p.jpg': randomBytes(50_000),
      'Field Notes/table.csv': Buffer.from('x,y\n'.repeat(5000)),
    };
    for (const [p, bytes] of Object.entries(files)) await writeFile(path.join(src, p.slice('Field Notes/'.length)), bytes);
    const zipPath = path.join(work, 'roundtrip.zip');
    await pipeline(
      writeBagZip(folderReadResult(src), { targetName: 'local', resourceId: 'r1', bagName: bagNameFor('local', 'r1') }),
      createWriteStream(zipPath),
    );

    const archive = await openUploadZip(zipPath, DEFAULT_LIMITS);
    try {
      expect(archive.kind).toBe('bag');
      expect(archive.topLevel).toEqual(['Field Notes']);
      expect(archive.fileCount).toBe(3);
      const entries = await collect(archive);
      expect(entries.filter((e) => e.kind === 'folder').map((e) => e.path).sort()).toEqual(['Field Notes', 'Field Notes/nothing here', 'Field Notes/photos']);
      const got = entries.filter((e) => e.kind === 'file');
      expect(got.map((e) => e.path).sort()).toEqual(Object.keys(files).sort());
      for (const entry of got) {
        const original = files[entry.path]!;
        expect(md5(entry.bytes!)).toBe(md5(original));
        expect(entry.hashes).toEqual({ md5: md5(original), sha256: sha256(original) });
      }
      assertParentsFirst(entries);
    } finally {
      await archive.close();
    }
  });

  it('recognises a bag at the archive root', async () => {
    const payload = Buffer.from('hello');
    const zipPath = await yazlZip(bagFiles('', { 'data/Top/hello.txt': payload }));
    const archive = await openUploadZip(zipPath, DEFAULT_LIMITS);
    try {
      expect(archive.kind).toBe('bag');
      const entries = await collect(archive);
      expect(entries.map((e) => e.path)).toEqual(['Top', 'Top/hello.txt']);
      expect(entries[1]?.hashes).toEqual({ sha512: createHash('sha512').update(payload).digest('hex') });
    } finally {
      await archive.close();
    }
  });

  it('refuses a bag whose checksum is wrong', async () => {
    const zipPath = await yazlZip(bagFiles('b/', { 'data/T/a.txt': Buffer.from('real') }, { 'data/T/a.txt': Buffer.from('other') }));
    const error = await refusal(zipPath);
    expect(error).toMatchObject({ status: 400, code: 'bad_bag' });
    expect(error.message).toMatch(/data\/T\/a\.txt does not match its sha512 checksum/);
  });

  it('refuses a bag with a listed file missing', async () => {
    const zipPath = await yazlZip(bagFiles('b/', { 'data/T/a.txt': Buffer.from('a') }, { 'data/T/gone.txt': Buffer.from('gone') }));
    const error = await refusal(zipPath);
    expect(error).toMatchObject({ status: 400, code: 'bad_bag' });
    expect(error.message).toMatch(/lists data\/T\/gone\.txt, which is not in the bag's payload/);
  });

  it('refuses a bag with an unlisted payload file', async () => {
    const files = bagFiles('b/', { 'data/T/a.txt': Buffer.from('a') });
    files.push(['b/data/T/stowaway.txt', Buffer.from('extra')]);
    const error = await refusal(await yazlZip(files));
    expect(error).toMatchObject({ status: 400, code: 'bad_bag' });
    expect(error.message).toMatch(/data\/T\/stowaway\.txt is not listed in manifest-sha512\.txt/);
  });

  it('refuses a bag whose tag manifest does not match', async () => {
    const files = bagFiles('b/', { 'data/T/a.txt': Buffer.from('a') });
    files.push(['b/tagmanifest-md5.txt', Buffer.from(`${'0'.repeat(32)}  bagit.txt\n`)]);
    const error = await refusal(await yazlZip(files));
    expect(error.message).toMatch(/bagit\.txt does not match its md5 checksum in tagmanifest-md5\.txt/);
  });
});

/** A small bag as ZIP entries; `listed` overrides what the manifest says (default: the payload). */
function bagFiles(root: string, payload: Record<string, Buffer>, listed: Record<string, Buffer> = payload): [string, Buffer][] {
  const manifest = Object.entries(listed)
    .map(([p, bytes]) => `${createHash('sha512').update(bytes).digest('hex')}  ${p}\n`)
    .join('');
  return [
    [`${root}bagit.txt`, Buffer.from('BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n')],
    [`${root}manifest-sha512.txt`, Buffer.from(manifest)],
    ...Object.entries(payload).map(([p, bytes]): [string, Buffer] => [`${root}${p}`, bytes]),
  ];
}

function assertParentsFirst(entries: { path: string }[]): void {
  const seen = new Set<string>();
  for (const entry of entries) {
    const parent = entry.path.split('/').slice(0, -1).join('/');
    if (parent) expect(seen.has(parent), `${parent} before ${entry.path}`).toBe(true);
    seen.add(entry.path);
  }
}

describe('hostile and broken uploads are refused before anything is returned', () => {
  const hostile: [string, RawEntry, RegExp][] = [
    ['zip-slip', { name: 'ok/../../evil.txt', data: Buffer.from('x') }, /contains "\.\." and would land outside its folder/],
    ['absolute path', { name: '/etc/evil', data: Buffer.from('x') }, /absolute path/],
    ['drive letter', { name: 'C:/x.txt', data: Buffer.from('x') }, /drive letter/],
    ['backslash path', { name: 'a\\..\\evil.txt', data: Buffer.from('x') }, /backslashes/],
    ['NUL byte', { name: Buffer.from('a\0.txt'), data: Buffer.from('x') }, /NUL character/],
    ['unknown compression', { name: 'a.txt', data: Buffer.from('x'), method: 12 }, /compression method 12/],
    // found by the hostile corpus (test/stress/hostile-zips): these were read as U+FFFD names and written
    ['name flagged UTF-8 with overlong "../" (C0 AE C0 AE C0 AF)', { name: Buffer.from([0xc0, 0xae, 0xc0, 0xae, 0xc0, 0xaf, 0x78]), data: Buffer.from('x') }, /not valid UTF-8/],
    ['name flagged UTF-8 with a 3-byte overlong "."', { name: Buffer.from([0x61, 0x2f, 0xe0, 0x80, 0xae, 0x78]), data: Buffer.from('x') }, /not valid UTF-8/],
    [
      'Unicode Path field (0x7075) holding overlong bytes',
      { name: 'innocent.txt', data: Buffer.from('x'), centralExtra: unicodePath('innocent.txt', Buffer.from([0xc0, 0xae, 0xc0, 0xae, 0x2f, 0x78])) },
      /not valid UTF-8/,
    ],
  ];
  for (const [label, entry, message] of hostile) {
    it(`refuses a ${label}`, async () => {
      const error = await refusal(await fileFrom(rawZip([{ name: 'fine.txt', data: Buffer.from('fine') }, entry])));
      expect(error).toMatchObject({ status: 400, code: 'bad_request' });
      expect(error.message).toMatch(message);
    });
  }

  it('refuses a symlink entry (zip -y)', async () => {
    const src = path.join(work, 'linksrc');
    await mkdir(src, { recursive: true });
    await writeFile(path.join(src, 'target.txt'), 'x');
    await symlink('/etc/passwd', path.join(src, 'link'));
    const zipPath = path.join(work, 'symlink.zip');
    await run('zip', ['-y', '-q', zipPath, 'target.txt', 'link'], { cwd: src });
    const error = await refusal(zipPath);
    expect(error).toMatchObject({ status: 400, code: 'bad_request' });
    expect(error.message).toMatch(/"link" is a symbolic link/);
  });

  it('refuses an encrypted entry (zip -P)', async () => {
    const src = path.join(work, 'secretsrc');
    await mkdir(src, { recursive: true });
    await writeFile(path.join(src, 'secret.txt'), 'the plans');
    const zipPath = path.join(work, 'encrypted.zip');
    await run('zip', ['-P', 'secret', '-q', zipPath, 'secret.txt'], { cwd: src });
    const error = await refusal(zipPath);
    expect(error).toMatchObject({ status: 400, code: 'bad_request' });
    expect(error.message).toMatch(/"secret.txt" is encrypted/);
  });

  it('refuses duplicate paths and a file that is also a folder', async () => {
    const dup = await refusal(await fileFrom(rawZip([{ name: 'a.txt', data: Buffer.from('1') }, { name: 'a.txt', data: Buffer.from('2') }])));
    expect(dup.message).toMatch(/"a.txt" twice/);
    const both = await refusal(await fileFrom(rawZip([{ name: 'a', data: Buffer.from('1') }, { name: 'a/b.txt', data: Buffer.from('2') }])));
    expect(both.message).toMatch(/"a" both as a file and as a folder/);
  });

  it('refuses a zip bomb by compression ratio (per entry and whole archive)', async () => {
    const zip = new yazl.ZipFile();
    const zeros = Buffer.alloc(1024 * 1024);
    let left = 50;
    zip.addReadStream(new Readable({ read() { this.push(left-- > 0 ? zeros : null); } }), 'zeros.bin');
    zip.end();
    const zipPath = path.join(work, 'bomb.zip');
    await pipeline(zip.outputStream, createWriteStream(zipPath));
    const error = await refusal(zipPath, { ...DEFAULT_LIMITS, maxCompressionRatio: 100 });
    expect(error).toMatchObject({ status: 413, code: 'too_large' });
    expect(error.message).toMatch(/"zeros.bin" unpacks to \d+ times its packed size, over the limit of 100/);

    // many small entries, none judged alone, still trip the whole-archive ratio
    const many = rawZip(Array.from({ length: 40 }, (_, i) => ({ name: `z${i}.bin`, data: Buffer.alloc(512 * 1024) })));
    const whole = await refusal(await fileFrom(many), { ...DEFAULT_LIMITS, maxCompressionRatio: 100 });
    expect(whole.message).toMatch(/The ZIP unpacks to \d+ times its size/);
  });

  it('refuses too many entries, too many bytes, too long paths, too big a file', async () => {
    const zipPath = await fileFrom(rawZip(Array.from({ length: 11 }, (_, i) => ({ name: `f${i}.txt`, data: Buffer.from('x'.repeat(100)) }))));
    expect(await refusal(zipPath, { ...DEFAULT_LIMITS, maxEntries: 10 })).toMatchObject({ status: 413, code: 'too_large', message: expect.stringMatching(/11 entries; the limit is 10/) });
    expect((await refusal(zipPath, { ...DEFAULT_LIMITS, maxTotalUncompressedBytes: 1000 })).message).toMatch(/more than 1000 bytes/);
    expect((await refusal(zipPath, { ...DEFAULT_LIMITS, maxPathLength: 5 })).message).toMatch(/6 characters long; the limit is 5/);
    expect((await refusal(zipPath, { ...DEFAULT_LIMITS, maxUploadBytes: 100 })).message).toMatch(/the limit is 100 bytes/);
  });

  it('refuses a file that is not a ZIP, and a truncated ZIP', async () => {
    const text = await refusal(await fileFrom(Buffer.from('just some text, not an archive\n')));
    expect(text).toMatchObject({ status: 400, code: 'not_a_zip' });
    expect(text.message).toMatch(/not a readable ZIP archive/);

    const good = await readFile(await yazlZip([['a.txt', randomBytes(10_000)]]));
    const truncated = await refusal(await fileFrom(good.subarray(0, good.length - 30)));
    expect(truncated).toMatchObject({ status: 400, code: 'not_a_zip' });
  });

  it('refuses a header that lies about a stored size', async () => {
    const error = await refusal(await fileFrom(rawZip([{ name: 'a.txt', data: Buffer.from('twelve bytes'), method: 0, declaredSize: 5 }])));
    expect(error).toMatchObject({ status: 400, code: 'not_a_zip' });
  });

  it('fails the stream, not the writer, when deflated data is longer than declared or its CRC is wrong', async () => {
    // deferred: the bytes are checked as they are read (opened with 'check', the archive is refused at once)
    const lying = await openUploadZip(await fileFrom(rawZip([{ name: 'a.txt', data: Buffer.from('x'.repeat(5000)), declaredSize: 100 }])), DEFAULT_LIMITS, { payload: 'defer' });
    try {
      const entry = await firstFile(lying);
      await expect(readAll(entry!)).rejects.toThrow(/too many bytes|damaged/);
    } finally {
      await lying.close();
    }
    const badCrc = await openUploadZip(await fileFrom(rawZip([{ name: 'a.txt', data: Buffer.from('hello'), crc: 1234 }])), DEFAULT_LIMITS, { payload: 'defer' });
    try {
      const entry = await firstFile(badCrc);
      await expect(readAll(entry!)).rejects.toMatchObject({ code: 'not_a_zip', message: expect.stringMatching(/"a.txt" is damaged \(its CRC-32 does not match\)/) });
    } finally {
      await badCrc.close();
    }
  });

  /** a small entry is read whole on a file worker thread (worker-reads), or through the window on this thread */
  const WHOLE_READERS = [
    ['on a file worker thread', ''],
    ['on this thread', '-worker-reads'],
  ];

  afterEach(() => {
    vi.unstubAllEnvs();
    vi.resetModules();
  });

  /** the modules as they are with FERRY_FAST_PATHS set to `setting` (read once per process) */
  async function withFastPaths(setting: string) {
    vi.resetModules();
    vi.stubEnv('FERRY_FAST_PATHS', setting);
    const [{ openUploadZip }, { readWholeOf }, { fastPathOn }] = await Promise.all([import('./upload-reader.js'), import('../jobs/whole-entry.js'), import('../fast-paths.js')]);
    return { openUploadZip, readWholeOf, fastPathOn };
  }

  it.each(WHOLE_READERS)('reads a small entry whole (bytes and digests) exactly as its stream reads it, %s', async (_where, setting) => {
    const { openUploadZip, readWholeOf, fastPathOn } = await withFastPaths(setting);
    const text = Buffer.from('small text, deflated '.repeat(200));
    const random = randomBytes(70_000);
    const archive = await openUploadZip(await yazlZip([['T/a.txt', text], ['T/b.bin', random], ['T/empty', Buffer.alloc(0)]]), DEFAULT_LIMITS);
    try {
      for await (const entry of archive.entries()) {
        if (entry.kind !== 'file') continue;
        const readWhole = readWholeOf(entry);
        expect(readWhole, entry.path).not.toBeNull();
        const whole = await readWhole!(['md5', 'sha256']);
        const streamed = await readAll(entry);
        expect(whole.bytes.equals(streamed)).toBe(true);
        expect(whole.hashes).toEqual({ md5: md5(streamed), sha256: sha256(streamed) });
        // read on a file worker thread (worker-reads), the bytes come back in an ArrayBuffer of their own, free to move on to a writer's thread
        expect(whole.movable === true, entry.path).toBe(fastPathOn('worker-reads'));
        if (whole.movable) expect([whole.bytes.byteOffset, whole.bytes.buffer.byteLength]).toEqual([0, streamed.length]);
      }
    } finally {
      await archive.close();
    }
  });

  it.each(WHOLE_READERS)('fails a whole read as the stream fails: more bytes than declared, a wrong CRC, a missing local header, %s', async (_where, setting) => {
    const { openUploadZip, readWholeOf } = await withFastPaths(setting);
    const cases: [RawEntry, RegExp][] = [
      [{ name: 'a.txt', data: Buffer.from('x'.repeat(5000)), declaredSize: 100 }, /"a.txt" is damaged \(it unpacks to more bytes than its header says\)/],
      [{ name: 'a.txt', data: Buffer.from('x'.repeat(5000)), declaredSize: 6000 }, /"a.txt" is damaged \(it holds 5000 bytes, its header says 6000\)/],
      [{ name: 'a.txt', data: Buffer.from('hello'), crc: 1234 }, /"a.txt" is damaged \(its CRC-32 does not match\)/],
      [{ name: 'a.txt', data: Buffer.from('hello'), method: 0, localOffset: 1 }, /"a.txt" is damaged/],
    ];
    for (const [raw, message] of cases) {
      await expect(openUploadZip(await fileFrom(rawZip([raw])), DEFAULT_LIMITS), 'checked at open').rejects.toMatchObject({ status: 400, code: 'not_a_zip', message: expect.stringMatching(message) });
      const archive = await openUploadZip(await fileFrom(rawZip([raw])), DEFAULT_LIMITS, { payload: 'defer' });
      try {
        const readWhole = readWholeOf(await firstFile(archive));
        await expect(readWhole!(['md5'])).rejects.toMatchObject({ status: 400, code: 'not_a_zip', message: expect.stringMatching(message) });
      } finally {
        await archive.close();
      }
    }
  });

  it('refuses a bag whose payload bytes are damaged inside the ZIP', async () => {
    const zipPath = await yazlZip(bagFiles('', { 'data/T/a.txt': Buffer.from('abcdefgh'.repeat(100)) }));
    const bytes = await readFile(zipPath);
    // damage the stored/deflated payload without touching the central directory
    const at = bytes.indexOf(Buffer.from('data/T/a.txt')) + 'data/T/a.txt'.length + 2;
    bytes[at] = bytes[at]! ^ 0xff;
    const error = await refusal(await fileFrom(bytes));
    expect(['not_a_zip', 'bad_bag']).toContain(error.code);
  });

  it('refuses entries whose stored bytes overlap (a local header inside another entry\'s data)', async () => {
    // found by the hostile corpus: stored entries each covering all those after it ("better
    // zip bomb" by overlap) passed when the total stayed under the ratio floor
    const inner = rawZip([{ name: 'b.txt', data: Buffer.from('inner'), method: 0 }]);
    const bLocal = inner.subarray(0, 30 + 'b.txt'.length + 'inner'.length);
    const zip = rawZip([
      { name: 'a.txt', data: bLocal, method: 0 },
      { name: 'b.txt', data: Buffer.from('inner'), method: 0, local: false, localOffset: 30 + 'a.txt'.length },
    ]);
    const error = await refusal(await fileFrom(zip));
    expect(error).toMatchObject({ status: 400 });
    expect(error.message).toMatch(/"a.txt" and "b.txt" overlap/);
  });

  it('refuses a ZIP64 locator or end record pointing past 2^53 (yauzl threw inside a callback: uncaught, the job never ended)', async () => {
    const entries: RawEntry[] = [{ name: 'a.txt', data: Buffer.from('a') }];
    for (const zip64 of [{ locatorOffset: 2 ** 62 }, { locatorOffset: 2 ** 40 }, { directoryOffset: 2 ** 60 }, { entries: 2 ** 50 }]) {
      const error = await refusal(await fileFrom(rawZip(entries, { eocd: { entries: 0xffff, directoryOffset: 0xffffffff }, zip64 })));
      expect(error.code, JSON.stringify(zip64)).toBe('not_a_zip');
    }
  });

  it('refuses an entry lying past the end of the file before anything is read', async () => {
    const error = await refusal(await fileFrom(rawZip([{ name: 'a.txt', data: Buffer.from('a') }, { name: 'ghost.txt', data: Buffer.from('b'), local: false, localOffset: 5000 }])));
    expect(error.message).toMatch(/"ghost.txt" lies past the end of the file/);
  });

  it('refuses a bag whose manifest lists one file twice with different checksums', async () => {
    const bytes = Buffer.from('payload');
    const good = `${md5(bytes)}  data/a.txt\n`;
    const wrong = `${md5(Buffer.from('other'))}  data/a.txt\n`;
    for (const manifest of [wrong + good, good + wrong]) {
      const zip = rawZip([
        { name: 'bagit.txt', data: Buffer.from('BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n') },
        { name: 'manifest-md5.txt', data: Buffer.from(manifest) },
        { name: 'data/a.txt', data: bytes },
      ]);
      const error = await refusal(await fileFrom(zip));
      expect(error.message).toMatch(/lists data\/a.txt twice, with different checksums/);
    }
  });

  it('still reads UTF-8 names without the flag and valid Unicode Path fields', async () => {
    const zip = rawZip([
      { name: Buffer.from('café.txt'), utf8: false, data: Buffer.from('1') },
      { name: 'plain.txt', utf8: false, data: Buffer.from('2'), centralExtra: unicodePath('plain.txt', Buffer.from('ünï.txt')) },
    ]);
    const archive = await openUploadZip(await fileFrom(zip), DEFAULT_LIMITS);
    try {
      expect((await collect(archive)).map((entry) => entry.path)).toEqual(['café.txt', 'ünï.txt']);
    } finally {
      await archive.close();
    }
  });

  it('truncating a valid file to zero bytes is not a ZIP', async () => {
    const zipPath = await yazlZip([['a.txt', Buffer.from('a')]]);
    await truncate(zipPath, 0);
    expect((await refusal(zipPath)).code).toBe('not_a_zip');
  });
});
