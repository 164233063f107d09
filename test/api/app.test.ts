// /app/* (the desktop UI's routes) and remote-token resolution: header, stored token via
// the access key, and the messages when neither works.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResourceSummary } from '../../shared/api.js';
import { FerryError } from '../../electron/core/errors.js';
import { MemorySecretStore } from '../../electron/core/keychain/memory.js';
import { tokenAccount } from '../../electron/core/keychain/port.js';
import { fullActions, type Target } from '../../electron/core/target.js';
import { LocalTarget } from '../../electron/core/targets/local/index.js';
import { expectApiError, startFerry, type Ferry } from './harness.js';

/** A remote-style target that records which token each call got. */
function cloudTarget(seen: string[]): Target {
  const node = { kind: 'container' as const, kind_name: 'folder' as const, id: 'project', container: null, title: 'Project' };
  return {
    info: { name: 'cloud', readable_name: 'Cloud', supported_actions: fullActions(false), supported_hash_algorithms: ['md5'], credential: 'remote' },
    async *list(ctx) {
      seen.push(ctx.token);
      if (ctx.token !== 'good-token') throw new FerryError(401, 'unauthorized', 'The Cloud token is invalid or expired.');
      yield node;
    },
    detail: async () => ({ ...node, date_created: null, date_modified: null, hashes: {}, extra: {} }),
    read: async () => {
      throw new Error('not used');
    },
    write: async () => {
      throw new Error('not used');
    },
  };
}

let ferry: Ferry;
const seen: string[] = [];
const secrets = new MemorySecretStore();
beforeAll(async () => {
  ferry = await startFerry({ secrets, targets: (config) => [new LocalTarget({ root: config.workspace }), cloudTarget(seen)] });
});
afterAll(async () => ferry?.close());

const session = async () => (await ferry.fetch('/app/session', { headers: ferry.bearer() })).json();

describe('/app/ routes', () => {
  it('need the access key as Bearer', async () => {
    await expectApiError(await ferry.fetch('/app/session'), 401, 'unauthorized');
    await expectApiError(await ferry.fetch('/app/session', { headers: { authorization: 'Bearer 00' } }), 401, 'unauthorized');
    await expectApiError(await ferry.fetch('/app/tokens/cloud', { method: 'PUT', body: '{"token":"x"}', headers: { 'content-type': 'application/json' } }), 401, 'unauthorized');
  });

  it('GET /app/session describes the version, keychain and targets', async () => {
    expect(await session()).toEqual({
      version: expect.stringMatching(/^\d+\.\d+\.\d+/),
      keychain: { persistent: false, description: 'memory (this run only)' },
      targets: [
        { name: 'local', readable_name: 'Local folders', credential: 'access-key', has_stored_token: false, can_verify: false },
        { name: 'cloud', readable_name: 'Cloud', credential: 'remote', has_stored_token: false, can_verify: false },
      ],
    });
  });

  it('stores, tests and forgets a token without ever sending it back', async () => {
    const put = await ferry.fetch('/app/tokens/cloud', { method: 'PUT', body: JSON.stringify({ token: 'good-token' }), headers: ferry.bearer({ 'content-type': 'application/json' }) });
    expect(put.status).toBe(204);
    expect(await put.text()).not.toContain('good-token');
    expect(await secrets.get(tokenAccount('cloud'))).toBe('good-token');
    expect(((await session()) as { targets: { has_stored_token: boolean }[] }).targets[1]!.has_stored_token).toBe(true);
    expect(JSON.stringify(await session())).not.toContain('good-token');

    const tested = await ferry.fetch('/app/tokens/cloud/test', { method: 'POST', headers: ferry.bearer() });
    expect(await tested.json()).toEqual({ ok: true });
    const bad = await ferry.fetch('/app/tokens/cloud/test', { method: 'POST', body: JSON.stringify({ token: 'bad' }), headers: ferry.bearer({ 'content-type': 'application/json' }) });
    const error = await expectApiError(bad, 401, 'unauthorized');
    expect(error.error).toContain('Cloud token is invalid');

    const localTest = await ferry.fetch('/app/tokens/local/test', { method: 'POST', headers: ferry.bearer() });
    expect(await localTest.json()).toEqual({ ok: true });

    const deleted = await ferry.fetch('/app/tokens/cloud', { method: 'DELETE', headers: ferry.bearer() });
    expect(deleted.status).toBe(204);
    expect(await secrets.get(tokenAccount('cloud'))).toBeNull();
    await expectApiError(await ferry.fetch('/app/tokens/cloud/test', { method: 'POST', headers: ferry.bearer() }), 400, 'bad_request');
  });

  it('refuses to store a token for an access-key target or an unknown one, and validates the body', async () => {
    const json = ferry.bearer({ 'content-type': 'application/json' });
    await expectApiError(await ferry.fetch('/app/tokens/local', { method: 'PUT', body: '{"token":"x"}', headers: json }), 400, 'bad_request');
    await expectApiError(await ferry.fetch('/app/tokens/nowhere', { method: 'PUT', body: '{"token":"x"}', headers: json }), 404, 'target_not_found');
    const invalid = await expectApiError(await ferry.fetch('/app/tokens/cloud', { method: 'PUT', body: '{"tok":"x"}', headers: json }), 400, 'bad_request');
    expect(invalid.error).toMatch(/token/);
  });
});

describe('remote token resolution', () => {
  it('uses the service-source-token header when sent', async () => {
    const response = await ferry.fetch('/api_v1/targets/cloud/resources/', { headers: { 'service-source-token': 'good-token' } });
    expect(response.status).toBe(200);
    expect(((await response.json()) as ResourceSummary[])[0]!.id).toBe('project');
    expect(seen.at(-1)).toBe('good-token');
  });

  it("passes the remote's own 401 on", async () => {
    const error = await expectApiError(await ferry.fetch('/api_v1/targets/cloud/resources/', { headers: { 'service-source-token': 'expired' } }), 401, 'unauthorized');
    expect(error.error).toBe('The Cloud token is invalid or expired.');
  });

  it('with Bearer <access key>, uses the stored token, or says none is stored', async () => {
    const none = await expectApiError(await ferry.fetch('/api_v1/targets/cloud/resources/', { headers: ferry.bearer() }), 401, 'unauthorized');
    expect(none.error).toBe('No Cloud token is stored; add one in Accounts or send service-source-token.');
    await secrets.set(tokenAccount('cloud'), 'good-token');
    const response = await ferry.fetch('/api_v1/targets/cloud/resources/', { headers: ferry.bearer() });
    expect(response.status).toBe(200);
    expect(seen.at(-1)).toBe('good-token');
    await expectApiError(await ferry.fetch('/api_v1/targets/cloud/resources/', { headers: { authorization: 'Bearer not-the-key' } }), 401, 'unauthorized');
  });

  it('with nothing, says what to send', async () => {
    const error = await expectApiError(await ferry.fetch('/api_v1/targets/cloud/resources/'), 401, 'unauthorized');
    expect(error.error).toMatch(/Cloud token in service-source-token/);
  });
});
