// Every bag Ferry writes must be a valid bag (RFC 8493), whatever the names in it: a
// download made by writeBagZip goes back through the upload reader (download → upload)
// with names that trip other tools (docs/bagit.md: bagit-python strips trailing spaces
// and does not decode %25), and comes out whole, with no warning.
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import yazl from 'yazl';
import { DEFAULT_LIMITS } from '../../electron/core/limits.js';
import type { Entry } from '../../electron/core/target.js';
import { bagNameFor, writeBagZip } from '../../electron/core/bag/bag-writer.js';
import { parseBagDeclaration, parseTagFields, tagFieldProblems } from '../../electron/core/bag/bagit-format.js';
import { memoryReadResult } from '../../electron/core/bag/testing/folder-source.js';
import { readZipText } from '../../electron/core/zip/testing/zip-inspect.js';
import { openUploadZip, type UploadArchive } from '../../electron/core/bag/upload-reader.js';

let work: string;
let counter = 0;
beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'ferry-bag-round-trip-'));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

/** Names, under the resource's folder "Odd", that the manifests must carry faithfully. */
const ODD_NAMES = [
  'with space.txt',
  '100% sure.txt',
  'literal %25 and %0A and %0d.txt',
  'trailing space ',
  ' leading space.txt',
  'folder with trailing space /inner.txt',
  'caf\u00e9 composed (NFC).txt',
  'Nu\u0301n\u0303ez decomposed (NFD).txt',
  '*starts with an asterisk.txt',
  '#starts with a hash.txt',
  'emoji \u{1F4E6}.txt',
  '.DS_Store',
  'Thumbs.db',
];

/**
 * Names with a control character: a bag Ferry writes carries them faithfully, but the upload
 * policy (zip/entry-policy.ts) refuses them, naming the entry, rather than write a name no
 * listing can show (issue #17: refused with a clear message, never silently changed).
 */
const CONTROL_NAMES = ['trailing spaces and tab \t', 'line\nfeed.txt', 'carriage\rreturn.txt', 'both\r\nin one.txt'];

function memoryFile(entryPath: string, bytes: Buffer): Entry {
  return { path: entryPath, kind: 'file', size: bytes.length, mtime: null, hashes: {}, open: async () => Readable.from([bytes]) };
}

async function download(entries: Entry[]): Promise<string> {
  const zipPath = path.join(work, `download-${++counter}.zip`);
  const read = memoryReadResult('Odd', [{ path: 'Odd', kind: 'folder', size: null, mtime: null, hashes: {}, open: () => Promise.reject(new Error('folder')) }, ...entries]);
  await pipeline(writeBagZip(read, { targetName: 'memory', resourceId: 'odd', bagName: bagNameFor('memory', 'odd') }), createWriteStream(zipPath));
  return zipPath;
}

async function filesOf(archive: UploadArchive): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for await (const entry of archive.entries()) {
    if (entry.kind !== 'file') continue;
    const chunks: Buffer[] = [];
    for await (const chunk of await entry.open()) chunks.push(chunk as Buffer);
    files.set(entry.path, Buffer.concat(chunks).toString('utf8'));
  }
  return files;
}

