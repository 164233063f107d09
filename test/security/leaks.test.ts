// Nothing secret or machine-specific leaves through the API: every route is made to fail in
// its usual ways (and to succeed), and every response — status line to body, SSE events and
// openapi.json included — is searched for the access key, a remote token, the data and
// workspace folders and the home directory. Job files on disk hold token digests only.
import { chmod, mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Acknowledgement, ResourceSummary } from '../../shared/api.js';
import { LocalTarget } from '../../electron/core/targets/local/local-target.js';
import { createOfflineTarget } from '../../electron/core/targets/offline/index.js';
import { rawZip } from '../../electron/core/zip/testing/raw-zip.js';
import { renamed, startFerry, uploadForm, waitForJob, writeTree, type Ferry } from '../api/harness.js';

const REMOTE_TOKEN = 'remote-token-0123456789abcdef';
let ferry: Ferry;
const responses: { what: string; text: string }[] = [];

beforeAll(async () => {
  ferry = await startFerry({
    targets: (config) => [
      new LocalTarget({ root: config.workspace }),
      createOfflineTarget(config),
      renamed(new LocalTarget({ root: path.join(config.workspace, 'no-such-folder') }), 'gone', 'Gone'),
      renamed(new LocalTarget({ root: path.join(config.workspace, 'Top.txt') }), 'afile', 'A file as root'),
    ],
  });
  await writeTree(ferry.workspace, { 'Data/a.txt': 'a\n', 'Data/sub/b.txt': 'b\n', 'Top.txt': 'top\n' });
  // a broken and a hostile ZIP in the offline library
  const library = path.join(ferry.dataDir, 'library');
  await mkdir(library, { recursive: true });
  await writeFile(path.join(library, 'broken.zip'), 'not a zip at all');
  await writeFile(path.join(library, 'hostile.zip'), rawZip([{ name: '../../escape.txt', data: Buffer.from('x') }]));
});
afterAll(async () => ferry?.close());

/** Every string that must never appear in a response. */
function forbidden(): string[] {
  const home = os.homedir();
  return [ferry.key, REMOTE_TOKEN, ferry.root, ferry.dataDir, ferry.workspace, os.tmpdir() + path.sep, ...(home.length > 1 ? [home + path.sep] : [])];
}

async function record(what: string, response: Response): Promise<Response> {
  const head = [...response.headers.entries()].map(([name, value]) => `${name}: ${value}`).join('\n');
  const body = response.headers.get('content-type')?.includes('zip') ? '' : await response.clone().text();
  responses.push({ what, text: `${response.status}\n${head}\n\n${body}` });
  return response;
}

const get = (what: string, route: string, headers: Record<string, string> = {}) => ferry.fetch(route, { headers }).then((r) => record(what, r));

async function idsOf(target: string): Promise<ResourceSummary[]> {
  const response = await get(`list ${target}`, `/api_v1/targets/${target}/resources/`, ferry.auth());
  return response.ok ? ((await response.json()) as ResourceSummary[]) : [];
}

