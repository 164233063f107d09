import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeConfig } from '../../config.js';
import { MemorySecretStore } from '../../keychain/memory.js';
import { startDataverseEmulator, type DataverseEmulator, type RecordedRequest } from '../../../../test/emulators/dataverse/emulator.js';
import { collect, ctx, drain, entriesFrom, writeOptions } from '../../../../test/target-suite/test-entries.js';
import { createDataverseTarget } from './index.js';
import { datasetId } from './ids.js';

/**
 * What Ferry sends to a Dataverse installation and its storage, request by request, checked
 * against docs/targets/dataverse.md: one pass through listing, reading and every kind of
 * upload, then assertions over everything the emulator recorded.
 */
const TOKEN = 'dv-token-1111';
let emulator: DataverseEmulator;
let sent: RecordedRequest[];

beforeAll(async () => {
  emulator = await startDataverseEmulator({ directUpload: true, partSize: 32 * 1024 });
  const target = createDataverseTarget(makeConfig({ dataDir: '/nonexistent' }), new MemorySecretStore(), { defaultUrl: emulator.url, ratePerSecond: 1000, retries: 0, journalDir: null, directUploadBytes: 16 * 1024 });
  const d = emulator.state.addDataset(1, 'Sent', { 'plain.txt': 'plain' });
  const options = writeOptions();
  await target.write(ctx(TOKEN), datasetId(d.id), entriesFrom({ 'small/a.txt': 'a', 'table.csv': 'x,y\n1,2\n', 'résumé ✓.txt': 'accents', 'one-part.bin': Buffer.alloc(20 * 1024, 1), 'three-parts.bin': Buffer.alloc(70 * 1024, 2) }), options);
  await target.write(ctx(TOKEN), datasetId(d.id), entriesFrom({ 'small/a.txt': 'a, changed' }), writeOptions('update'));
  await target.write(ctx(TOKEN), null, entriesFrom({ 'Fresh/': null, 'Fresh/f.txt': 'f' }), options);
  await collect(target.list(ctx(TOKEN)));
  await drain((await target.read(ctx(TOKEN), datasetId(d.id))).entries);
  sent = emulator.state.requests;
});
afterAll(() => emulator.close());

const api = () => sent.filter((r) => r.server === 'api');
const s3 = () => sent.filter((r) => r.server === 's3');

