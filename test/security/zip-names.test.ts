// Hostile entry names and entry types in an uploaded ZIP, read through openUploadZip (the
// one gate every upload passes before any writer sees an entry).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FerryError } from '../../electron/core/errors.js';
import { DEFAULT_LIMITS } from '../../electron/core/limits.js';
import { openUploadZip } from '../../electron/core/bag/upload-reader.js';
import { rawZip, type RawEntry } from '../../electron/core/zip/testing/raw-zip.js';

let dir: string;
let counter = 0;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-zipnames-'));
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

async function write(zip: Buffer): Promise<string> {
  const file = path.join(dir, `${counter++}.zip`);
  await writeFile(file, zip);
  return file;
}

async function paths(zip: Buffer): Promise<string[]> {
  const archive = await openUploadZip(await write(zip), DEFAULT_LIMITS);
  try {
    const out: string[] = [];
    for await (const entry of archive.entries()) out.push(entry.path);
    return out;
  } finally {
    await archive.close();
  }
}

async function refusal(zip: Buffer): Promise<FerryError> {
  const error = await openUploadZip(await write(zip), DEFAULT_LIMITS).then(
    async (archive) => {
      await archive.close();
      return null;
    },
    (e: unknown) => e,
  );
  if (!(error instanceof FerryError)) throw new Error(`expected a refusal, got ${String(error)}`);
  expect(error.message).not.toContain(dir);
  return error;
}

const file = (name: string | Buffer, extra: Partial<RawEntry> = {}): RawEntry => ({ name, data: Buffer.from('x'), ...extra });

describe('names that would land outside their folder are refused', () => {
  const names = [
    'a/../../x',
    './../x',
    '../x',
    'x/..',
    '..',
    'a/./../../x',
    '..\\x',
    'a\\..\\..\\x',
    '/etc/x',
    '//server/share/x',
    'C:x',
    'c:/x',
    'a/.. /.. /x', // Windows drops trailing spaces and dots: ".. " is ".."
    'a/.../x',
    'a/... /x',
    'a/ ../x',
  ];
  for (const name of names) {
    it(JSON.stringify(name), async () => {
      const error = await refusal(rawZip([file('ok.txt'), file(name)]));
      expect(error.status).toBe(400);
    });
  }

  it('a NUL byte, in the middle or hiding a ".." suffix', async () => {
    expect((await refusal(rawZip([file(Buffer.from('a\0.txt'))]))).message).toMatch(/NUL/);
    expect((await refusal(rawZip([file(Buffer.from('ok.txt\0/../../x'))]))).message).toMatch(/NUL/);
  });

  it('".." after Unicode normalisation (NFC and the compatibility forms a file system may apply)', async () => {
    // fullwidth full stops become ".." under NFKC (some file systems and tools normalise so)
    await refusal(rawZip([file('a/\uFF0E\uFF0E/x')]));
    await refusal(rawZip([file('a/\uFE52\uFE52/x')])); // small full stop
  });

  it('a name longer than a file system allows for one segment', async () => {
    expect((await refusal(rawZip([file(`${'a'.repeat(256)}.txt`)]))).message).toMatch(/255|long/);
    expect((await refusal(rawZip([file(`${'é'.repeat(130)}`)]))).message).toMatch(/255|long/); // 260 bytes
  });
});

describe('odd but harmless names are kept literally', () => {
  it('percent-encoded dots and other look-alikes are plain names', async () => {
    expect(await paths(rawZip([file('%2e%2e/x.txt'), file('%252e%252e/y.txt'), file('a\u2024\u2024/z.txt'), file('..a/b.txt'), file('a../c.txt')]))).toEqual([
      '%2e%2e',
      '%2e%2e/x.txt',
      '%252e%252e',
      '%252e%252e/y.txt',
      'a\u2024\u2024',
      'a\u2024\u2024/z.txt',
      '..a',
      '..a/b.txt',
      'a..',
      'a../c.txt',
    ]);
  });

  it('a ZIP inside the ZIP is a file, not unpacked', async () => {
    const inner = rawZip([file('../../evil.txt')]);
    expect(await paths(rawZip([{ name: 'F/inner.zip', data: inner }]))).toEqual(['F', 'F/inner.zip']);
  });
});

describe('entry types other than files and folders are refused', () => {
  const types: [string, number][] = [
    ['symbolic link', 0o120777],
    ['character device', 0o020644],
    ['block device', 0o060644],
    ['named pipe', 0o010644],
    ['socket', 0o140755],
  ];
  for (const [label, mode] of types) {
    it(label, async () => {
      const error = await refusal(rawZip([file('ok.txt'), file('dev', { mode })]));
      expect(error.message).toMatch(/link|device|pipe|socket|special|not a regular/i);
    });
  }

  it('set-uid and sticky bits on a regular file are fine (the writer makes a plain file)', async () => {
    expect(await paths(rawZip([file('x', { mode: 0o104755 })]))).toEqual(['x']);
  });

  it('two entries sharing one local header (a hard-link-like alias; the overlap trick of zip bombs)', async () => {
    const zip = rawZip([file('a.txt', { data: Buffer.from('same bytes') }), file('b.txt', { data: Buffer.from('same bytes') })]);
    // point b.txt's central record at a.txt's local header
    const eocd = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
    const directory = zip.readUInt32LE(eocd + 16);
    const firstNameLength = zip.readUInt16LE(directory + 28);
    const second = directory + 46 + firstNameLength;
    expect(zip.readUInt32LE(second)).toBe(0x02014b50);
    zip.writeUInt32LE(zip.readUInt32LE(directory + 42), second + 42);
    const error = await refusal(zip);
    expect(error.message).toMatch(/same|twice|overlap|share/i);
  });
});

describe('names that differ only by case or Unicode normalisation', () => {
  it('NFC and NFD spellings of one name are refused (one name on macOS, confusing everywhere)', async () => {
    const nfc = 'caf\u00e9.txt';
    const nfd = 'cafe\u0301.txt';
    expect((await refusal(rawZip([file(nfc), file(nfd)]))).message).toMatch(/differ only|same name|normali|case/i);
    await refusal(rawZip([file(`D\u00e9/a.txt`), file(`De\u0301/b.txt`)]));
  });

  it('names differing only in case are refused (one file on macOS and Windows)', async () => {
    expect((await refusal(rawZip([file('Data/README.txt'), file('Data/readme.txt')]))).message).toMatch(/differ only|case/i);
    await refusal(rawZip([file('Data/a.txt'), file('data/b.txt')]));
  });

  it('the same folder repeated, or a name in two folders, is fine', async () => {
    expect(await paths(rawZip([{ name: 'D/' }, { name: 'D/' }, file('D/a.txt'), file('E/a.txt')]))).toEqual(['D', 'D/a.txt', 'E', 'E/a.txt']);
  });
});
