import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Job, ResourceDetail, ResourceSummary } from '../../shared/api.js';
import { LocalTarget } from '../../electron/core/targets/local/local-target.js';
import { createOfflineTarget } from '../../electron/core/targets/offline/index.js';
import { expectApiError, startFerry, waitForJob, type Ferry } from './harness.js';

// The offline library through the API: "keep offline" on a download, browsing the kept
// archive, verify jobs, and the refusal to upload into it.

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const md5 = (bytes: Buffer) => createHash('md5').update(bytes).digest('hex');

let ferry: Ferry;
const files = new Map<string, Buffer>();

beforeEach(async () => {
  ferry = await startFerry({ targets: (config) => [new LocalTarget({ root: config.workspace }), createOfflineTarget(config)] });
  files.clear();
  files.set('Survey/answers.csv', Buffer.from('id,answer\n1,yes\n'.repeat(500)));
  files.set('Survey/raw/scan.bin', randomBytes(300_000));
  files.set('Survey/raw/naïve name #1.txt', Buffer.from('unicode\n'));
  for (const [relative, bytes] of files) {
    await mkdir(path.dirname(path.join(ferry.workspace, relative)), { recursive: true });
    await writeFile(path.join(ferry.workspace, relative), bytes);
  }
});

afterEach(async () => {
  await ferry.close();
});

async function list(target: string, container?: string): Promise<ResourceSummary[]> {
  const query = container === undefined ? '' : `?container=${encodeURIComponent(container)}`;
  const response = await ferry.fetch(`/api_v1/targets/${target}/resources/${query}`, { headers: ferry.auth() });
  expect(response.status).toBe(200);
  return (await response.json()) as ResourceSummary[];
}

async function detail(target: string, id: string): Promise<ResourceDetail> {
  const response = await ferry.fetch(`/api_v1/targets/${target}/resources/${encodeURIComponent(id)}.json/`, { headers: ferry.auth() });
  expect(response.status).toBe(200);
  return (await response.json()) as ResourceDetail;
}

function pathOf(node: ResourceSummary, byId: Map<string, ResourceSummary>): string {
  const parent = byId.get(node.container);
  return parent ? `${pathOf(parent, byId)}/${node.title}` : node.title;
}