describe('no secret and no absolute path in any response', () => {
  it('collects the responses of every route, failing and succeeding', async () => {
    const auth = ferry.auth();
    const remote = { 'service-source-token': REMOTE_TOKEN, 'service-destination-token': REMOTE_TOKEN, authorization: `Bearer ${REMOTE_TOKEN}` };
    // targets, openapi, unknown routes
    await get('targets', '/api_v1/targets/');
    await get('one target', '/api_v1/target/local/');
    await get('unknown target', '/api_v1/target/nope/');
    await get('openapi', '/api_v1/openapi.json');
    await get('404', '/api_v1/nothing-here/');
    // listings: missing, wrong and right tokens; broken roots
    for (const target of ['local', 'offline', 'gone', 'afile', 'nope']) {
      await get(`list ${target} no token`, `/api_v1/targets/${target}/resources/`);
      await get(`list ${target} wrong token`, `/api_v1/targets/${target}/resources/`, remote);
      await get(`list ${target}`, `/api_v1/targets/${target}/resources/`, auth);
      await get(`list ${target} bad container`, `/api_v1/targets/${target}/resources/?container=loc_Li4`, auth);
    }
    // keep a download offline, so the offline target has a real archive too
    const local = await idsOf('local');
    const data = local.find((node) => node.title === 'Data')!;
    await (await get('download keep', `/api_v1/targets/local/resources/${data.id}.zip/?keep=1`, auth)).arrayBuffer();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const offline = await idsOf('offline');
    expect(offline.length).toBeGreaterThan(0);
    // details and downloads of everything, and of ids that name nothing or try to escape
    const hostileIds = ['loc_Li4', 'loc_Li4vLi4', 'loc_L2V0Yw', 'loc_', 'x', '%252e%252e', '..', 'zip_000000000000000000000000', 'zip_000000000000000000000000-Li4'];
    // (an id that is itself a path would only be echoed back: not a leak, so none here)
    for (const [target, nodes] of [['local', local], ['offline', offline], ['gone', []], ['afile', []]] as const) {
      const ids = [...nodes.map((node) => encodeURIComponent(node.id)), ...hostileIds];
      for (const id of ids) {
        await get(`detail ${target} ${id}`, `/api_v1/targets/${target}/resources/${id}.json/`, auth);
        await get(`detail ${target} ${id} no token`, `/api_v1/targets/${target}/resources/${id}/`);
        const download = await get(`download ${target} ${id}`, `/api_v1/targets/${target}/resources/${id}.zip/`, auth);
        await download.arrayBuffer().catch(() => undefined);
      }
    }
    // uploads and transfers that fail at once or as jobs
    const post = (what: string, route: string, init: RequestInit) => ferry.fetch(route, { method: 'POST', ...init }).then((r) => record(what, r));
    const hostile = rawZip([{ name: 'Data2/../../../escape.txt', data: Buffer.from('x') }]);
    const tickets: string[] = [];
    for (const [what, route, body, headers] of [
      ['upload hostile', '/api_v1/targets/local/resources/', uploadForm(hostile), auth],
      ['upload not a zip', '/api_v1/targets/local/resources/', uploadForm(Buffer.from('nope')), auth],
      ['upload into a file', `/api_v1/targets/local/resources/${local.find((n) => n.title === 'Top.txt')!.id}/`, uploadForm(hostile), auth],
      ['upload into gone', '/api_v1/targets/gone/resources/', uploadForm(rawZip([{ name: 'F/x.txt', data: Buffer.from('x') }])), auth],
      ['upload remote token', '/api_v1/targets/local/resources/', uploadForm(hostile), remote],
      ['upload offline', '/api_v1/targets/offline/resources/', uploadForm(hostile), auth],
      ['transfer missing', '/api_v1/targets/local/resources/', JSON.stringify({ source_target_name: 'local', source_resource_id: 'loc_bm9wZQ' }), { ...auth, 'content-type': 'application/json' }],
      ['transfer gone', '/api_v1/targets/gone/resources/', JSON.stringify({ source_target_name: 'local', source_resource_id: data.id }), { ...auth, 'content-type': 'application/json' }],
      ['transfer ok', '/api_v1/targets/local/resources/', JSON.stringify({ source_target_name: 'local', source_resource_id: data.id }), { ...auth, 'content-type': 'application/json' }],
      ['transfer bad json', '/api_v1/targets/local/resources/', `{"source_target_name": "${ferry.root}"`, { ...auth, 'content-type': 'application/json' }],
      ['verify local', `/api_v1/targets/local/resources/${data.id}/verify/`, undefined, auth],
      ['verify offline', `/api_v1/targets/offline/resources/${offline[0]!.id}/verify/`, undefined, auth],
    ] as [string, string, RequestInit['body'], Record<string, string>][]) {
      const response = await post(what, route, { body, headers: { ...headers, 'duplicate-file-action': 'ignore' } });
      if (response.status === 202) tickets.push(((await response.json()) as Acknowledgement).ticket_number);
    }
    expect(tickets.length).toBeGreaterThanOrEqual(3);
    for (const ticket of tickets) {
      await waitForJob(ferry, ticket);
      await get(`job ${ticket}`, `/api_v1/jobs/${ticket}/`, ferry.bearer());
      await get(`job ${ticket} wrong token`, `/api_v1/jobs/${ticket}/`, remote);
      await ferry.fetch(`/api_v1/jobs/${ticket}/`, { method: 'DELETE', headers: ferry.bearer() }).then((r) => record(`cancel ${ticket}`, r));
    }
    await get('jobs', '/api_v1/jobs/', ferry.bearer());
    await get('jobs wrong key', '/api_v1/jobs/', remote);
    await get('job missing', '/api_v1/jobs/no-such-ticket/', ferry.bearer());
    // /app/*
    await get('session', '/app/session', ferry.bearer());
    await get('session wrong key', '/app/session', remote);
    for (const [method, route, body] of [
      ['PUT', '/app/tokens/local', { token: REMOTE_TOKEN }],
      ['PUT', '/app/tokens/nope', { token: REMOTE_TOKEN }],
      ['POST', '/app/tokens/local/test', {}],
      ['POST', '/app/tokens/gone/test', {}],
      ['POST', '/app/tokens/afile/test', { token: REMOTE_TOKEN }],
      ['DELETE', '/app/tokens/local', undefined],
    ] as const) {
      await ferry
        .fetch(route, { method, headers: ferry.bearer(body ? { 'content-type': 'application/json' } : {}), body: body ? JSON.stringify(body) : undefined })
        .then((r) => record(`${method} ${route}`, r));
    }
    expect(responses.length).toBeGreaterThan(100);
  });

  it('no collected response contains the key, a token, or a path of this machine', () => {
    const leaks: string[] = [];
    for (const { what, text } of responses) {
      for (const secret of forbidden()) if (text.includes(secret)) leaks.push(`${what}: contains ${secret === ferry.key ? 'the access key' : secret}\n${text.slice(0, 600)}`);
    }
    expect(leaks).toEqual([]);
  });

  it('job files on disk hold token digests only', async () => {
    const jobsDir = path.join(ferry.dataDir, 'jobs');
    const names = await readdir(jobsDir).catch(() => [] as string[]);
    expect(names.length).toBeGreaterThan(0);
    for (const name of names) {
      const text = await readFile(path.join(jobsDir, name), 'utf8').catch(() => '');
      expect(text).not.toContain(ferry.key);
      expect(text).not.toContain(REMOTE_TOKEN);
    }
  });
});

