// Issue #22's additive API: a selection as one transfer job (source_resource_ids), a
// selection as one bag (POST selections/, GET selections/<key>/zip/), and a listing level
// with every row's size and date (fields=size,date_modified). Over real HTTP.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Acknowledgement, ResourceSummary } from '../../shared/api.js';
import { LocalTarget } from '../../electron/core/targets/local/index.js';
import { expectApiError, findByPath, renamed, startFerry, waitForJob, writeTree, type Ferry } from './harness.js';

let ferry: Ferry;
let otherRoot: string;
beforeAll(async () => {
  ferry = await startFerry({
    targets: (config) => {
      otherRoot = path.join(path.dirname(config.workspace), 'other');
      return [new LocalTarget({ root: config.workspace }), renamed(new LocalTarget({ root: otherRoot }), 'other', 'Other folder')];
    },
  });
  await writeTree(ferry.workspace, { 'Src/a.txt': 'a\n', 'Src/bb.txt': 'bb\n', 'Src/sub/c.txt': 'ccc\n' });
  await writeTree(otherRoot, { 'Inbox/keep.txt': 'keep\n' });
});
afterAll(async () => ferry?.close());

async function level(target: string, container: string, fields = ''): Promise<ResourceSummary[]> {
  const response = await ferry.fetch(`/api_v1/targets/${target}/resources/?container=${encodeURIComponent(container)}${fields}`, { headers: ferry.auth() });
  expect(response.status, await response.clone().text()).toBe(200);
  return (await response.json()) as ResourceSummary[];
}

const post = (where: string, body: unknown) =>
  ferry.fetch(where, { method: 'POST', body: JSON.stringify(body), headers: { ...ferry.auth({ 'duplicate-file-action': 'ignore' }), 'content-type': 'application/json' } });

describe('fields=size,date_modified', () => {
  it('gives every row of the level its size and date; without fields the rows are unchanged', async () => {
    const src = findByPath(await level('local', 'None'), 'Src')!;
    const rows = await level('local', src.id, '&fields=size,date_modified');
    const by = Object.fromEntries(rows.map((row) => [row.title, row]));
    expect(by['a.txt']).toMatchObject({ size: 2 });
    expect(by['bb.txt']).toMatchObject({ size: 3 });
    expect(by['sub']).toMatchObject({ kind: 'container', size: null });
    for (const row of rows) expect(row.date_modified).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    expect((await level('local', src.id))[0]).not.toHaveProperty('size');
  });

  it('refuses fields without a container, with a sentence', async () => {
    const response = await ferry.fetch('/api_v1/targets/local/resources/?fields=size,date_modified', { headers: ferry.auth() });
    await expectApiError(response, 400, 'bad_request');
  });
});

describe('source_resource_ids', () => {
  it('copies a whole selection into a folder as one job', async () => {
    const src = findByPath(await level('local', 'None'), 'Src')!;
    const ids = (await level('local', src.id)).map((row) => row.id);
    const inbox = findByPath(await level('other', 'None'), 'Inbox')!;
    const response = await post(`/api_v1/targets/other/resources/${encodeURIComponent(inbox.id)}/`, { source_target_name: 'local', source_resource_ids: ids });
    expect(response.status, await response.clone().text()).toBe(202);
    const job = await waitForJob(ferry, ((await response.json()) as Acknowledgement).ticket_number);
    expect(job.status, job.error ?? '').toBe('succeeded');
    expect(job.report!.resources_created).toEqual(expect.arrayContaining(['a.txt', 'bb.txt', 'sub/c.txt']));
    expect(job.source).toEqual({ target: 'local', resource_id: ids[0] });
    expect(await readFile(path.join(otherRoot, 'Inbox/sub/c.txt'), 'utf8')).toBe('ccc\n');
    expect(await readFile(path.join(otherRoot, 'Inbox/bb.txt'), 'utf8')).toBe('bb\n');
    expect(await readFile(path.join(otherRoot, 'Inbox/keep.txt'), 'utf8')).toBe('keep\n');
  });

  it('refuses both fields, neither, or several ids at the top level', async () => {
    await expectApiError(await post('/api_v1/targets/other/resources/', { source_target_name: 'local', source_resource_ids: ['x', 'y'] }), 400, 'bad_request');
    await expectApiError(await post('/api_v1/targets/other/resources/', { source_target_name: 'local' }), 400, 'bad_request');
    await expectApiError(
      await post('/api_v1/targets/other/resources/', { source_target_name: 'local', source_resource_id: 'x', source_resource_ids: ['x'] }),
      400,
      'bad_request',
    );
  });
});

describe('selections', () => {
  it('downloads several resources as one bag, each under its own title', async () => {
    const src = findByPath(await level('local', 'None'), 'Src')!;
    const ids = (await level('local', src.id)).filter((row) => row.title !== 'bb.txt').map((row) => row.id);
    const named = await post('/api_v1/targets/local/selections/', { resource_ids: ids });
    expect(named.status, await named.clone().text()).toBe(201);
    const { download } = (await named.json()) as { download: string };
    const zip = await ferry.fetch(download, { headers: ferry.auth() });
    expect(zip.status).toBe(200);
    expect(zip.headers.get('content-type')).toBe('application/zip');
    const bytes = Buffer.from(await zip.arrayBuffer()).toString('latin1');
    expect(bytes).toContain('/data/a.txt');
    expect(bytes).toContain('/data/sub/c.txt');
    expect(bytes).not.toContain('/data/bb.txt');
  });

  it('answers an unknown or expired selection with a sentence', async () => {
    const response = await ferry.fetch('/api_v1/targets/local/selections/00000000-0000-0000-0000-000000000000/zip/', { headers: ferry.auth() });
    await expectApiError(response, 404, 'not_found');
  });
});
