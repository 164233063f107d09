import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { validateBag, type BagFile, type ValidatedBag } from './bag-validator.js';

// The rules of docs/bagit.md one at a time, on bags held in memory; the LoC suite
// (test/bagit/conformance.test.ts) runs the same validator through the upload reader.

const V1 = 'BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n';
const V097 = 'BagIt-Version: 0.97\nTag-File-Character-Encoding: UTF-8\n';
const hex = (algorithm: string, bytes: Buffer | string) => createHash(algorithm).update(bytes).digest('hex');

function file(path: string, bytes: Buffer | string, litter?: true): BagFile {
  const buffer = Buffer.from(bytes);
  return { path, size: buffer.length, litter, open: async () => Readable.from([buffer]) };
}

/** A bag: bagit.txt, one manifest of `algorithm` over `payload` (paths as the manifest writes them), the files. */
function bag(payload: Record<string, string>, options: { bagit?: string | Buffer; algorithm?: string; manifestPaths?: Record<string, string>; extra?: BagFile[] } = {}): BagFile[] {
  const algorithm = options.algorithm ?? 'sha256';
  const manifest = Object.entries(payload)
    .map(([path, content]) => `${hex(algorithm, content)}  ${options.manifestPaths?.[path] ?? path}\n`)
    .join('');
  return [file('bagit.txt', options.bagit ?? V1), file(`manifest-${algorithm}.txt`, manifest), ...Object.entries(payload).map(([path, content]) => file(path, content)), ...(options.extra ?? [])];
}

async function refusal(files: BagFile[]): Promise<string> {
  const error = (await validateBag(files).catch((e: unknown) => e)) as { code?: string; message: string };
  expect(error.code, 'the bag should have been refused').toBe('bad_bag');
  return error.message;
}

async function accepted(files: BagFile[], options = {}): Promise<ValidatedBag> {
  return validateBag(files, options);
}

describe('the bag declaration (RFC 8493 §2.1.1)', () => {
  it.each([
    ['a byte-order mark', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(V1)]), /bagit\.txt starts with a byte-order mark/],
    ['a space before the colon', 'BagIt-Version : 1.0\nTag-File-Character-Encoding: UTF-8\n', /line 1 is "BagIt-Version : 1\.0", but RFC 8493 §2\.1\.1 wants "BagIt-Version: …" there \(no space before the colon/],
    ['no encoding line', 'BagIt-Version: 1.0\n', /no Tag-File-Character-Encoding line/],
    ['the label in other case', 'Bagit-Version: 0.97\nTag-File-Character-Encoding: UTF-8\n', /line 1 is "Bagit-Version: 0\.97", but .* \(the label spelled BagIt-Version/],
    ['a trailing space', 'BagIt-Version: 1.0 \nTag-File-Character-Encoding: UTF-8\n', /line 1 is "BagIt-Version: 1\.0 ", but .* \(nothing after the value/],
    ['a version that is not M.N', 'BagIt-Version: 1\nTag-File-Character-Encoding: UTF-8\n', /BagIt-Version "1", which is not a version number M\.N/],
    ['the lines swapped', 'Tag-File-Character-Encoding: UTF-8\nBagIt-Version: 1.0\n', /line 1 is "Tag-File-Character-Encoding: UTF-8", not BagIt-Version/],
    ['a third line', `${V1}Extra: 1\n`, /bagit\.txt has 3 lines; RFC 8493 §2\.1\.1 allows exactly two/],
    ['a version Ferry does not know', 'BagIt-Version: 2.0\nTag-File-Character-Encoding: UTF-8\n', /declares BagIt-Version 2\.0; Ferry reads bags of versions 0\.93 to 1\.0/],
  ])('refuses one with %s', async (_, bagit, reason) => {
    expect(await refusal(bag({ 'data/a.txt': 'a' }, { bagit }))).toMatch(reason);
  });

  it('takes CRLF lines and a last line without a line break', async () => {
    await accepted(bag({ 'data/a.txt': 'a' }, { bagit: 'BagIt-Version: 1.0\r\nTag-File-Character-Encoding: UTF-8' }));
  });
});

describe('tag files in the declared encoding', () => {
  const name = 'data/Ünïcödé.txt';

  it('reads UTF-16 tag files (with a BOM big- or little-endian, and without one as big-endian)', async () => {
    const manifest = `${hex('md5', 'x')}  ${name}\n`;
    const encodings: [string, Buffer][] = [
      ['UTF-16', Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(manifest, 'utf16le').swap16()])],
      ['UTF-16', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(manifest, 'utf16le')])],
      ['utf-16', Buffer.from(manifest, 'utf16le').swap16()],
      ['UTF-16LE', Buffer.from(manifest, 'utf16le')],
    ];
    for (const [encoding, bytes] of encodings) {
      const result = await accepted([file('bagit.txt', `BagIt-Version: 0.97\nTag-File-Character-Encoding: ${encoding}\n`), file('manifest-md5.txt', bytes), file(name, 'x')]);
      expect([...result.hashes.keys()]).toEqual(['Ünïcödé.txt']);
    }
  });

  it('reads ISO-8859-1 tag files as ISO-8859-1, not as UTF-8', async () => {
    const manifest = Buffer.from(`${hex('md5', 'x')}  ${name}\n`, 'latin1');
    const result = await accepted([file('bagit.txt', 'BagIt-Version: 0.97\nTag-File-Character-Encoding: ISO-8859-1\n'), file('manifest-md5.txt', manifest), file(name, 'x')]);
    expect([...result.hashes.keys()]).toEqual(['Ünïcödé.txt']);
  });

  it('names the file and the encoding when the bytes are not valid in it', async () => {
    const manifest = Buffer.from(`${hex('md5', 'x')}  ${name}\n`, 'latin1');
    expect(await refusal([file('bagit.txt', V1), file('manifest-md5.txt', manifest), file(name, 'x')])).toMatch(/manifest-md5\.txt is not valid UTF-8, the encoding bagit\.txt declares/);
  });

  it('says so when it cannot read the declared encoding', async () => {
    expect(await refusal(bag({ 'data/a.txt': 'a' }, { bagit: 'BagIt-Version: 1.0\nTag-File-Character-Encoding: X-NOT-A-CHARSET\n' }))).toMatch(
      /manifest-sha256\.txt is in X-NOT-A-CHARSET \(bagit\.txt says so\), an encoding Ferry cannot read/,
    );
  });
});