describe('what Ferry sends to Dataverse', () => {
  it('the API key in X-Dataverse-key on every API request, never as Authorization or in a URL', () => {
    expect(api().length).toBeGreaterThan(10);
    for (const request of api()) {
      expect(request.headers['x-dataverse-key'], request.path).toBe(TOKEN);
      expect(request.headers.authorization, request.path).toBeUndefined();
      expect(request.path).not.toContain(TOKEN);
    }
  });

  it('no credential at all to storage: presigned PUTs with Content-Length, the single one tagged', () => {
    expect(s3().length).toBe(1 + 3);
    for (const request of s3()) {
      expect(request.method).toBe('PUT');
      expect(request.headers['x-dataverse-key']).toBeUndefined();
      expect(request.headers.authorization).toBeUndefined();
      expect(request.headers['content-length']).toMatch(/^\d+$/);
    }
    const single = s3().filter((r) => !/partNumber=/.test(r.path));
    expect(single.map((r) => r.headers['x-amz-tagging'])).toEqual(['dv-state=temp']);
  });

  it('My Data with every built-in role, datasets only, every publication state', () => {
    const query = new URL(`http://x${api().find((r) => r.path.startsWith('/api/mydata/retrieve'))!.path}`).searchParams;
    expect(query.getAll('role_ids')).toEqual(['1', '2', '3', '4', '5', '6', '7', '8']);
    expect(query.getAll('dvobject_types')).toEqual(['Dataset']);
    expect(query.getAll('published_states')).toEqual(['Published', 'Unpublished', 'Draft', 'In Review']);
    expect(query.get('selected_page')).toBe('1');
  });

  it('versions by :latest, so a draft is what the user sees', () => {
    const versions = api().filter((r) => /\/versions\//.test(r.path));
    expect(versions.length).toBeGreaterThan(0);
    for (const request of versions) expect(request.path).toMatch(/^\/api\/datasets\/\d+\/versions\/:latest$/);
  });

  it('native adds as multipart jsonData + file with the folder as directoryLabel', () => {
    const adds = api().filter((r) => /^\/api\/datasets\/\d+\/add$/.test(r.path));
    expect(adds.map((r) => JSON.parse(r.jsonData!))).toEqual([
      { directoryLabel: 'small', description: '', label: 'a.txt' },
      { directoryLabel: '', description: '', label: 'table.csv' },
      { directoryLabel: '', description: '', label: 'résumé ✓.txt' },
      { directoryLabel: '', description: '', label: 'f.txt' },
    ]);
    for (const add of adds) {
      expect(add.method).toBe('POST');
      expect(add.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
      expect(add.headers['content-length']).toMatch(/^\d+$/);
    }
  });

  it('direct uploads: uploadurls with the size, complete with the ETags, addFiles with the MD5', () => {
    const urls = api().filter((r) => /\/uploadurls\?/.test(r.path)).map((r) => new URL(`http://x${r.path}`).searchParams.get('size'));
    expect(urls).toEqual([String(20 * 1024), String(70 * 1024)]);
    const complete = api().filter((r) => r.path.startsWith('/api/datasets/mpupload'));
    expect(complete.map((r) => r.method)).toEqual(['PUT']);
    expect(Object.keys(JSON.parse(complete[0]!.json!))).toEqual(['1', '2', '3']);
    const registered = api().filter((r) => /\/addFiles$/.test(r.path)).map((r) => JSON.parse(r.jsonData!) as Record<string, unknown>[]);
    // one addFiles for the write's two direct uploads
    expect(registered.map((files) => files.length)).toEqual([2]);
    for (const file of registered[0]!) expect(file).toMatchObject({ storageIdentifier: expect.stringMatching(/^s3:\/\/emulator-bucket:/), mimeType: 'application/octet-stream', checksum: { '@type': 'MD5', '@value': expect.stringMatching(/^[0-9a-f]{32}$/) } });
  });

  it('update through /files/{id}/replace with forceReplace', () => {
    const replaces = api().filter((r) => /^\/api\/files\/\d+\/replace$/.test(r.path));
    expect(replaces.map((r) => JSON.parse(r.jsonData!))).toEqual([{ directoryLabel: 'small', description: '', label: 'a.txt', forceReplace: true }]);
  });

  it('a name beyond ASCII in the JSON label, an ASCII one in the multipart filename', () => {
    const add = api().filter((r) => /^\/api\/datasets\/\d+\/add$/.test(r.path))[2]!;
    expect(JSON.parse(add.jsonData!).label).toBe('résumé ✓.txt');
    expect(add.filename).toBe('resume _.txt');
  });

  it('a new dataset into :root, as JSON', () => {
    const create = api().filter((r) => /\/api\/dataverses\/.*\/datasets$/.test(r.path));
    expect(create.map((r) => [r.method, r.path, r.headers['content-type']])).toEqual([['POST', '/api/dataverses/:root/datasets', 'application/json']]);
  });

  it('downloads through the Data Access API, format=original only for an ingested file', () => {
    const downloads = api().filter((r) => r.path.startsWith('/api/access/datafile/'));
    expect(downloads.length).toBe(6);
    expect(downloads.filter((r) => r.path.endsWith('?format=original'))).toHaveLength(1);
  });

  it('never publishes, never deletes', () => {
    for (const request of api()) {
      expect(request.path).not.toMatch(/\/actions\/|:publish|\/publish/);
      expect(request.method).not.toBe('DELETE');
    }
  });
});
