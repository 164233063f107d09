// Check (extension): a transfer local → local, then POST …/check/ compares the two resources
// over real HTTP; damaging, adding and removing files in the destination is reported exactly.
import { createHash } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Acknowledgement, CheckReport, Job, ResourceSummary } from '../../shared/api.js';
import { LocalTarget } from '../../electron/core/targets/local/index.js';
import { expectApiError, findByPath, renamed, startFerry, waitForJob, writeTree, type Ferry } from './harness.js';

let ferry: Ferry;
let otherRoot: string;
const FILES = { 'Survey/a.txt': 'alpha\n', 'Survey/sub/b.csv': 'x,y\n1,2\n', 'Survey/sub/c.bin': Buffer.alloc(300_000, 7), 'Survey/empty/.keep': '' };

beforeAll(async () => {
  ferry = await startFerry({
    targets: (config) => {
      otherRoot = path.join(path.dirname(config.workspace), 'other');
      const sealed = renamed(new LocalTarget({ root: config.workspace }), 'sealed', 'Sealed folder');
      sealed.info.supported_actions = { ...sealed.info.supported_actions, resource_download: false };
      return [new LocalTarget({ root: config.workspace }), renamed(new LocalTarget({ root: otherRoot }), 'other', 'Other folder'), sealed];
    },
  });
  await writeTree(ferry.workspace, FILES);
  await writeTree(otherRoot, { 'Inbox/.keep': '' });
});
afterAll(async () => ferry?.close());

async function list(target: string): Promise<ResourceSummary[]> {
  return (await (await ferry.fetch(`/api_v1/targets/${target}/resources/`, { headers: ferry.auth() })).json()) as ResourceSummary[];
}

function postCheck(destinationId: string, body: Record<string, unknown>, headers = ferry.auth()): Promise<Response> {
  return ferry.fetch(`/api_v1/targets/other/resources/${encodeURIComponent(destinationId)}/check/`, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { ...headers, 'content-type': 'application/json' },
  });
}

async function check(destinationPath: string, readBytes?: boolean): Promise<{ job: Job; check: CheckReport }> {
  const source = findByPath(await list('local'), 'Survey')!;
  const destination = findByPath(await list('other'), destinationPath)!;
  const response = await postCheck(destination.id, { source_target_name: 'local', source_resource_id: source.id, ...(readBytes === undefined ? {} : { read_bytes: readBytes }) });
  expect(response.status, await response.clone().text()).toBe(202);
  const ack = (await response.json()) as Acknowledgement;
  expect(response.headers.get('location')).toBe(`/api_v1/jobs/${ack.ticket_number}/`);
  const job = await waitForJob(ferry, ack.ticket_number);
  expect(job).toMatchObject({ kind: 'check', target: 'other', resource_id: destination.id, source: { target: 'local', resource_id: source.id } });
  return { job, check: job.report!.check! };
}

