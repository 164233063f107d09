// Folder modes of a flat record, without a service: what packForFlatRecord hands a writer,
// and what unpackedRecord makes of a record holding it (remote/packed-folders.ts,
// remote/unpacked-record.ts). The round trips through Zenodo and figshare: test/api/folder-modes.test.ts.
import { readdir } from 'node:fs/promises';
import os from 'node:os';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { isFerryError } from '../errors.js';
import { PROVENANCE_FILE, serializeProvenance, type FolderLayout } from '../provenance/format.js';
import type { Entry } from '../target.js';
import { packForFlatRecord } from './packed-folders.js';
import { unpackedRecord } from './unpacked-record.js';

const file = (path: string, text: string | Buffer): Entry => {
  const bytes = Buffer.isBuffer(text) ? text : Buffer.from(text);
  return { path, kind: 'file', size: bytes.length, mtime: new Date('2026-01-02T03:04:05Z'), hashes: {}, open: async () => Readable.from([bytes]) };
};
const folder = (path: string): Entry => ({ path, kind: 'folder', size: null, mtime: null, hashes: {}, open: () => Promise.reject(new Error('a folder')) });

async function bytesOf(entry: Entry): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of await entry.open()) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function all(entries: AsyncIterable<Entry>): Promise<Entry[]> {
  const out: Entry[] = [];
  for await (const entry of entries) out.push(entry);
  return out;
}

/** A record as a flat target reads it: its folder, then `title/<stored name>` for each file. */
async function* record(title: string, files: Record<string, Buffer>): AsyncIterable<Entry> {
  yield folder(title);
  for (const [name, bytes] of Object.entries(files)) yield file(`${title}/${name}`, bytes);
}

function provenanceWith(target: string, folders: FolderLayout): Buffer {
  const resource = { target, resource_id: null, title: null };
  return serializeProvenance({ format: 'ferry-provenance/1', entries: [{ action: 'transfer', at: '2026-01-02T03:04:05.000000Z', job: '1', software: 'Ferry', source: resource, destination: resource, files: [], folders }] });
}

const origin = (fallbackTitle: string) => ({ target: 'local', resourceId: 'loc_1', fallbackTitle });
const source = { target: 'zenodo', service: 'Zenodo', signal: new AbortController().signal };
const unpackDirs = async () => (await readdir(os.tmpdir())).filter((name) => name.startsWith('ferry-unpack-')).length;

describe('packForFlatRecord', () => {
  it('zip-per-folder into a record: each first-level folder (listed or only implied) one ZIP, files and the provenance record stay files', async () => {
    const packed = packForFlatRecord([file('A/x.txt', 'x'), file('A/sub/y.txt', 'y'), file('loose.txt', 'l'), file(PROVENANCE_FILE, '{}'), folder('B')], null, 'zip-per-folder', origin('Ferry upload 1'));
    expect(packed.entries.map((entry) => entry.path)).toEqual(['A.zip', 'loose.txt', PROVENANCE_FILE, 'B.zip']);
    expect(packed.layout).toEqual({ mode: 'zip-per-folder', stored: [{ file: 'A.zip', path: 'A' }, { file: 'B.zip', path: 'B' }] });
    // every open() makes the same bytes: a spooled or retried upload sends what was checked
    const zip = packed.entries[0]!;
    expect((await bytesOf(zip)).equals(await bytesOf(zip))).toBe(true);
  });

  it('bag below a new record: one <title>.zip after the top folder; into a record without one top folder it takes the fallback name', () => {
    const top = packForFlatRecord([folder('Study'), file('Study/a.csv', 'a'), file('Study/raw/b.csv', 'b')], 'Study', 'bag', origin('unused'));
    expect(top.entries.map((entry) => entry.path)).toEqual(['Study', 'Study/Study.zip']);
    expect(top.layout).toEqual({ mode: 'bag', stored: [{ file: 'Study.zip', path: '' }] });
    const into = packForFlatRecord([file('a.csv', 'a'), folder('raw'), file('raw/b.csv', 'b')], null, 'bag', origin('Ferry upload 7'));
    expect(into.entries.map((entry) => entry.path)).toEqual(['Ferry upload 7.zip']);
  });

  it('flatten hands the entries on as they are and names only the paths it joins', () => {
    const packed = packForFlatRecord([folder('S'), file('S/a__b.txt', 'a'), file('S/raw/c.txt', 'c')], 'S', 'flatten', origin('unused'));
    expect(packed.entries.map((entry) => entry.path)).toEqual(['S', 'S/a__b.txt', 'S/raw/c.txt']);
    expect(packed.layout.stored).toEqual([{ file: 'raw__c.txt', path: 'raw/c.txt' }]);
  });
});

