// Delete, rename/move, new folder and Ferry's trash over real HTTP, on the local target (the
// one that trashes instead of deleting) and on a target that offers none of them.
import { readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { CreateFolderResult, DeleteResult, MoveResult, RestoreResult, TargetDescription, TrashItem } from '../../shared/api.js';
import { fullActions, type Target } from '../../electron/core/target.js';
import { encodeLocalId, LocalTarget } from '../../electron/core/targets/local/index.js';
import { expectApiError, snapshotTree, startFerry, writeTree, type Ferry } from './harness.js';

/** Lists and reads, and offers no file operation. */
function shelf(): Target {
  return {
    info: { name: 'shelf', readable_name: 'A shelf', supported_actions: fullActions(false), supported_hash_algorithms: [], credential: 'access-key' },
    async *list() {},
    detail: () => Promise.reject(new Error('not used')),
    read: () => Promise.reject(new Error('not used')),
    write: () => Promise.reject(new Error('not used')),
  };
}

let ferry: Ferry;
beforeAll(async () => {
  ferry = await startFerry({ targets: (config) => [new LocalTarget({ root: config.workspace }), shelf()] });
});
afterAll(async () => ferry?.close());

const id = (relativePath: string) => encodeLocalId(relativePath);
const at = (relativePath: string) => `/api_v1/targets/local/resources/${id(relativePath)}/`;
const confirmDelete = { 'ferry-confirm': 'delete' };
const json = { 'content-type': 'application/json' };

async function send<T>(method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: T }> {
  const response = await ferry.fetch(url, {
    method,
    headers: ferry.auth({ ...(body === undefined ? {} : json), ...headers }),
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: JSON.parse(text) as T };
}

/** Sends an undo request exactly as the answer gave it. */
async function sendUndo(undo: { method: string; url: string; body?: unknown; headers?: Record<string, string> }) {
  const response = await fetch(undo.url, {
    method: undo.method,
    headers: { ...ferry.auth(undo.headers), ...ferry.bearer(), ...(undo.body ? json : {}) },
    body: undo.body ? JSON.stringify(undo.body) : undefined,
  });
  expect(response.status, await response.clone().text()).toBeLessThan(300);
  return response.json();
}

/** The workspace's files, '/'-separated, sorted. */
async function files(): Promise<string[]> {
  const entries = await readdir(ferry.workspace, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => path.relative(ferry.workspace, path.join(e.parentPath, e.name)).split(path.sep).join('/')).sort();
}

/** What the trash lists, by id. */
async function trashIds(): Promise<string[]> {
  return ((await (await ferry.fetch('/api_v1/trash/', { headers: ferry.bearer() })).json()) as TrashItem[]).map((item) => item.id);
}

beforeEach(async () => {
  await rm(ferry.workspace, { recursive: true, force: true });
  await rm(path.join(ferry.dataDir, 'trash'), { recursive: true, force: true });
  await writeTree(ferry.workspace, { 'Data/a.txt': 'alpha', 'Data/b.txt': 'beta', 'Data/raw/c.bin': 'sea', 'Other/keep.txt': 'keep', 'top.txt': 'top' });
});

describe('what each target offers', () => {
  it('lists supported_operations beside the four binding actions, untouched', async () => {
    const targets = (await (await ferry.fetch('/api_v1/targets/')).json()) as TargetDescription[];
    expect(targets.map((t) => [t.name, t.supported_operations])).toEqual([
      ['local', { delete: true, rename: true, move: true, create_folder: true }],
      ['shelf', { delete: false, rename: false, move: false, create_folder: false }],
    ]);
    expect(Object.keys(targets[0]!.supported_actions).sort()).toEqual(['resource_collection', 'resource_detail', 'resource_download', 'resource_upload']);
    const one = (await (await ferry.fetch('/api_v1/targets/local/')).json()) as TargetDescription;
    expect(one.supported_operations).toEqual({ delete: true, rename: true, move: true, create_folder: true });
  });

  it('answers 405 with a sentence on a target without the operation', async () => {
    const headers = ferry.auth({ ...confirmDelete, ...json });
    await expectApiError(await ferry.fetch('/api_v1/targets/shelf/resources/x/', { method: 'DELETE', headers: ferry.auth(confirmDelete) }), 405, 'action_not_supported');
    await expectApiError(await ferry.fetch('/api_v1/targets/shelf/resources/x/', { method: 'PATCH', headers, body: '{"title":"y"}' }), 405, 'action_not_supported');
    const error = await expectApiError(await ferry.fetch('/api_v1/targets/shelf/folders/', { method: 'POST', headers, body: '{"title":"y"}' }), 405, 'action_not_supported');
    expect(error.error).toMatch(/A shelf does not support making new folders/);
  });
});

describe('DELETE …/resources/<id>/', () => {
  it('refuses without the confirmation header, and without a token, deleting nothing', async () => {
    const before = await snapshotTree(ferry.workspace);
    await expectApiError(await ferry.fetch(at('Data/a.txt'), { method: 'DELETE', headers: ferry.auth() }), 428, 'confirmation_required');
    await expectApiError(await ferry.fetch(at('Data/a.txt'), { method: 'DELETE', headers: confirmDelete }), 401, 'unauthorized');
    expect(await snapshotTree(ferry.workspace)).toEqual(before);
  });

  it("moves a file to Ferry's trash, nothing else, and the undo puts it back", async () => {
    const { status, body } = await send<DeleteResult>('DELETE', at('Data/a.txt'), undefined, confirmDelete);
    expect(status).toBe(200);
    expect(body.deleted).toMatchObject({ id: id('Data/a.txt'), title: 'a.txt', kind_name: 'file', container: id('Data') });
    expect(body.deleted_into).toBe('ferry_trash');
    expect(body.message).toBe("'a.txt' was moved to Ferry's trash (POST the undo request to put it back).");
    expect(body.message).not.toContain(ferry.root);
    expect(await files()).toEqual(['Data/b.txt', 'Data/raw/c.bin', 'Other/keep.txt', 'top.txt']);
    const trashDir = path.join(ferry.dataDir, 'trash');
    expect((await readdir(trashDir)).filter((n) => !n.endsWith('.json'))).toEqual([`${body.trash_id}-a.txt`]);

    const listed = (await (await ferry.fetch('/api_v1/trash/', { headers: ferry.bearer() })).json()) as TrashItem[];
    expect(listed).toMatchObject([{ id: body.trash_id, target: 'local', title: 'a.txt', kind_name: 'file', original_path: 'Data/a.txt' }]);

    expect(body.undo).toMatchObject({ method: 'POST', url: `${ferry.url}/api_v1/trash/${body.trash_id}/restore/` });
    const restored = (await sendUndo(body.undo!)) as RestoreResult;
    expect(restored.resource).toMatchObject({ id: id('Data/a.txt'), title: 'a.txt' });
    expect(await readFile(path.join(ferry.workspace, 'Data/a.txt'), 'utf8')).toBe('alpha');
    expect(await (await ferry.fetch('/api_v1/trash/', { headers: ferry.bearer() })).json()).toEqual([]);
  });

  it('deletes a folder with everything below it and no sibling', async () => {
    const { body } = await send<DeleteResult>('DELETE', at('Data'), undefined, confirmDelete);
    expect(body.deleted.kind_name).toBe('folder');
    expect(await files()).toEqual(['Other/keep.txt', 'top.txt']);
    await sendUndo(body.undo!);
    expect(await readFile(path.join(ferry.workspace, 'Data/raw/c.bin'), 'utf8')).toBe('sea');
  });

  it('restores over nothing: a name taken again is a 409 and the item stays in the trash', async () => {
    const { body } = await send<DeleteResult>('DELETE', at('top.txt'), undefined, confirmDelete);
    await writeTree(ferry.workspace, { 'top.txt': 'a new one' });
    const response = await ferry.fetch(body.undo!.url, { method: 'POST', headers: ferry.bearer() });
    const error = await expectApiError(response, 409, 'conflict');
    expect(error.error).toMatch(/'top\.txt' exists again/);
    expect(await readFile(path.join(ferry.workspace, 'top.txt'), 'utf8')).toBe('a new one');
    expect(await trashIds()).toEqual([body.trash_id]);
  });

  it('answers 404 for an id that names nothing, and the trash needs the access key', async () => {
    await expectApiError(await ferry.fetch(at('Data/nope.txt'), { method: 'DELETE', headers: ferry.auth(confirmDelete) }), 404, 'resource_not_found');
    await expectApiError(await ferry.fetch('/api_v1/trash/'), 401, 'unauthorized');
    await expectApiError(await ferry.fetch('/api_v1/trash/20260101T000000000Z-abcdef/restore/', { method: 'POST', headers: ferry.bearer() }), 404, 'resource_not_found');
  });
});

describe('PATCH …/resources/<id>/ (rename, move)', () => {
  it('renames, and the undo renames back', async () => {
    const { status, body } = await send<MoveResult>('PATCH', at('Data/a.txt'), { title: 'renamed.txt' });
    expect(status).toBe(200);
    expect(body.resource).toMatchObject({ id: id('Data/renamed.txt'), title: 'renamed.txt', container: id('Data') });
    expect(body.previous).toEqual({ id: id('Data/a.txt'), title: 'a.txt', container: id('Data') });
    expect(body.message).toBe("'a.txt' was renamed to 'renamed.txt'.");
    expect(await readFile(path.join(ferry.workspace, 'Data/renamed.txt'), 'utf8')).toBe('alpha');
    await sendUndo(body.undo!);
    expect(await readFile(path.join(ferry.workspace, 'Data/a.txt'), 'utf8')).toBe('alpha');
  });

  it('never overwrites unless asked and confirmed; a replaced file goes to the trash', async () => {
    const refused = await expectApiError(await ferry.fetch(at('Data/a.txt'), { method: 'PATCH', headers: ferry.auth(json), body: '{"title":"b.txt"}' }), 409, 'conflict');
    expect(refused.error).toMatch(/'Data\/b\.txt' already exists/);
    await expectApiError(await ferry.fetch(at('Data/a.txt'), { method: 'PATCH', headers: ferry.auth(json), body: '{"title":"b.txt","overwrite":true}' }), 428, 'confirmation_required');
    expect(await readFile(path.join(ferry.workspace, 'Data/b.txt'), 'utf8')).toBe('beta');
    expect(await readFile(path.join(ferry.workspace, 'Data/a.txt'), 'utf8')).toBe('alpha');

    const { body } = await send<MoveResult>('PATCH', at('Data/a.txt'), { title: 'b.txt', overwrite: true }, { 'ferry-confirm': 'overwrite' });
    expect(body.replaced).toMatchObject({ title: 'b.txt', deleted_into: 'ferry_trash' });
    expect(await readFile(path.join(ferry.workspace, 'Data/b.txt'), 'utf8')).toBe('alpha');
    const trashed = (await (await ferry.fetch('/api_v1/trash/', { headers: ferry.bearer() })).json()) as TrashItem[];
    expect(trashed).toMatchObject([{ id: body.replaced!.trash_id, original_path: 'Data/b.txt' }]);
  });

  it('never replaces a folder with something inside it, even when asked (that would delete the source too)', async () => {
    const response = await ferry.fetch(at('Data/raw'), {
      method: 'PATCH',
      headers: ferry.auth({ ...json, 'ferry-confirm': 'overwrite' }),
      body: JSON.stringify({ container: 'None', title: 'Data', overwrite: true }),
    });
    expect((await expectApiError(response, 409, 'conflict')).error).toMatch(/'Data' holds 'Data\/raw'/);
    expect(await files()).toEqual(['Data/a.txt', 'Data/b.txt', 'Data/raw/c.bin', 'Other/keep.txt', 'top.txt']);
    expect(await trashIds()).toEqual([]);
  });

  it('refuses a folder over a folder too, and moves into another folder and to the top level', async () => {
    await writeTree(ferry.workspace, { 'Other/raw/x.txt': 'x' });
    await expectApiError(await ferry.fetch(at('Data/raw'), { method: 'PATCH', headers: ferry.auth(json), body: JSON.stringify({ container: id('Other') }) }), 409, 'conflict');
    expect(await readFile(path.join(ferry.workspace, 'Other/raw/x.txt'), 'utf8')).toBe('x');

    const moved = await send<MoveResult>('PATCH', at('Data/raw'), { container: id('Other'), title: 'raw2' });
    expect(moved.body.resource).toMatchObject({ id: id('Other/raw2'), container: id('Other') });
    expect(await readFile(path.join(ferry.workspace, 'Other/raw2/c.bin'), 'utf8')).toBe('sea');
    const top = await send<MoveResult>('PATCH', at('Data/b.txt'), { container: 'None' });
    expect(top.body.resource).toMatchObject({ id: id('b.txt'), container: 'None' });
    await sendUndo(top.body.undo!);
    expect(await readFile(path.join(ferry.workspace, 'Data/b.txt'), 'utf8')).toBe('beta');
  });

  it('checks names by one rule and refuses a folder into itself', async () => {
    for (const bad of ['a/b', '..', '.', '', 'x\u0000y', 'line\nbreak']) {
      const error = await expectApiError(await ferry.fetch(at('Data/a.txt'), { method: 'PATCH', headers: ferry.auth(json), body: JSON.stringify({ title: bad }) }), 400, 'bad_request');
      expect(error.error).toMatch(/cannot be a name on Local folders/);
    }
    await expectApiError(await ferry.fetch(at('Data'), { method: 'PATCH', headers: ferry.auth(json), body: JSON.stringify({ container: id('Data/raw') }) }), 400, 'bad_request');
    await expectApiError(await ferry.fetch(at('Data'), { method: 'PATCH', headers: ferry.auth(json), body: '{}' }), 400, 'bad_request');
    expect(await files()).toEqual(['Data/a.txt', 'Data/b.txt', 'Data/raw/c.bin', 'Other/keep.txt', 'top.txt']);
  });
});

describe('POST …/folders/', () => {
  it('makes a folder inside a folder and at the top level; a taken name is a 409; the undo deletes it', async () => {
    const inner = await send<CreateFolderResult>('POST', `${at('Data')}folders/`, { title: 'New' });
    expect(inner.status).toBe(201);
    expect(inner.body.resource).toMatchObject({ id: id('Data/New'), kind_name: 'folder', container: id('Data') });
    const top = await send<CreateFolderResult>('POST', '/api_v1/targets/local/folders/', { title: 'Fresh' });
    expect(top.body.resource).toMatchObject({ id: id('Fresh'), container: 'None' });
    await expectApiError(await ferry.fetch('/api_v1/targets/local/folders/', { method: 'POST', headers: ferry.auth(json), body: '{"title":"Data"}' }), 409, 'conflict');
    expect(inner.body.undo).toMatchObject({ method: 'DELETE', headers: { 'ferry-confirm': 'delete' } });
    await sendUndo(inner.body.undo!);
    expect((await readdir(path.join(ferry.workspace, 'Data'))).sort()).toEqual(['a.txt', 'b.txt', 'raw']);
  });
});

describe('the desktop app (its own origin, through CORS)', () => {
  it('may send PATCH and DELETE with the confirmation header', async () => {
    const origin = 'app://ferry';
    const app = await startFerry({ server: { allowedOrigins: [origin] } });
    try {
      const preflight = await app.fetch(`/api_v1/targets/local/resources/${id('x')}/`, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'PATCH', 'access-control-request-headers': 'ferry-confirm, content-type' },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-methods')?.split(/,\s*/)).toEqual(expect.arrayContaining(['PATCH', 'DELETE']));
      expect(preflight.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('ferry-confirm');
    } finally {
      await app.close();
    }
  });
});
