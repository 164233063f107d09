// 4.1, the single-target views, trailing slashes and openapi.json, over real HTTP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TargetDescription } from '../../shared/api.js';
import { fullActions, type Target } from '../../electron/core/target.js';
import { LocalTarget } from '../../electron/core/targets/local/index.js';
import { expectApiError, startFerry, type Ferry } from './harness.js';

/** A target that declines everything but listing, to see flags pass through untouched. */
function readOnlyTarget(): Target {
  return {
    info: {
      name: 'shelf',
      readable_name: 'A shelf',
      supported_actions: { ...fullActions(false), resource_download: false },
      supported_hash_algorithms: ['sha1'],
      credential: 'access-key',
    },
    async *list() {},
    detail: async () => {
      throw new Error('not used');
    },
    read: async () => {
      throw new Error('not used');
    },
    write: async () => {
      throw new Error('not used');
    },
  };
}

let ferry: Ferry;
beforeAll(async () => {
  ferry = await startFerry({ targets: (config) => [new LocalTarget({ root: config.workspace }), readOnlyTarget()] });
});
afterAll(async () => ferry?.close());

describe('GET /api_v1/targets/', () => {
  it('lists every target, field for field, with absolute detail links on the base the client used', async () => {
    for (const base of [ferry.url, `http://localhost:${ferry.port}`]) {
      const response = await fetch(`${base}/api_v1/targets/`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      const targets = (await response.json()) as TargetDescription[];
      expect(targets).toEqual([
        {
          name: 'local',
          readable_name: 'Local folders',
          supported_actions: { resource_collection: true, resource_detail: true, resource_download: true, resource_upload: true },
          supported_hash_algorithms: ['md5', 'sha256'],
          detail: `${base}/api_v1/target/local/`,
          supported_operations: { delete: true, rename: true, move: true, create_folder: true },
          capabilities: { search: true, folder_modes: [] },
          keeps_metadata: false,
        },
        {
          name: 'shelf',
          readable_name: 'A shelf',
          supported_actions: { resource_collection: true, resource_detail: true, resource_download: false, resource_upload: false },
          supported_hash_algorithms: ['sha1'],
          detail: `${base}/api_v1/target/shelf/`,
          supported_operations: { delete: false, rename: false, move: false, create_folder: false },
          capabilities: { search: false, folder_modes: [] },
          keeps_metadata: false,
        },
      ]);
      // the contract's five fields, plus the additive supported_operations, capabilities and keeps_metadata (docs/api.md)
      for (const target of targets) expect(Object.keys(target).sort()).toEqual(['capabilities', 'detail', 'keeps_metadata', 'name', 'readable_name', 'supported_actions', 'supported_hash_algorithms', 'supported_operations']);
    }
  });

  it('serves the same without the trailing slash', async () => {
    const a = await (await ferry.fetch('/api_v1/targets/')).json();
    const b = await (await ferry.fetch('/api_v1/targets')).json();
    expect(b).toEqual(a);
  });

  it("follows a target's detail link (singular /target/) and the plural form to that one Target", async () => {
    const [local] = (await (await ferry.fetch('/api_v1/targets/')).json()) as TargetDescription[];
    for (const link of [local!.detail, local!.detail.replace(/\/$/, ''), `${ferry.url}/api_v1/targets/local/`, `${ferry.url}/api_v1/targets/local`]) {
      const response = await fetch(link);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual(local);
    }
  });

  it('answers an unknown target with 404 target_not_found', async () => {
    await expectApiError(await ferry.fetch('/api_v1/target/nowhere/'), 404, 'target_not_found');
    await expectApiError(await ferry.fetch('/api_v1/targets/nowhere/resources/', { headers: ferry.auth() }), 404, 'target_not_found');
  });

  it('answers an unknown route with 404 in the same error shape', async () => {
    const body = await expectApiError(await ferry.fetch('/api_v1/no/such/thing'), 404, 'not_found');
    expect(body.error).toContain('/api_v1/no/such/thing');
    await expectApiError(await ferry.fetch('/api_v1/targets/', { method: 'DELETE' }), 404, 'not_found');
  });

  it('refuses actions a target declines with 405, naming the flag', async () => {
    const download = await expectApiError(await ferry.fetch('/api_v1/targets/shelf/resources/x.zip/', { headers: ferry.auth() }), 405, 'action_not_supported');
    expect(download.error).toContain('resource_download');
    const form = new FormData();
    form.append('service-file', new Blob(['PK\x03\x04']), 'a.zip');
    const upload = await expectApiError(
      await ferry.fetch('/api_v1/targets/shelf/resources/', { method: 'POST', body: form, headers: ferry.auth({ 'duplicate-file-action': 'ignore' }) }),
      405,
      'action_not_supported',
    );
    expect(upload.error).toContain('resource_upload');
  });
});

describe('GET /api_v1/openapi.json', () => {
  it('describes every route, with the contract shapes as named components', async () => {
    const response = await ferry.fetch('/api_v1/openapi.json');
    expect(response.status).toBe(200);
    const spec = (await response.json()) as {
      openapi: string;
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
      components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
    };
    expect(spec.openapi).toMatch(/^3\./);
    const operations = Object.entries(spec.paths).flatMap(([route, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${route}`));
    expect(operations.sort()).toEqual(
      [
        'GET /api_v1/targets/',
        'GET /api_v1/target/{target}/',
        'GET /api_v1/targets/{target}/',
        'GET /api_v1/targets/{target}/resources/',
        'GET /api_v1/targets/{target}/resources/{resource}/',
        'GET /api_v1/targets/{target}/resources/{resource}/metadata/',
        'GET /api_v1/targets/{target}/resources/{resource}/content/',
        'POST /api_v1/targets/{target}/resources/',
        'POST /api_v1/targets/{target}/resources/{resource}/',
        'POST /api_v1/targets/{target}/resources/{resource}/verify/',
        'POST /api_v1/targets/{target}/selections/',
        'GET /api_v1/targets/{target}/selections/{selection}/zip/',
        // file operations (docs/api.md "File operations")
        'DELETE /api_v1/targets/{target}/resources/{resource}/',
        'PATCH /api_v1/targets/{target}/resources/{resource}/',
        'POST /api_v1/targets/{target}/resources/{resource}/folders/',
        'POST /api_v1/targets/{target}/folders/',
        'GET /api_v1/trash/',
        'POST /api_v1/trash/{id}/restore/',
        'GET /api_v1/jobs/',
        'GET /api_v1/jobs/events/',
        'GET /api_v1/jobs/{ticket}/',
        'DELETE /api_v1/jobs/{ticket}/',
        'POST /api_v1/jobs/{ticket}/retry/',
        // the queue (docs/api.md "The job queue")
        'DELETE /api_v1/jobs/',
        'POST /api_v1/jobs/{ticket}/pause/',
        'POST /api_v1/jobs/{ticket}/resume/',
        'POST /api_v1/jobs/{ticket}/move/',
        'GET /api_v1/queue/',
        'PUT /api_v1/queue/',
        // a check job (docs/api.md "Check")
        'POST /api_v1/targets/{target}/resources/{resource}/check/',
        // the duplicates preview (docs/api.md "Duplicate files")
        'POST /api_v1/targets/{target}/resources/{resource}/conflicts/',
        'GET /api_v1/openapi.json',
        'GET /app/session',
        'PUT /app/tokens/{target}',
        'DELETE /app/tokens/{target}',
        'POST /app/tokens/{target}/test',
        'GET /app/local-roots',
        'PUT /app/local-roots',
        'DELETE /app/local-roots/{name}',
        'GET /app/rclone-remotes',
        'PUT /app/rclone-remotes/{name}',
        'DELETE /app/rclone-remotes/{name}',
      ].sort(),
    );
    for (const name of ['Target', 'ResourceSummary', 'ResourceDetail', 'Job', 'Error', 'Acknowledgement']) {
      expect(spec.components.schemas[name], name).toBeDefined();
    }
    expect(Object.keys(spec.components.schemas.ResourceDetail!.properties!).sort()).toEqual(
      ['date_created', 'date_modified', 'detail', 'download_url', 'extra', 'hashes', 'id', 'kind', 'kind_name', 'title'].filter((k) => k !== 'detail').sort(),
    );
    expect(JSON.stringify(spec.paths['/api_v1/targets/{target}/resources/']!.post!.responses['202'])).toContain('Acknowledgement');
  });
});