describe('a bag Ferry writes is a valid bag (download → upload)', () => {
  it('with odd names: every file comes back under its own name, bytes intact, no warning', async () => {
    const entries = ODD_NAMES.map((name, i) => memoryFile(`Odd/${name}`, Buffer.from(`file ${i}: ${JSON.stringify(name)}\n`)));
    const archive = await openUploadZip(await download(entries), DEFAULT_LIMITS);
    try {
      expect(archive.kind).toBe('bag');
      expect(archive.warnings).toEqual([]);
      const files = await filesOf(archive);
      expect([...files.keys()].sort()).toEqual(ODD_NAMES.map((name) => `Odd/${name}`).sort());
      ODD_NAMES.forEach((name, i) => expect(files.get(`Odd/${name}`), JSON.stringify(name)).toBe(`file ${i}: ${JSON.stringify(name)}\n`));
    } finally {
      await archive.close();
    }
  });

  it('with a control character in a name: the upload is refused, naming the entry and the character', async () => {
    for (const name of CONTROL_NAMES) {
      const zip = await download([memoryFile(`Odd/${name}`, Buffer.from('bytes'))]);
      await expect(openUploadZip(zip, DEFAULT_LIMITS), JSON.stringify(name)).rejects.toThrow(/has a control character \((TAB|LF|CR)\) in its name/);
    }
  });

  it('when a backslash made two names one ("a\\b" and "a_b"), keeps both files under distinct names', async () => {
    const folder = (p: string): Entry => ({ path: p, kind: 'folder', size: null, mtime: null, hashes: {}, open: () => Promise.reject(new Error('folder')) });
    // in the order a target lists them: "\\" sorts before "_"
    const entries = [
      memoryFile('Odd/a\\b.txt', Buffer.from('backslash file')),
      memoryFile('Odd/a_b.txt', Buffer.from('underscore file')),
      folder('Odd/d\\e'),
      memoryFile('Odd/d\\e/x.txt', Buffer.from('in the backslash folder')),
      folder('Odd/d_e'),
      memoryFile('Odd/d_e/x.txt', Buffer.from('in the underscore folder')),
    ];
    const archive = await openUploadZip(await download(entries), DEFAULT_LIMITS);
    try {
      expect(archive.warnings).toEqual([]);
      expect(Object.fromEntries(await filesOf(archive))).toEqual({
        'Odd/a_b.txt': 'backslash file',
        'Odd/a_b (2).txt': 'underscore file',
        'Odd/d_e/x.txt': 'in the backslash folder',
        'Odd/d_e (2)/x.txt': 'in the underscore folder',
      });
    } finally {
      await archive.close();
    }
  });

  it('declares BagIt 1.0 in UTF-8, and its bag-info.txt holds to RFC 8493 §2.2.2', async () => {
    const zipPath = await download([memoryFile('Odd/a.txt', Buffer.from('a'))]);
    const bag = bagNameFor('memory', 'odd');
    const bagit = Buffer.from(await readZipText(zipPath, `${bag}/bagit.txt`), 'utf8');
    expect(parseBagDeclaration(bagit)).toEqual({ declaration: { version: { major: 1, minor: 0 }, encoding: 'UTF-8' } });
    const info = await readZipText(zipPath, `${bag}/bag-info.txt`);
    expect(tagFieldProblems(info, true)).toEqual([]);
    expect(parseTagFields(info).get('Payload-Oxum')).toEqual(['1.1']);
  });
});

describe('desktop litter in an uploaded bag', () => {
  async function zipOf(files: Record<string, string>): Promise<string> {
    const zip = new yazl.ZipFile();
    for (const [name, content] of Object.entries(files)) zip.addBuffer(Buffer.from(content), name);
    zip.end();
    const zipPath = path.join(work, `litter-${++counter}.zip`);
    await pipeline(zip.outputStream, createWriteStream(zipPath));
    return zipPath;
  }

  it('is written when the manifests list it, left out with a warning when they do not; a plain ZIP still drops it', async () => {
    const listed = await download([memoryFile('Odd/.DS_Store', Buffer.from('mac')), memoryFile('Odd/desktop.ini', Buffer.from('win'))]);
    const archive = await openUploadZip(listed, DEFAULT_LIMITS);
    try {
      expect([...(await filesOf(archive)).keys()].sort()).toEqual(['Odd/.DS_Store', 'Odd/desktop.ini']);
    } finally {
      await archive.close();
    }

    const sha = (text: string) => createHash('sha256').update(text).digest('hex');
    const unlisted = await zipOf({
      'b/bagit.txt': 'BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n',
      'b/manifest-sha256.txt': `${sha('a')}  data/T/a.txt\n`,
      'b/data/T/a.txt': 'a',
      'b/data/T/Thumbs.db': 'thumbnails',
      '.DS_Store': 'beside the bag folder',
    });
    const bag = await openUploadZip(unlisted, DEFAULT_LIMITS);
    try {
      expect(bag.kind).toBe('bag');
      expect([...(await filesOf(bag)).keys()]).toEqual(['T/a.txt']);
      expect(bag.warnings).toEqual([expect.stringMatching(/data\/T\/Thumbs\.db is desktop litter that no manifest lists/)]);
    } finally {
      await bag.close();
    }

    const plain = await openUploadZip(await zipOf({ 'T/a.txt': 'a', 'T/Thumbs.db': 'x', 'T/.DS_Store': 'y' }), DEFAULT_LIMITS);
    try {
      expect(plain.kind).toBe('plain');
      expect([...(await filesOf(plain)).keys()]).toEqual(['T/a.txt']);
    } finally {
      await plain.close();
    }
  });
});
