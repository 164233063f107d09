/* eslint-disable @typescript-eslint/no-explicit-any -- assertions on parsed JSON bodies */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOsfEmulator, type OsfEmulator } from './emulator.js';

/**
 * The emulator against REAL recorded OSF / WaterButler bodies (recorded/SOURCES.md):
 * same keys at every depth and the same JSON value types (ids, URLs and dates differ in
 * value, so only their types are compared).
 */
type Shape = string | { [key: string]: Shape } | Shape[];

function shape(value: unknown): Shape {
  if (value === null) return 'null';
  if (Array.isArray(value)) return value.length === 0 ? [] : [shape(value[0])];
  if (typeof value === 'object') return Object.fromEntries(Object.keys(value as object).sort().map((key) => [key, shape((value as Record<string, unknown>)[key])]));
  return typeof value;
}

/** Keys of `recorded` missing from `emulated`, and type mismatches, as readable paths. */
function differences(recorded: unknown, emulated: unknown, path = '$', exact = true): string[] {
  const a = shape(recorded);
  const b = shape(emulated);
  const out: string[] = [];
  const walk = (x: Shape, y: Shape, at: string) => {
    if (typeof x === 'string' || typeof y === 'string') {
      if (JSON.stringify(x) !== JSON.stringify(y)) out.push(`${at}: recorded ${JSON.stringify(x)}, emulated ${JSON.stringify(y)}`);
      return;
    }
    if (Array.isArray(x) || Array.isArray(y)) {
      if (!Array.isArray(x) || !Array.isArray(y)) return void out.push(`${at}: array vs object`);
      if (x.length > 0 && y.length > 0) walk(x[0]!, y[0]!, `${at}[0]`);
      return;
    }
    for (const key of Object.keys(x)) {
      if (!(key in y)) out.push(`${at}.${key}: missing in emulator`);
      else walk(x[key]!, y[key]!, `${at}.${key}`);
    }
    if (exact) for (const key of Object.keys(y)) if (!(key in x)) out.push(`${at}.${key}: not in the recording`);
  };
  walk(a, b, path);
  return out;
}

const recorded = (name: string) => JSON.parse(readFileSync(new URL(`./recorded/${name}`, import.meta.url), 'utf8')) as Record<string, any>;

describe('OSF emulator conformance with recorded responses', () => {
  let emu: OsfEmulator;
  let token: string;
  let nodeId: string;
  let fileId: string;
  let folderId: string;
  const get = async (url: string, version?: string) => {
    const response = await fetch(url, { headers: { authorization: `Bearer ${token}`, ...(version ? { accept: `application/vnd.api+json; version=${version}` } : {}) } });
    return { status: response.status, body: (await response.json()) as Record<string, any> };
  };

  beforeAll(async () => {
    emu = await startOsfEmulator();
    const user = emu.state.addUser();
    token = emu.state.addToken(user.id);
    const node = emu.state.addNode({ title: 'conformance', owner: user.id });
    nodeId = node.id;
    fileId = emu.state.addFile(node.id, '/local-file.txt', 'forty bytes of text for the test fixture').id;
    folderId = emu.state.addFolder(node.id, '/many-files/').id;
    for (let i = 1; i <= 40; i++) emu.state.addFile(node.id, `/many-files/text-file-${String(i).padStart(2, '0')}.txt`, `file ${i}`);
  });
  afterAll(() => emu.close());

  it('file detail at version 2.0 (upload-infile.yml)', async () => {
    const { status, body } = await get(`${emu.apiUrl}files/${fileId}/`);
    expect(status).toBe(200);
    expect(differences(recorded('file-detail.v2.0.json'), body)).toEqual([]);
    // the 2.0 date quirk: date_modified without a zone, date_created with Z
    expect(body.data.attributes.date_modified).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?$/);
    expect(body.data.attributes.date_created).toMatch(/Z$/);
  });

  it('folder detail at version 2.0 (create-dir1.yml)', async () => {
    const { body } = await get(`${emu.apiUrl}files/${folderId}/`);
    expect(differences(recorded('folder-detail.v2.0.json'), body)).toEqual([]);
  });

  it('node create at version 2.0 (create-p1.yml)', async () => {
    const response = await fetch(`${emu.apiUrl}nodes/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/vnd.api+json' },
      body: JSON.stringify({ data: { type: 'nodes', attributes: { title: 'osfr-test-nodes', category: 'project', description: '', public: false } } }),
    });
    expect(response.status).toBe(201);
    expect(differences(recorded('node-create.v2.0.json'), await response.json())).toEqual([]);
  });

  it('a middle page of a folder listing at version 2.20 (ls-files-n-max-20.yml)', async () => {
    const { body } = await get(`${emu.apiUrl}nodes/${nodeId}/files/osfstorage/${folderId}/?page=2`, '2.20');
    const real = recorded('files-list-page2.v2.20.json');
    expect(differences(real, body)).toEqual([]);
    expect(body.meta).toMatchObject({ total: 40, per_page: 10, version: '2.20' });
    // the page-1 URL carries no `page` parameter, as in the recording
    expect(body.links.prev).toBe(`${emu.apiUrl}nodes/${nodeId}/files/osfstorage/${folderId}/`);
    expect(body.links.last).toMatch(/\?page=4$/);
    expect(body.data[0].attributes.date_modified).toMatch(/\.\d{6}Z$/);
  });

  it('an empty listing at version 2.0', async () => {
    const { body } = await get(`${emu.apiUrl}nodes/${nodeId}/files/osfstorage/?filter%5Bkind%5D=folder&filter%5Bname%5D=nothing`);
    expect(differences(recorded('files-list-empty.v2.0.json'), body)).toEqual([]);
  });

  it('the storage provider list (osfclient fake_responses, older: recorded keys must be present)', async () => {
    const { body } = await get(`${emu.apiUrl}nodes/${nodeId}/files/`);
    expect(differences(recorded('providers-list.v2.0.json'), body, '$', false)).toEqual([]);
    expect(body.data[0].id).toBe(`${nodeId}:osfstorage`);
  });

  it('the 404 error envelope', async () => {
    const { status, body } = await get(`${emu.apiUrl}files/000000000000000000000000/`);
    expect(status).toBe(404);
    expect(body).toEqual(recorded('error-404.v2.0.json'));
  });

  it('WaterButler upload 201 and mkdir 201 entities', async () => {
    const providers = await get(`${emu.apiUrl}nodes/${nodeId}/files/`);
    const upload: string = providers.body.data[0].links.upload;
    const bytes = Buffer.from('hello waterbutler');
    const created = await fetch(`${upload}?kind=file&name=${encodeURIComponent('new file.txt')}`, {
      method: 'PUT', headers: { authorization: `Bearer ${token}`, 'content-length': String(bytes.length) }, body: bytes,
    });
    expect(created.status).toBe(201);
    expect(differences(recorded('wb-upload-201.json'), await created.json())).toEqual([]);
    const folder = await fetch(`${upload}?kind=folder&name=dir1`, { method: 'PUT', headers: { authorization: `Bearer ${token}` } });
    expect(folder.status).toBe(201);
    expect(differences(recorded('wb-mkdir-201.json'), await folder.json())).toEqual([]);
  });

  it('a missing trailing slash is a 301 to the canonical URL', async () => {
    const response = await fetch(`${emu.apiUrl}files/${fileId}`, { redirect: 'manual', headers: { authorization: `Bearer ${token}` } });
    expect(response.status).toBe(301);
    expect(response.headers.get('location')).toBe(`/v2/files/${fileId}/`);
  });
});
