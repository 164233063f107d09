// Transfer (extension) between two local folders via the JSON POST: no ZIP in between.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Acknowledgement, ResourceSummary } from '../../shared/api.js';
import { LocalTarget } from '../../electron/core/targets/local/index.js';
import { expectApiError, findByPath, renamed, snapshotTree, startFerry, waitForJob, writeTree, type Ferry } from './harness.js';

let ferry: Ferry;
let otherRoot: string;
beforeAll(async () => {
  ferry = await startFerry({
    targets: (config) => {
      otherRoot = path.join(path.dirname(config.workspace), 'other');
      return [new LocalTarget({ root: config.workspace }), renamed(new LocalTarget({ root: otherRoot }), 'other', 'Other folder')];
    },
  });
  await writeTree(ferry.workspace, { 'Project/a.txt': 'a\n', 'Project/sub/ü b.txt': 'unicode\n', 'Single.txt': 'single\n' });
  await writeTree(otherRoot, { 'Inbox/existing.txt': 'existing\n' });
});
afterAll(async () => ferry?.close());

async function list(target: string): Promise<ResourceSummary[]> {
  return (await (await ferry.fetch(`/api_v1/targets/${target}/resources/`, { headers: ferry.auth() })).json()) as ResourceSummary[];
}

async function transfer(into: string | null, sourceId: string, headers = ferry.auth({ 'duplicate-file-action': 'ignore' })): Promise<Response> {
  const where = into === null ? '/api_v1/targets/other/resources/' : `/api_v1/targets/other/resources/${encodeURIComponent(into)}/`;
  return ferry.fetch(where, {
    method: 'POST',
    body: JSON.stringify({ source_target_name: 'local', source_resource_id: sourceId }),
    headers: { ...headers, 'content-type': 'application/json' },
  });
}

describe('POST with a JSON body {source_target_name, source_resource_id}', () => {
  it('copies a folder into a folder of another target', async () => {
    const project = findByPath(await list('local'), 'Project')!;
    const inbox = findByPath(await list('other'), 'Inbox')!;
    const response = await transfer(inbox.id, project.id);
    expect(response.status, await response.clone().text()).toBe(202);
    const ack = (await response.json()) as Acknowledgement;
    expect(response.headers.get('location')).toBe(`/api_v1/jobs/${ack.ticket_number}/`);
    const job = await waitForJob(ferry, ack.ticket_number);
    expect(job.status, job.error ?? '').toBe('succeeded');
    expect(job).toMatchObject({ kind: 'transfer', target: 'other', resource_id: inbox.id, source: { target: 'local', resource_id: project.id } });
    expect(job.report!.resources_created).toEqual(expect.arrayContaining(['Project/a.txt', 'Project/sub/ü b.txt']));
    expect(await readFile(path.join(otherRoot, 'Inbox/Project/sub/ü b.txt'), 'utf8')).toBe('unicode\n');
    expect(await readFile(path.join(otherRoot, 'Inbox/existing.txt'), 'utf8')).toBe('existing\n');
  });

  it('copies a folder to the top level as a new resource', async () => {
    const project = findByPath(await list('local'), 'Project')!;
    const response = await transfer(null, project.id);
    const job = await waitForJob(ferry, ((await response.json()) as Acknowledgement).ticket_number);
    expect(job.status, job.error ?? '').toBe('succeeded');
    expect(job.report!.new_resource).toMatchObject({ title: 'Project' });
    expect(await readFile(path.join(otherRoot, 'Project/a.txt'), 'utf8')).toBe('a\n');
  });

  it('refuses what is wrong before starting a job', async () => {
    const project = findByPath(await list('local'), 'Project')!;
    const before = await snapshotTree(otherRoot);
    await expectApiError(await transfer(null, project.id, ferry.auth()), 400, 'invalid_duplicate_action');
    await expectApiError(await transfer(null, project.id, { 'duplicate-file-action': 'ignore', 'service-destination-token': ferry.key }), 401, 'unauthorized');
    await expectApiError(await transfer(null, 'loc_bm9wZQ'), 404, 'resource_not_found');
    await expectApiError(
      await ferry.fetch('/api_v1/targets/other/resources/', {
        method: 'POST',
        body: JSON.stringify({ source_target_name: 'nowhere', source_resource_id: 'x' }),
        headers: ferry.auth({ 'duplicate-file-action': 'ignore', 'content-type': 'application/json' }),
      }),
      404,
      'target_not_found',
    );
    const missing = await expectApiError(
      await ferry.fetch('/api_v1/targets/other/resources/', {
        method: 'POST',
        body: JSON.stringify({ source_target_name: 'local' }),
        headers: ferry.auth({ 'duplicate-file-action': 'ignore', 'content-type': 'application/json' }),
      }),
      400,
      'bad_request',
    );
    expect(missing.error).toContain('source_resource_id');
    expect(await snapshotTree(otherRoot)).toEqual(before);
  });
});
