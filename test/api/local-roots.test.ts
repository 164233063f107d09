// /app/local-roots over real HTTP: a chosen folder becomes a target listed by
// GET /api_v1/targets/ at once (the cached list is renewed), browsable like `local`;
// a wrong path is a 400 with a sentence; DELETE takes the target away.
import { mkdir, realpath, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResourceSummary, TargetDescription } from '../../shared/api.js';
import { expectApiError, startFerry, type Ferry } from './harness.js';

let ferry: Ferry;
let chosen: string;
beforeAll(async () => {
  ferry = await startFerry();
  await mkdir(path.join(ferry.root, 'Field Data'), { recursive: true });
  chosen = await realpath(path.join(ferry.root, 'Field Data')); // the core answers resolved paths (macOS: /private/tmp)
  await writeFile(path.join(chosen, 'survey.csv'), 'a,b\n');
});
afterAll(async () => ferry?.close());

const json = (body: unknown) => ({ body: JSON.stringify(body), headers: ferry.bearer({ 'content-type': 'application/json' }) });
const targetNames = async () => ((await (await ferry.fetch('/api_v1/targets/')).json()) as TargetDescription[]).map((t) => t.name);

describe('/app/local-roots', () => {
  it('needs the access key', async () => {
    await expectApiError(await ferry.fetch('/app/local-roots'), 401, 'unauthorized');
    await expectApiError(await ferry.fetch('/app/local-roots', { method: 'PUT', body: JSON.stringify({ path: chosen }), headers: { 'content-type': 'application/json' } }), 401, 'unauthorized');
  });

  it('refuses a path that is not a folder with a sentence', async () => {
    const answer = await expectApiError(await ferry.fetch('/app/local-roots', { method: 'PUT', ...json({ path: path.join(chosen, 'survey.csv') }) }), 400, 'bad_request');
    expect(answer.error).toMatch(/is a file/);
  });

  it('adds, lists, serves, and removes a chosen folder', async () => {
    expect(await targetNames()).toEqual(['local']); // the list is cached from here on
    const put = await ferry.fetch('/app/local-roots', { method: 'PUT', ...json({ path: chosen, label: 'Field data' }) });
    expect(put.status).toBe(200);
    expect(await put.json()).toEqual({ name: 'local-field-data', label: 'Field data', path: chosen });
    expect(await (await ferry.fetch('/app/local-roots', { headers: ferry.bearer() })).json()).toEqual({
      workspace: ferry.workspace,
      roots: [{ name: 'local-field-data', label: 'Field data', path: chosen }],
    });
    expect(await targetNames()).toEqual(['local', 'local-field-data']);
    const listing = (await (await ferry.fetch('/api_v1/targets/local-field-data/resources/?container=None', { headers: ferry.auth() })).json()) as ResourceSummary[];
    expect(listing.map((r) => r.title)).toEqual(['survey.csv']);

    expect((await ferry.fetch('/app/local-roots/local-field-data', { method: 'DELETE', headers: ferry.bearer() })).status).toBe(204);
    expect(await targetNames()).toEqual(['local']);
    await expectApiError(await ferry.fetch('/app/local-roots/local-field-data', { method: 'DELETE', headers: ferry.bearer() }), 404, 'target_not_found');
  });
});