describe('the event stream', () => {
  it('carries job changes without any token', async () => {
    const controller = new AbortController();
    const events = await ferry.fetch('/api_v1/jobs/events/', { headers: ferry.bearer(), signal: controller.signal });
    expect(events.status).toBe(200);
    const reader = events.body!.getReader();
    const local = await idsOf('local');
    const data = local.find((node) => node.title === 'Data')!;
    await ferry.fetch('/api_v1/targets/local/resources/', {
      method: 'POST',
      headers: ferry.auth({ 'content-type': 'application/json', 'duplicate-file-action': 'update' }),
      body: JSON.stringify({ source_target_name: 'local', source_resource_id: data.id }),
    });
    let text = '';
    const deadline = Date.now() + 10_000;
    while (!/"status":"(succeeded|failed)"/.test(text) && Date.now() < deadline) {
      const { value, done } = await reader.read();
      if (done) break;
      text += Buffer.from(value).toString('utf8');
    }
    controller.abort();
    expect(text).toContain('event: job');
    for (const secret of forbidden()) expect(text).not.toContain(secret);
  });
});

describe('a folder the server may not read', () => {
  it.skipIf(process.getuid?.() === 0)('is an error without its absolute path (skipped as root: root reads everything)', async () => {
    await writeTree(ferry.workspace, { 'Locked/inner/x.txt': 'x' });
    await chmod(path.join(ferry.workspace, 'Locked'), 0o000);
    try {
      const response = await get('list locked', '/api_v1/targets/local/resources/', ferry.auth());
      const text = await response.text();
      for (const secret of forbidden()) expect(text).not.toContain(secret);
    } finally {
      await chmod(path.join(ferry.workspace, 'Locked'), 0o755);
    }
  });
});