describe('fetch.txt (RFC 8493 §2.2.3, §3)', () => {
  const fetchLines = 'https://example.org/a.txt 1 data/a.txt\nhttps://example.org/b.txt - data/b.txt\n';

  it('accepts a bag whose fetched files are all present: it is complete', async () => {
    const result = await accepted(bag({ 'data/a.txt': 'a', 'data/b.txt': 'b' }, { extra: [file('fetch.txt', fetchLines)] }));
    expect([...result.hashes.keys()].sort()).toEqual(['a.txt', 'b.txt']);
    expect(result.warnings).toEqual([]);
  });

  it('refuses one whose fetched file is absent, naming it and what to do', async () => {
    const files = bag({ 'data/a.txt': 'a', 'data/b.txt': 'b' }, { extra: [file('fetch.txt', fetchLines)] }).filter((f) => f.path !== 'data/b.txt');
    expect(await refusal(files)).toMatch(/data\/b\.txt is to be fetched from https:\/\/example\.org\/b\.txt \(fetch\.txt line 2\) and is not in the ZIP; Ferry takes only complete bags \(RFC 8493 §3\)/);
  });

  it('refuses a fetch line for a file no manifest lists, or one outside data/', async () => {
    expect(await refusal(bag({ 'data/a.txt': 'a' }, { extra: [file('fetch.txt', 'https://example.org/c 1 data/c.txt\n')] }))).toMatch(/fetch\.txt line 1 lists data\/c\.txt, which manifest-sha256\.txt does not/);
    expect(await refusal(bag({ 'data/a.txt': 'a' }, { extra: [file('fetch.txt', 'https://example.org/c 1 bag-info.txt\n')] }))).toMatch(/would fetch "bag-info\.txt" to outside the bag's data\/ folder/);
  });
});

describe('manifest paths', () => {
  it('reads ./data/… with a warning', async () => {
    const result = await accepted(bag({ 'data/a.txt': 'a', 'data/b.txt': 'b' }, { manifestPaths: { 'data/a.txt': './data/a.txt', 'data/b.txt': './data/b.txt' } }));
    expect([...result.hashes.keys()].sort()).toEqual(['a.txt', 'b.txt']);
    expect(result.warnings).toEqual([expect.stringMatching(/manifest-sha256\.txt writes paths with "\.\/" or "\/\/" \(line 1 first: "\.\/data\/a\.txt"\)/)]);
  });

  it('refuses ../ and absolute paths', async () => {
    expect(await refusal(bag({ 'data/a.txt': 'a' }, { manifestPaths: { 'data/a.txt': 'data/../data/a.txt' } }))).toMatch(/outside the bag's data\/ folder/);
    expect(await refusal(bag({ 'data/a.txt': 'a' }, { manifestPaths: { 'data/a.txt': '/data/a.txt' } }))).toMatch(/outside the bag's data\/ folder/);
  });

  it('keeps trailing spaces, and decodes %25 from BagIt 1.0 on but not before', async () => {
    const v1 = await accepted(bag({ 'data/50%.txt': 'a', 'data/trailing  ': 'b' }, { manifestPaths: { 'data/50%.txt': 'data/50%25.txt' } }));
    expect([...v1.hashes.keys()].sort()).toEqual(['50%.txt', 'trailing  ']);
    const v097 = await accepted(bag({ 'data/50%25.txt': 'a' }, { bagit: V097 }));
    expect([...v097.hashes.keys()]).toEqual(['50%25.txt']);
  });

  it('matches a name spelled in another Unicode normalisation, with a warning', async () => {
    const nfd = 'data/Nu\u0301n\u0303ez';
    const result = await accepted(bag({ [nfd]: 'a' }, { manifestPaths: { [nfd]: nfd.normalize('NFC') } }));
    expect([...result.hashes.keys()]).toEqual([nfd.slice('data/'.length)]);
    expect(result.warnings).toEqual([expect.stringMatching(/another Unicode normalisation form than the ZIP/)]);
  });
});

describe('what changed in BagIt 1.0 follows the bag’s version', () => {
  const twoManifests = (bagit: string) => [
    file('bagit.txt', bagit),
    file('manifest-md5.txt', `${hex('md5', 'a')}  data/a.txt\n`),
    file('manifest-sha1.txt', `${hex('sha1', 'b')}  data/b.txt\n`),
    file('data/a.txt', 'a'),
    file('data/b.txt', 'b'),
  ];

  it('before 1.0 a file may be listed in one manifest of several; in 1.0 in every one', async () => {
    await accepted(twoManifests(V097));
    expect(await refusal(twoManifests(V1))).toMatch(/data\/b\.txt is not listed in manifest-md5\.txt/);
  });

  it('a file listed twice with the same checksum: a warning before 1.0, refused in 1.0', async () => {
    const twice = (bagit: string) => [file('bagit.txt', bagit), file('manifest-md5.txt', `${hex('md5', 'a')}  data/a.txt\n`.repeat(2)), file('data/a.txt', 'a')];
    expect((await accepted(twice(V097))).warnings).toEqual([expect.stringMatching(/lists data\/a\.txt more than once/)]);
    expect(await refusal(twice(V1))).toMatch(/lists data\/a\.txt twice; a BagIt 1\.0 manifest lists each file once/);
  });

  it('bag-info.txt: whitespace around the colon is tolerated before 1.0, refused in 1.0', async () => {
    const info = file('bag-info.txt', 'Source-Organization : Ferry\nPayload-Oxum: 1.1\n');
    await accepted(bag({ 'data/a.txt': 'a' }, { bagit: V097, extra: [info] }));
    expect(await refusal(bag({ 'data/a.txt': 'a' }, { extra: [info] }))).toMatch(/bag-info\.txt line 1 has whitespace before its colon \(RFC 8493 §2\.2\.2\)/);
  });
});

describe('desktop litter', () => {
  it('is payload when a manifest lists it', async () => {
    const result = await accepted(bag({ 'data/a.txt': 'a', 'data/.DS_Store': 'x', 'data/Thumbs.db': 'y', 'data/desktop.ini': 'z' }));
    expect([...result.hashes.keys()].sort()).toEqual(['.DS_Store', 'Thumbs.db', 'a.txt', 'desktop.ini']);
  });

  it('is left out with a warning when no manifest lists it, and the Payload-Oxum counts without it', async () => {
    const files = bag({ 'data/a.txt': 'a' }, { extra: [file('data/.DS_Store', 'x', true), file('bag-info.txt', 'Payload-Oxum: 1.1\n')] });
    const result = await accepted(files);
    expect([...result.hashes.keys()]).toEqual(['a.txt']);
    expect(result.warnings).toEqual([expect.stringMatching(/data\/\.DS_Store is desktop litter that no manifest lists/)]);
  });
});

describe('checksums', () => {
  it('checks sha224 (which the upload job does not compute) even when the payload check is deferred', async () => {
    const files = bag({ 'data/a.txt': 'a' }, { algorithm: 'sha224' });
    expect((await accepted(files, { payload: 'defer' })).hashes.get('a.txt')).toEqual({ sha224: hex('sha224', 'a') });
    const damaged = files.map((f) => (f.path === 'data/a.txt' ? file('data/a.txt', 'b') : f));
    const error = (await validateBag(damaged, { payload: 'defer' }).catch((e: unknown) => e)) as Error;
    expect(error.message).toMatch(/data\/a\.txt does not match its sha224 checksum/);
  });

  it('refuses two manifests of one algorithm (the last read would win)', async () => {
    // the wrong one first: read last, the right one would have hidden it
    const files = [file('manifest-MD5.txt', `${hex('md5', 'other')}  data/a.txt\n`), ...bag({ 'data/a.txt': 'a' }, { algorithm: 'md5' })];
    expect(await refusal(files)).toMatch(/manifest-MD5\.txt and manifest-md5\.txt are both md5 manifests/);
  });

  it('names a checksum of the wrong length', async () => {
    const files = [file('bagit.txt', V1), file('manifest-md5.txt', `${'0'.repeat(31)}  data/a.txt\n`), file('data/a.txt', 'a')];
    expect(await refusal(files)).toMatch(/manifest-md5\.txt line 1 has a checksum of 31 hex digits; md5 has 32/);
  });
});