const sha256 = (bytes: string | Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('a check after a transfer', () => {
  beforeAll(async () => {
    const source = findByPath(await list('local'), 'Survey')!;
    const inbox = findByPath(await list('other'), 'Inbox')!;
    const response = await ferry.fetch(`/api_v1/targets/other/resources/${encodeURIComponent(inbox.id)}/`, {
      method: 'POST',
      body: JSON.stringify({ source_target_name: 'local', source_resource_id: source.id }),
      headers: ferry.auth({ 'duplicate-file-action': 'ignore', 'content-type': 'application/json' }),
    });
    const job = await waitForJob(ferry, ((await response.json()) as Acknowledgement).ticket_number);
    expect(job.status, job.error ?? '').toBe('succeeded');
  });

  it('finds every file matched, and says how each was compared', async () => {
    // the source's files were never hashed (the destination's were, as they were written): by size
    const bySize = await check('Inbox/Survey');
    expect(bySize.job.status, bySize.job.error ?? '').toBe('succeeded');
    expect(bySize.check).toEqual({
      matched: 4,
      missing: [],
      extra: [],
      different: [],
      not_comparable: [],
      compared_by: { hash: 0, size: 4 },
      algorithms: {},
      read_bytes: false,
      read: { files: 0, bytes: 0 },
    });
    // with read_bytes the source's bytes are read and hashed as the destination reports them
    const byHash = await check('Inbox/Survey', true);
    expect(byHash.job.status, byHash.job.error ?? '').toBe('succeeded');
    expect(byHash.check).toMatchObject({ matched: 4, compared_by: { hash: 4, size: 0 }, algorithms: { sha256: 4 }, read_bytes: true });
    expect(byHash.check.read).toEqual({ files: 4, bytes: 6 + 8 + 300_000 });
    expect(byHash.job.progress).toEqual({ files_done: 4, files_total: 4, bytes_done: 300_014, bytes_total: 300_014 });
  });

  it('reports a damaged, an added and a removed file exactly, and does not succeed', async () => {
    const copy = path.join(otherRoot, 'Inbox/Survey');
    await writeFile(path.join(copy, 'a.txt'), 'ALPHA\n'); // same size, other bytes
    await writeFile(path.join(copy, 'sub/b.csv'), 'x,y\n1,2\n3,4\n'); // other size
    await writeFile(path.join(copy, 'sub/new.txt'), 'new\n');
    await rm(path.join(copy, 'sub/c.bin'));

    const bySize = await check('Inbox/Survey');
    expect(bySize.job.status).toBe('completed_with_errors');
    expect(bySize.check).toMatchObject({
      matched: 2, // a.txt's size agrees, and nothing else was compared: counted under compared_by.size
      missing: ['Survey/sub/c.bin'],
      extra: ['Survey/sub/new.txt'],
      different: [{ path: 'Survey/sub/b.csv', by: 'size', source: 8, destination: 12 }],
      compared_by: { hash: 0, size: 3 },
    });
    expect(bySize.job.error).toMatch(/1 missing.*1 extra.*1 different/);

    const byHash = await check('Inbox/Survey', true);
    expect(byHash.job.status).toBe('completed_with_errors');
    expect(byHash.check).toMatchObject({
      matched: 1,
      missing: ['Survey/sub/c.bin'],
      extra: ['Survey/sub/new.txt'],
      different: [
        { path: 'Survey/a.txt', by: 'hash', algorithm: 'sha256', source: sha256('alpha\n'), destination: sha256('ALPHA\n'), read: expect.arrayContaining(['source']) },
        { path: 'Survey/sub/b.csv', by: 'size', source: 8, destination: 12 },
      ],
      not_comparable: [],
    });
    expect(byHash.job.error).toMatch(/2 different/);
  });

  it('compares a resource under another title file for file, and reports whole folders missing', async () => {
    await writeTree(otherRoot, { 'Renamed/a.txt': 'alpha\n', 'Renamed/sub/b.csv': 'x,y\n1,2\n', 'Renamed/sub/c.bin': Buffer.alloc(300_000, 7), 'Renamed/more/d.txt': 'd' });
    const result = await check('Renamed');
    expect(result.check).toMatchObject({ matched: 3, missing: ['Survey/empty', 'Survey/empty/.keep'], extra: ['Survey/more', 'Survey/more/d.txt'], different: [] });
  });

  it('refuses what is wrong before starting a job', async () => {
    const source = findByPath(await list('local'), 'Survey')!;
    const destination = findByPath(await list('other'), 'Inbox/Survey')!;
    await expectApiError(await postCheck(destination.id, { source_target_name: 'local' }), 400, 'bad_request');
    await expectApiError(await postCheck(destination.id, { source_target_name: 'local', source_resource_id: source.id, read_bytes: 'yes' }), 400, 'bad_request');
    await expectApiError(await postCheck(destination.id, { source_target_name: 'nowhere', source_resource_id: source.id }), 404, 'target_not_found');
    await expectApiError(await postCheck(destination.id, { source_target_name: 'local', source_resource_id: 'loc_bm9wZQ' }), 404, 'resource_not_found');
    await expectApiError(await postCheck('loc_bm9wZQ', { source_target_name: 'local', source_resource_id: source.id }), 404, 'resource_not_found');
    await expectApiError(
      await postCheck(destination.id, { source_target_name: 'local', source_resource_id: source.id }, { 'service-destination-token': ferry.key }),
      401,
      'unauthorized',
    );
    await expectApiError(await postCheck(destination.id, { source_target_name: 'sealed', source_resource_id: source.id }), 405, 'action_not_supported');
  });

  it('is not retried file by file: it is started again', async () => {
    const { job } = await check('Inbox/Survey');
    expect(job.report!.failed_files).toEqual([]);
    await expectApiError(await ferry.fetch(`/api_v1/jobs/${job.ticket_number}/retry/`, { method: 'POST', headers: ferry.auth() }), 409, 'retry_nothing');
  });
});

it('is described in openapi.json: the route, the job kind and its report', async () => {
  const spec = (await (await ferry.fetch('/api_v1/openapi.json')).json()) as {
    paths: Record<string, Record<string, { responses: Record<string, unknown>; requestBody?: { content: Record<string, { schema: { properties: Record<string, unknown> } }> } }>>;
    components: { schemas: Record<string, { properties: Record<string, { enum?: string[]; properties?: Record<string, { required?: string[] }> }> }> };
  };
  const route = spec.paths['/api_v1/targets/{target}/resources/{resource}/check/']!.post!;
  expect(Object.keys(route.responses)).toContain('202');
  expect(Object.keys(route.requestBody!.content['application/json']!.schema.properties).sort()).toEqual(['read_bytes', 'source_resource_id', 'source_target_name']);
  const job = spec.components.schemas.Job!;
  expect(job.properties.kind!.enum).toContain('check');
  expect(job.properties.report!.properties!.check!.required).toEqual(expect.arrayContaining(['missing', 'extra', 'different', 'compared_by']));
});