async function keepSurveyOffline(): Promise<Buffer> {
  const survey = (await list('local', 'None')).find((node) => node.title === 'Survey')!;
  const response = await ferry.fetch(`/api_v1/targets/local/resources/${encodeURIComponent(survey.id)}.zip/?keep=1`, { headers: ferry.auth() });
  expect(response.status).toBe(200);
  const body = Buffer.from(await response.arrayBuffer());
  // The copy is renamed into place right after the last byte; give the rename a moment.
  for (let i = 0; i < 50 && (await list('offline', 'None')).length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
  return body;
}

async function verify(archiveId: string): Promise<Job> {
  const response = await ferry.fetch(`/api_v1/targets/offline/resources/${archiveId}/verify/`, { method: 'POST', headers: ferry.auth() });
  expect(response.status).toBe(202);
  const { ticket_number: ticket } = (await response.json()) as { ticket_number: string };
  return waitForJob(ferry, ticket);
}

describe('offline library over the API', () => {
  it('keeps a download: the archive appears in the library with exactly the original tree and hashes', async () => {
    const body = await keepSurveyOffline();
    const libraryDir = path.join(ferry.dataDir, 'library');
    const kept = (await readdir(libraryDir)).filter((name) => !name.startsWith('.'));
    expect(kept).toHaveLength(1);
    expect(await readFile(path.join(libraryDir, kept[0]!))).toEqual(body);

    const everything = await list('offline');
    const byId = new Map(everything.map((node) => [node.id, node]));
    const tops = everything.filter((node) => node.container === 'None');
    expect(tops.map((node) => node.title)).toEqual(['Survey']);
    // the archive is titled Survey and shows the payload folder data/Survey/ as itself: Survey once
    const filePaths = everything.filter((node) => node.kind === 'item').map((node) => pathOf(node, byId));
    expect(filePaths.sort()).toEqual([...files.keys()].sort());
    expect(everything.filter((node) => node.title === 'Survey')).toHaveLength(1);
    for (const node of everything.filter((candidate) => candidate.kind === 'item')) {
      const bytes = files.get(pathOf(node, byId))!;
      expect((await detail('offline', node.id)).hashes).toEqual({ md5: md5(bytes), sha256: sha256(bytes) });
    }
    const archive = await detail('offline', tops[0]!.id);
    expect(archive.extra).toMatchObject({ state: 'ok', format: 'bagit', source: { target: 'local' } });
  });

  it('verifies a kept archive, and reports a flipped byte for that file only', async () => {
    await keepSurveyOffline();
    const [archive] = await list('offline', 'None');
    const first = await verify(archive!.id);
    expect(first.status).toBe('succeeded');
    expect(first.report?.failed_fixity).toEqual([]);
    expect(first.report?.verified).toHaveLength(3);

    const libraryDir = path.join(ferry.dataDir, 'library');
    const [name] = (await readdir(libraryDir)).filter((entry) => !entry.startsWith('.'));
    const zip = await readFile(path.join(libraryDir, name!));
    const scan = files.get('Survey/raw/scan.bin')!;
    const at = zip.indexOf(scan.subarray(0, 64));
    zip[at + 5000] = zip[at + 5000]! ^ 0x80;
    await writeFile(path.join(libraryDir, name!), zip);

    const second = await verify(archive!.id);
    // a verification that found a failure does not succeed; the other files verified
    expect(second.status).toBe('completed_with_errors');
    expect(second.report?.failed_files).toEqual([expect.objectContaining({ path: 'Survey/raw/scan.bin', stage: 'verify' })]);
    expect(new Set(second.report?.failed_fixity.map((failure) => failure.path))).toEqual(new Set(['Survey/raw/scan.bin']));
    expect(second.report?.verified?.sort()).toEqual(['Survey/answers.csv', 'Survey/raw/naïve name #1.txt']);
    const scanNode = (await list('offline')).find((node) => node.title === 'scan.bin')!;
    const scanDetail = await detail('offline', scanNode.id);
    expect(scanDetail.extra.fixity).toMatchObject({ state: 'failed', algorithm: expect.any(String) });
    // hashes are those of the bytes as they are now; the manifest's are the expected ones
    const changed = Buffer.from(scan);
    changed[5000] = changed[5000]! ^ 0x80;
    expect(scanDetail.hashes).toEqual({ md5: md5(changed), sha256: sha256(changed) });
    expect(second.report?.failed_fixity.find((failure) => failure.algorithm === 'sha256')).toMatchObject({ expected: sha256(scan), actual: sha256(changed) });
  });

  it('leaves nothing in the library when the client goes away mid-download', async () => {
    await writeFile(path.join(ferry.workspace, 'Survey', 'raw', 'big.bin'), randomBytes(64 * 1024 * 1024));
    const survey = (await list('local', 'None')).find((node) => node.title === 'Survey')!;
    const controller = new AbortController();
    const response = await ferry.fetch(`/api_v1/targets/local/resources/${encodeURIComponent(survey.id)}.zip/?keep=1`, { headers: ferry.auth(), signal: controller.signal });
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    await reader.cancel().catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await readdir(path.join(ferry.dataDir, 'library'))).toEqual([]);
    expect(await list('offline', 'None')).toEqual([]);
  });

  it('refuses uploads with 405, and verify on a target that cannot with 405', async () => {
    const form = new FormData();
    form.set('service-file', new Blob([Buffer.from('PK\x05\x06' + '\0'.repeat(18), 'latin1')]), 'x.zip');
    const upload = await ferry.fetch('/api_v1/targets/offline/resources/', { method: 'POST', headers: ferry.auth({ 'duplicate-file-action': 'ignore' }), body: form });
    await expectApiError(upload, 405, 'action_not_supported');
    const survey = (await list('local', 'None')).find((node) => node.title === 'Survey')!;
    const refused = await ferry.fetch(`/api_v1/targets/local/resources/${survey.id}/verify/`, { method: 'POST', headers: ferry.auth() });
    await expectApiError(refused, 405, 'action_not_supported');
  });
});
