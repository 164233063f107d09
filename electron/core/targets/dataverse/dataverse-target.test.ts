import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeConfig } from '../../config.js';
import { FerryError } from '../../errors.js';
import { MemorySecretStore } from '../../keychain/memory.js';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { Entry, Target } from '../../target.js';
import { startDataverseEmulator, type DataverseEmulator, type DataverseEmulatorOptions } from '../../../../test/emulators/dataverse/emulator.js';
import { collect, ctx, drain, entriesFrom, md5, writeOptions } from '../../../../test/target-suite/test-entries.js';
import { createDataverseTarget, type DataverseTargetOptions } from './index.js';
import { REGISTER_BATCH } from './dataverse-target.js';
import { datasetId, fileId, folderId } from './ids.js';

const TOKEN = 'dv-token-1111';
let emulator: DataverseEmulator;
let target: Target;

async function start(options: DataverseEmulatorOptions = {}, overrides: Partial<DataverseTargetOptions> = {}): Promise<void> {
  await emulator?.close();
  emulator = await startDataverseEmulator(options);
  target = createDataverseTarget(makeConfig({ dataDir: '/nonexistent' }), new MemorySecretStore(), { defaultUrl: emulator.url, ratePerSecond: 1000, retries: 0, journalDir: null, lockPollMs: 10, ...overrides });
}

beforeEach(() => start());
afterEach(() => emulator.close());

async function failure(promise: Promise<unknown>): Promise<FerryError> {
  const error = await promise.then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(FerryError);
  return error as FerryError;
}

const sha256 = (text: string | Buffer) => createHash('sha256').update(text).digest('hex');
const requests = (pattern: RegExp) => emulator.state.requests.filter((r) => pattern.test(`${r.method} ${r.path}`));