describe('unpackedRecord', () => {
  const packedA = () => bytesOf(packForFlatRecord([file('A/x.txt', 'x'.repeat(5000)), file('A/sub/y.txt', 'y')], null, 'zip-per-folder', origin('')).entries[0]!);

  it('reads a packed folder as its tree and leaves a name with the separator alone; the temp copy is gone once all is read', async () => {
    const before = await unpackDirs();
    const layout: FolderLayout = { mode: 'zip-per-folder', stored: [{ file: 'A.zip', path: 'A' }] };
    const entries = await all(unpackedRecord('R', record('R', { 'A.zip': await packedA(), 'a__b.txt': Buffer.from('ab'), [PROVENANCE_FILE]: provenanceWith('zenodo', layout) }), source));
    expect(entries.map((entry) => `${entry.kind}:${entry.path}`)).toEqual(['folder:R', 'folder:R/A', 'file:R/A/x.txt', 'folder:R/A/sub', 'file:R/A/sub/y.txt', 'file:R/a__b.txt', `file:R/${PROVENANCE_FILE}`]);
    expect((await bytesOf(entries[2]!)).toString()).toBe('x'.repeat(5000));
    expect(await unpackDirs()).toBeGreaterThan(before);
    expect((await bytesOf(entries[4]!)).toString()).toBe('y');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await unpackDirs()).toBe(before);
  });

  it('a record inside a folder its reader yields (a figshare project\'s item) yields no folder above itself', async () => {
    const layout: FolderLayout = { mode: 'flatten', stored: [{ file: 'raw__c.txt', path: 'raw/c.txt' }] };
    const entries = await all(unpackedRecord('P/R', record('P/R', { 'raw__c.txt': Buffer.from('c'), [PROVENANCE_FILE]: provenanceWith('zenodo', layout) }), source));
    expect(entries.map((entry) => entry.path)).toEqual(['P/R', 'P/R/raw', 'P/R/raw/c.txt', `P/R/${PROVENANCE_FILE}`]);
  });

  it('splits and unpacks nothing without a layout its own target wrote, nor to a path outside the record', async () => {
    const layout: FolderLayout = { mode: 'flatten', stored: [{ file: 'raw__c.txt', path: 'raw/c.txt' }] };
    const entries = await all(unpackedRecord('R', record('R', { 'raw__c.txt': Buffer.from('c'), [PROVENANCE_FILE]: provenanceWith('figshare', layout) }), source));
    expect(entries.map((entry) => entry.path)).toEqual(['R', 'R/raw__c.txt', `R/${PROVENANCE_FILE}`]);
    const escaping: FolderLayout = { mode: 'flatten', stored: [{ file: 'raw__c.txt', path: '../../c.txt' }, { file: 'ok__d.txt', path: 'ok/d.txt' }] };
    const split = await all(unpackedRecord('R', record('R', { 'raw__c.txt': Buffer.from('c'), 'ok__d.txt': Buffer.from('d'), [PROVENANCE_FILE]: provenanceWith('zenodo', escaping) }), source));
    expect(split.map((entry) => entry.path)).toEqual(['R', 'R/raw__c.txt', 'R/ok', 'R/ok/d.txt', `R/${PROVENANCE_FILE}`]);
  });

  it('a packed ZIP that is damaged, or holds more than its folder, fails the read with a sentence naming it (no local path)', async () => {
    const good = await packedA();
    const damaged = Buffer.from(good);
    damaged[40] = damaged[40]! ^ 0xff; // inside the first entry's data
    const outside = bytesOf(packForFlatRecord([file('Other/x.txt', 'x')], null, 'zip-per-folder', origin('')).entries[0]!);
    const layout: FolderLayout = { mode: 'zip-per-folder', stored: [{ file: 'A.zip', path: 'A' }] };
    for (const bytes of [damaged, await outside]) {
      const error = await all(unpackedRecord('R', record('R', { 'A.zip': bytes, [PROVENANCE_FILE]: provenanceWith('zenodo', layout) }), source)).catch((caught: unknown) => caught);
      expect(isFerryError(error) && error.status).toBe(502);
      expect((error as Error).message).toMatch(/^The Zenodo record 'R' holds 'A.zip', which Ferry stored as a ZIP of the folder 'A', but it cannot be read back as one \(.+\); download 'A.zip' itself/);
      expect((error as Error).message).not.toContain(os.tmpdir());
    }
  });
});