describe('dataverse target: browsing', () => {
  it('describes itself', () => {
    expect(target.info).toMatchObject({ name: 'dataverse', readable_name: 'Dataverse', credential: 'remote', supported_hash_algorithms: ['md5', 'sha1', 'sha256', 'sha512'] });
  });

  it('lists every dataset over My Data pages of ten, with folders from directoryLabel', async () => {
    for (let i = 0; i < 12; i++) emulator.state.addDataset(1, `Set ${i}`);
    const nested = emulator.state.addDataset(1, 'Nested', { 'top.txt': 't', 'raw/a/b.csv.txt': 'b', 'raw/c.txt': 'c' });
    emulator.state.addDataset(2, 'Someone else', { 'x.txt': 'x' });
    const top = await collect(target.list(ctx(TOKEN), { container: null }));
    expect(top).toHaveLength(13);
    expect(top.map((n) => n.title)).not.toContain('Someone else');
    expect(requests(/^GET \/api\/mydata\/retrieve.*dvobject_types=Dataset/)).toHaveLength(2);

    const children = await collect(target.list(ctx(TOKEN), { container: datasetId(nested.id) }));
    expect(children.map((n) => [n.kind, n.title])).toEqual([['item', 'top.txt'], ['container', 'raw']]);
    const raw = await collect(target.list(ctx(TOKEN), { container: folderId(nested.id, 'raw') }));
    expect(raw.map((n) => n.title).sort()).toEqual(['a', 'c.txt']);
    const all = await collect(target.list(ctx(TOKEN)));
    expect(all.find((n) => n.title === 'b.csv.txt')?.container).toBe(folderId(nested.id, 'raw/a'));
  });

  it('takes "no results" as an empty list, the 6.11 way and the older success:false way', async () => {
    expect(await collect(target.list(ctx(TOKEN)))).toEqual([]);
    await start({ legacyNoResults: true });
    expect(await collect(target.list(ctx(TOKEN)))).toEqual([]);
  });

  it('gives details: the installation checksum under its hash name, the version, the dataset page', async () => {
    await start({ checksumType: 'SHA-256' });
    const d = emulator.state.addDataset(1, 'Alpha', { 'data/a.txt': 'hello' });
    const file = d.draft!.files[0]!;
    const detail = await target.detail(ctx(TOKEN), fileId(d.id, file.id));
    expect(detail.hashes).toEqual({ sha256: sha256('hello') });
    expect(detail.extra).toMatchObject({ size: 5, path: 'data/a.txt', restricted: false, persistent_id: d.persistentId, version: 'DRAFT', version_state: 'draft', checksum_type: 'SHA-256', tabular: { ingested: false } });
    expect(detail.date_created).toMatch(/^\d{4}-\d\d-\d\dT00:00:00\.000000Z$/);
    const dataset = await target.detail(ctx(TOKEN), datasetId(d.id));
    expect(dataset).toMatchObject({ title: 'Alpha', hashes: {}, extra: { file_count: 1, html_url: `${emulator.url}/dataset.xhtml?persistentId=${encodeURIComponent(d.persistentId)}&version=DRAFT` } });
    const published = emulator.state.addDataset(1, 'Beta', { 'b.txt': 'b' }, { released: true });
    expect((await target.detail(ctx(TOKEN), datasetId(published.id))).extra).toMatchObject({ version: '1.0', version_state: 'released' });
  });

  it('shows and reads an ingested tabular file as the original that was uploaded', async () => {
    const d = emulator.state.addDataset(1, 'Tabular');
    const csv = 'a,b\n1,2\n';
    await target.write(ctx(TOKEN), datasetId(d.id), entriesFrom({ 'tables/t.csv': csv }), writeOptions());
    const stored = d.draft!.files[0]!;
    expect(stored.label).toBe('t.tab'); // what Dataverse made of it
    const node = (await collect(target.list(ctx(TOKEN), { container: folderId(d.id, 'tables') })))[0]!;
    expect(node.title).toBe('t.csv');
    const detail = await target.detail(ctx(TOKEN), node.id);
    expect(detail.hashes).toEqual({ md5: md5(csv) });
    expect(detail.extra).toMatchObject({ size: csv.length, tabular: { ingested: true, stored_as: 't.tab', original_format: 'text/csv' } });
    const read = await target.read(ctx(TOKEN), node.id);
    expect((await drain(read.entries)).get('t.csv')?.toString()).toBe(csv);
    expect(requests(/access\/datafile/).at(-1)?.path).toMatch(/format=original/);
  });

  it('reads a dataset file by file with its folders restored', async () => {
    const d = emulator.state.addDataset(1, 'Whole', { 'a.txt': 'A', 'x/y/z.txt': 'Z' });
    const read = await target.read(ctx(TOKEN), datasetId(d.id));
    const got = await drain(read.entries);
    expect([...got.keys()]).toEqual(['Whole', 'Whole/a.txt', 'Whole/x', 'Whole/x/y', 'Whole/x/y/z.txt']);
    expect(got.get('Whole/x/y/z.txt')?.toString()).toBe('Z');
    const folder = await target.read(ctx(TOKEN), folderId(d.id, 'x'));
    expect([...(await drain(folder.entries)).keys()]).toEqual(['x', 'x/y', 'x/y/z.txt']);
  });

  it('stops a download whose bytes do not match the recorded checksum', async () => {
    const d = emulator.state.addDataset(1, 'Bad', { 'a.txt': 'good' });
    d.draft!.files[0]!.bytes = Buffer.from('evil');
    const read = await target.read(ctx(TOKEN), fileId(d.id, d.draft!.files[0]!.id));
    await expect(drain(read.entries)).rejects.toThrow(/Fixity check failed for 'a.txt'/);
  });

  it('says what to do about a bad token, and never repeats it', async () => {
    const error = await failure(collect(target.list(ctx('wrong-token-123456'))));
    expect(error.status).toBe(401);
    expect(error.message).toMatch(/Account → API Token/);
    expect(error.message).not.toContain('wrong-token-123456');
    expect((await failure(collect(target.list(ctx('{"url":"ftp://x","token":"t"}'))))).message).toMatch(/https:\/\//);
  });

  it('serves two installations at once, each token going only to its own', async () => {
    const second = await startDataverseEmulator();
    try {
      second.state.addDataset(1, 'On the second installation');
      emulator.state.addDataset(1, 'On the first installation');
      const json = JSON.stringify({ url: `${second.url}/api/`, token: TOKEN });
      expect((await collect(target.list(ctx(json), { container: null }))).map((n) => n.title)).toEqual(['On the second installation']);
      expect((await collect(target.list(ctx(TOKEN), { container: null }))).map((n) => n.title)).toEqual(['On the first installation']);
      expect(second.state.requests.every((r) => r.headers['x-dataverse-key'] === TOKEN)).toBe(true);
    } finally {
      await second.close();
    }
  });
});

describe('dataverse target: writing', () => {
  it('adds files with folders as directoryLabel, ignores what is there, replaces what changed', async () => {
    const d = emulator.state.addDataset(1, 'Target');
    const first = await target.write(ctx(TOKEN), datasetId(d.id), entriesFrom({ 'Top/': null, 'Top/a.txt': 'a', 'Top/sub/b.txt': 'b' }), writeOptions());
    expect(first).toMatchObject({ created: ['Top/a.txt', 'Top/sub/b.txt'], fileErrors: [] });
    // the installation's record of each added file (checksum.type/value, size), for the job to verify against
    expect(first.stored?.get('Top/a.txt')).toEqual({ hashes: { md5: md5('a') }, size: 1 });
    expect(d.draft!.files.map((f) => [f.directoryLabel, f.label])).toEqual([['Top', 'a.txt'], ['Top/sub', 'b.txt']]);
    const before = d.draft!.files[1]!;

    const again = await target.write(ctx(TOKEN), datasetId(d.id), entriesFrom({ 'Top/a.txt': 'a', 'Top/sub/b.txt': 'b, changed' }), writeOptions('update'));
    expect(again).toMatchObject({ created: [], updated: ['Top/sub/b.txt'], ignored: ['Top/a.txt'], fileErrors: [] });
    const after = d.draft!.files.find((f) => f.label === 'b.txt')!;
    expect(after.id).not.toBe(before.id);
    expect(after.previousDataFileId).toBe(before.id); // the history Dataverse keeps
    expect(after.bytes.toString()).toBe('b, changed');
    expect(requests(/^POST \/api\/files\/\d+\/replace$/)).toHaveLength(1);
  });

  it('writes into a folder of a dataset', async () => {
    const d = emulator.state.addDataset(1, 'Folders', { 'raw/old.txt': 'o' });
    await target.write(ctx(TOKEN), folderId(d.id, 'raw'), entriesFrom({ 'new/n.txt': 'n' }), writeOptions());
    expect(d.draft!.files.map((f) => `${f.directoryLabel}/${f.label}`)).toEqual(['raw/old.txt', 'raw/new/n.txt']);
  });

  it('keeps a ZIP a ZIP: sent inside a ZIP of its own, which Dataverse unpacks', async () => {
    const d = emulator.state.addDataset(1, 'Zips');
    const inner = await zipOf({ 'inside.txt': 'inside' });
    const outcome = await target.write(ctx(TOKEN), datasetId(d.id), entriesFrom({ 'pack/results.zip': inner }), writeOptions());
    expect(outcome).toMatchObject({ created: ['pack/results.zip'], fileErrors: [] });
    expect(d.draft!.files.map((f) => [f.directoryLabel, f.label])).toEqual([['pack', 'results.zip']]);
    expect(d.draft!.files[0]!.bytes.equals(inner)).toBe(true);
    expect(d.draft!.files[0]!.checksum.value).toBe(md5(inner));
  });

  it('the emulator unpacks a plain ZIP sent to the native add API, as Dataverse does', async () => {
    const d = emulator.state.addDataset(1, 'Plain');
    const form = new FormData();
    form.append('jsonData', '{}');
    form.append('file', new Blob([await zipOf({ 'd/one.txt': '1', 'two.txt': '2' })], { type: 'application/zip' }), 'plain.zip');
    const response = await fetch(`${emulator.url}/api/datasets/${d.id}/add`, { method: 'POST', headers: { 'x-dataverse-key': TOKEN }, body: form });
    expect(response.status).toBe(200);
    expect(d.draft!.files.map((f) => `${f.directoryLabel ?? ''}/${f.label}`)).toEqual(['d/one.txt', '/two.txt']);
  });

  it('uploads big files directly to storage, in parts, and registers them with their checksum', async () => {
    await start({ directUpload: true, partSize: 64 * 1024 }, { directUploadBytes: 100 * 1024 });
    const d = emulator.state.addDataset(1, 'Direct');
    const big = Buffer.alloc(200 * 1024 + 17, 7);
    const small = Buffer.alloc(150 * 1024 - 1, 3);
    const outcome = await target.write(ctx(TOKEN), datasetId(d.id), entriesFrom({ 'big/huge.bin': big, 'single.bin': Buffer.alloc(64 * 1024, 1), 'mid.bin': small }), writeOptions());
    expect(outcome).toMatchObject({ created: ['big/huge.bin', 'single.bin', 'mid.bin'], fileErrors: [] });
    const huge = d.draft!.files.find((f) => f.label === 'huge.bin')!;
    expect(huge.bytes.equals(big)).toBe(true);
    expect(huge.directoryLabel).toBe('big');
    expect(huge.checksum).toEqual({ type: 'MD5', value: md5(big) });
    expect(requests(/^PUT \/emulator-bucket\/.*partNumber=/)).toHaveLength(4 + 3);
    expect(requests(/^POST \/api\/datasets\/\d+\/add$/).map((r) => r.jsonData)).toHaveLength(1); // the 64 KiB file, below the threshold
    // both direct uploads registered by one addFiles at the end of the write
    expect(requests(/^POST \/api\/datasets\/\d+\/addFiles$/).map((r) => (JSON.parse(r.jsonData!) as { fileName: string }[]).map((f) => f.fileName))).toEqual([['huge.bin', 'mid.bin']]);
  });

  it('registers direct uploads REGISTER_BATCH at a time: 250 files, ceil(250/100) addFiles, each file once, reported in entry order', async () => {
    // the default options: every file with bytes goes by direct upload where the store allows it
    await start({ directUpload: true });
    const d = emulator.state.addDataset(1, 'Many');
    const files = Object.fromEntries(Array.from({ length: 250 }, (_, i) => [`f/${String(i).padStart(3, '0')}.bin`, `file ${i}`]));
    const written: string[] = [];
    const outcome = await target.write(ctx(TOKEN), datasetId(d.id), entriesFrom(files), { ...writeOptions(), onFileWritten: (path) => written.push(path) });
    expect(outcome.fileErrors).toEqual([]);
    expect(outcome.created).toEqual(Object.keys(files));
    expect(written).toEqual(Object.keys(files));
    const calls = requests(/^POST \/api\/datasets\/\d+\/addFiles$/).map((r) => (JSON.parse(r.jsonData!) as unknown[]).length);
    expect(calls).toEqual([REGISTER_BATCH, REGISTER_BATCH, 250 - 2 * REGISTER_BATCH]);
    expect(Math.ceil(250 / REGISTER_BATCH)).toBe(calls.length);
    expect(d.draft!.files.map((f) => `${f.directoryLabel}/${f.label}`).sort()).toEqual(Object.keys(files));
    expect(requests(/^POST \/api\/datasets\/\d+\/add$/)).toHaveLength(0);
  });

  it('by default sends every file with bytes directly where the store allows it; an empty one natively', async () => {
    await start({ directUpload: true });
    const d = emulator.state.addDataset(1, 'Small files');
    const outcome = await target.write(ctx(TOKEN), datasetId(d.id), entriesFrom({ 'empty.txt': '', 'x.txt': 'x', 'y.csv': 'a,b\n' }), writeOptions());
    expect(outcome).toMatchObject({ created: ['empty.txt', 'x.txt', 'y.csv'], fileErrors: [] });
    expect(requests(/^POST \/api\/datasets\/\d+\/add$/)).toHaveLength(1);
    expect(requests(/^POST \/api\/datasets\/\d+\/addFiles$/).map((r) => (JSON.parse(r.jsonData!) as { fileName: string }[]).map((f) => f.fileName))).toEqual([['x.txt', 'y.csv']]);
  });

  it("a file addFiles refuses (HTTP 200, its errorMessage) is that file's error; the others are created, in entry order", async () => {
    await start({ directUpload: true }, { directUploadBytes: 1024 });
    const d = emulator.state.addDataset(1, 'Refused');
    const written: string[] = [];
    const file = (path: string, bytes: Buffer, onOpen?: () => void): Entry => ({ path, kind: 'file', size: bytes.length, mtime: null, hashes: {}, open: async () => (onOpen?.(), Readable.from([bytes])) });
    // storage loses b.bin's object before the registration (its PUT succeeds, the object is gone)
    const lost = Buffer.alloc(2048, 2);
    const objects = emulator.state.objects;
    const keep = objects.set.bind(objects);
    objects.set = (key, value) => (Buffer.isBuffer(value) && value.equals(lost) ? objects : keep(key, value));
    async function* entries(): AsyncIterable<Entry> {
      yield file('a.bin', Buffer.alloc(2048, 1));
      yield file('small.txt', Buffer.from('native'));
      yield file('b.bin', lost);
      yield file('c.bin', Buffer.alloc(2048, 3));
      yield file('d.bin', Buffer.alloc(2048, 4));
    }
    const outcome = await target.write(ctx(TOKEN), datasetId(d.id), entries(), { ...writeOptions(), onFileWritten: (path) => written.push(path) });
    expect(outcome.created).toEqual(['a.bin', 'small.txt', 'c.bin', 'd.bin']);
    expect(written).toEqual(['a.bin', 'small.txt', 'c.bin', 'd.bin']);
    expect(outcome.fileErrors).toEqual([{ path: 'b.bin', error: "Dataverse did not register 'b.bin': BAD_REQUEST:Dataset store configuration does not allow provided storageIdentifier." }]);
    expect(d.draft!.files.map((f) => f.label).sort()).toEqual(['a.bin', 'c.bin', 'd.bin', 'small.txt']);
    expect(requests(/^POST \/api\/datasets\/\d+\/addFiles$/)).toHaveLength(1);
  });

  it('replaces a big file by direct upload too', async () => {
    await start({ directUpload: true, partSize: 64 * 1024 }, { directUploadBytes: 1024 });
    const d = emulator.state.addDataset(1, 'Direct replace', { 'r.bin': Buffer.alloc(2048, 1) });
    const old = d.draft!.files[0]!;
    const outcome = await target.write(ctx(TOKEN), datasetId(d.id), entriesFrom({ 'r.bin': Buffer.alloc(4096, 2) }), writeOptions('update'));
    expect(outcome).toMatchObject({ updated: ['r.bin'], fileErrors: [] });
    expect(d.draft!.files[0]!.previousDataFileId).toBe(old.id);
    expect(JSON.parse(requests(/\/replace$/)[0]!.jsonData!)).toMatchObject({ storageIdentifier: expect.stringMatching(/^s3:\/\//), forceReplace: true, checksum: { '@type': 'MD5' } });
  });

  it('falls back to the native API when the store does not allow direct upload', async () => {
    await start({ directUpload: false }, { directUploadBytes: 1024 });
    const d = emulator.state.addDataset(1, 'No direct');
    const outcome = await target.write(ctx(TOKEN), datasetId(d.id), entriesFrom({ 'a.bin': Buffer.alloc(4096, 1), 'b.bin': Buffer.alloc(4096, 2) }), writeOptions());
    expect(outcome).toMatchObject({ created: ['a.bin', 'b.bin'], fileErrors: [] });
    expect(requests(/uploadurls/)).toHaveLength(1); // asked once per write, then native
    expect(requests(/^POST \/api\/datasets\/\d+\/add$/)).toHaveLength(2);
  });

  it('waits for the ingest lock a tabular file leaves before adding the next file', async () => {
    await start({ ingestLockReads: 2 });
    const d = emulator.state.addDataset(1, 'Locked');
    const outcome = await target.write(ctx(TOKEN), datasetId(d.id), entriesFrom({ 't.csv': 'a,b\n', 'after.txt': 'x' }), writeOptions());
    expect(outcome).toMatchObject({ created: ['t.csv', 'after.txt'], fileErrors: [] });
    // an ingested tabular file is recorded with its original's size and checksum, what Ferry sent
    expect(outcome.stored?.get('t.csv')).toEqual({ hashes: { md5: md5('a,b\n') }, size: 4 });
    expect(requests(/\/locks$/).length).toBeGreaterThanOrEqual(3);
  });

  it('uploads into a published dataset by making a draft, and never publishes', async () => {
    const d = emulator.state.addDataset(1, 'Published', { 'p.txt': 'p' }, { released: true });
    await target.write(ctx(TOKEN), datasetId(d.id), entriesFrom({ 'q.txt': 'q' }), writeOptions());
    expect(d.released!.files.map((f) => f.label)).toEqual(['p.txt']);
    expect(d.draft!.files.map((f) => f.label)).toEqual(['p.txt', 'q.txt']);
    expect(emulator.state.requests.some((r) => /publish/i.test(r.path))).toBe(false);
  });

  it('creates a new draft dataset from a top folder, with the citation fields filled and a distinct title', async () => {
    emulator.state.addDataset(1, 'Survey');
    const outcome = await target.write(ctx(TOKEN), null, entriesFrom({ 'Survey/': null, 'Survey/r.txt': 'r' }), writeOptions());
    expect(outcome.newResource?.title).toBe('Survey (2)');
    const made = [...emulator.state.datasets.values()].find((d) => d.title === 'Survey (2)')!;
    expect(outcome.newResource?.id).toBe(datasetId(made.id));
    expect(made.draft!.files.map((f) => f.label)).toEqual(['r.txt']);
    const sent = JSON.parse(requests(/^POST \/api\/dataverses\/:root\/datasets$/)[0]?.json ?? '{}') as { datasetVersion: { metadataBlocks: { citation: { fields: { typeName: string; value: unknown }[] } } } };
    const fields = Object.fromEntries(sent.datasetVersion.metadataBlocks.citation.fields.map((f) => [f.typeName, f.value]));
    expect(fields.author).toEqual([{ authorName: { typeName: 'authorName', multiple: false, typeClass: 'primitive', value: 'Doe, Jane' } }]);
    expect(JSON.stringify(fields.datasetContact)).toContain('jane@example.org');
    expect(fields.subject).toEqual(['Other']);
  });

  it('does not wait for the search index after creating a dataset', async () => {
    await start({ indexLagSearches: 3 });
    const outcome = await target.write(ctx(TOKEN), null, entriesFrom({ 'Lagging/': null, 'Lagging/r.txt': 'r' }), writeOptions());
    expect(outcome).toMatchObject({ created: ['Lagging/r.txt'], fileErrors: [] });
    expect(await collect(target.list(ctx(TOKEN), { container: null }))).toEqual([]); // not indexed yet
    expect((await target.detail(ctx(TOKEN), outcome.newResource!.id)).title).toBe('Lagging');
  });

  it('says which fields an installation wants beyond the ones Ferry fills', async () => {
    await start({ extraRequiredFields: ['keyword'] });
    const error = await failure(target.write(ctx(TOKEN), null, entriesFrom({ 'New/': null, 'New/r.txt': 'r' }), writeOptions()));
    expect(error.status).toBe(400);
    expect(error.message).toMatch(/Keyword is required/);
    expect(error.message).toMatch(/Create the dataset in Dataverse/);
  });

  it('creates new datasets in the collection a JSON token names', async () => {
    emulator.state.addCollection(1, 'sub', 'My lab');
    const json = JSON.stringify({ url: emulator.url, token: TOKEN, collection: 'sub' });
    await target.write(ctx(json), null, entriesFrom({ 'In sub/': null, 'In sub/r.txt': 'r' }), writeOptions());
    const made = [...emulator.state.datasets.values()].find((d) => d.title === 'In sub')!;
    expect(made.dataverse).toBe('sub');
    expect((await target.detail(ctx(json), datasetId(made.id))).extra).toMatchObject({ collection: { alias: 'sub', name: 'My lab' } });
    // a collection the account has no role on refuses, and the refusal is passed on
    const elsewhere = JSON.stringify({ url: emulator.url, token: 'dv-token-2222', collection: 'sub' });
    expect((await failure(target.write(ctx(elsewhere), null, entriesFrom({ 'No/': null, 'No/r.txt': 'r' }), writeOptions()))).status).toBe(403);
  });
});

function zipOf(files: Record<string, string>): Promise<Buffer> {
  // a tiny stored ZIP through client-zip, the writer Ferry itself uses
  return import('client-zip').then(async ({ makeZip }) => {
    const stream = makeZip(Object.entries(files).map(([name, text]) => ({ name, input: Buffer.from(text), lastModified: new Date() })));
    return Buffer.from(await new Response(stream).arrayBuffer());
  });
}

describe('dataverse target: a failed new top-level upload', () => {
  it('deletes the draft dataset it made, so nothing is left behind', async () => {
    const before = emulator.state.datasets.size;
    async function* entries() {
      yield* entriesFrom({ 'Study/': null, 'Study/a.txt': 'a' });
      yield { path: 'Study/b.bin', kind: 'file' as const, size: 3, mtime: null, hashes: {}, open: () => Promise.reject(new Error('the source disk went away')) };
    }
    const error = (await target.write(ctx(TOKEN), null, entries(), writeOptions()).catch((e: unknown) => e)) as Error;
    expect(error.message).toMatch(/The new draft dataset 'Study' \(.+\) was removed again, so nothing is left behind\.$/);
    expect(emulator.state.datasets.size).toBe(before);
  });
  it('cancelled with direct uploads in storage, not yet registered: registers none, forgets their journal records, removes the dataset', async () => {
    const journalDir = await mkdtemp(path.join(os.tmpdir(), 'ferry-dv-cancel-'));
    try {
      await start({ directUpload: true }, { directUploadBytes: 1, journalDir });
      const cancel = new AbortController();
      async function* entries(): AsyncIterable<Entry> {
        yield* entriesFrom({ 'Study/': null, 'Study/a.bin': 'a', 'Study/b.bin': 'b' });
        // a and b are in storage, waiting for the addFiles at the end of the write (b's PUT may run beside c)
        const inStorage = async () => {
          while (emulator.state.objects.size < 2) await new Promise((resolve) => setTimeout(resolve, 5));
        };
        yield { path: 'Study/c.bin', kind: 'file', size: 1, mtime: null, hashes: {}, open: async () => (await inStorage(), cancel.abort(), Readable.from([Buffer.from('c')])) };
      }
      const before = emulator.state.datasets.size;
      const written: string[] = [];
      const error = (await target.write(ctx(TOKEN), null, entries(), { ...writeOptions(), signal: cancel.signal, onFileWritten: (p) => written.push(p) }).catch((e: unknown) => e)) as Error;
      expect(error.message).toMatch(/was removed again/);
      expect(emulator.state.objects.size).toBeGreaterThanOrEqual(2);
      expect(requests(/addFiles$/)).toHaveLength(0);
      expect(written).toEqual([]);
      expect(emulator.state.datasets.size).toBe(before);
      expect(await readdir(journalDir)).toEqual([]);
    } finally {
      await rm(journalDir, { recursive: true, force: true });
    }
  });
});
