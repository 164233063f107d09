/* eslint-disable @typescript-eslint/no-explicit-any -- assertions on parsed JSON bodies */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOsfEmulator, type OsfEmulator } from './emulator.js';

/** The emulator's own rules (osf.md §6 checklist), seen from a plain HTTP client. */
describe('OSF emulator behaviour', () => {
  let emu: OsfEmulator;
  let token: string;
  let nodeId: string;
  let upload: string;
  const auth = () => ({ authorization: `Bearer ${token}` });

  beforeAll(async () => {
    emu = await startOsfEmulator();
    const user = emu.state.addUser();
    token = emu.state.addToken(user.id);
    const node = emu.state.addNode({ title: 'behaviour', owner: user.id });
    nodeId = node.id;
    for (let i = 0; i < 25; i++) emu.state.addFile(node.id, `/f${i}.txt`, `content ${i}`);
    const providers = (await (await fetch(`${emu.apiUrl}nodes/${nodeId}/files/`, { headers: auth() })).json()) as any;
    upload = providers.data[0].links.upload;
  });
  afterAll(() => emu.close());

  it('pages 10 by default, caps page[size] at 100, version 2.0 meta in links', async () => {
    const first = (await (await fetch(`${emu.apiUrl}nodes/${nodeId}/files/osfstorage/?sort=name`, { headers: auth() })).json()) as any;
    expect(first.data).toHaveLength(10);
    expect(first.links).toMatchObject({ first: null, prev: null, meta: { total: 25, per_page: 10 } });
    expect(first.links.next).toContain('page=2');
    expect(first.meta).toEqual({ version: '2.0' });
    const big = (await (await fetch(`${emu.apiUrl}nodes/${nodeId}/files/osfstorage/?page%5Bsize%5D=500`, { headers: auth() })).json()) as any;
    expect(big.links.meta.per_page).toBe(100);
    expect(big.links.next).toBeNull();
  });

  it('answers version errors: 406 for an unknown Accept version, 409 when header and query disagree', async () => {
    expect((await fetch(`${emu.apiUrl}users/me/`, { headers: { ...auth(), accept: 'application/vnd.api+json; version=2.99' } })).status).toBe(406);
    expect((await fetch(`${emu.apiUrl}users/me/?version=2.1`, { headers: { ...auth(), accept: 'application/vnd.api+json; version=2.20' } })).status).toBe(409);
  });

  it('tells anonymous 401 from invalid-token 401', async () => {
    const anonymous = await fetch(`${emu.apiUrl}users/me/`);
    expect(anonymous.status).toBe(401);
    expect(((await anonymous.json()) as any).errors[0].detail).toBe('Authentication credentials were not provided.');
    const invalid = await fetch(`${emu.apiUrl}users/me/`, { headers: { authorization: 'Bearer nope' } });
    expect(((await invalid.json()) as any).errors[0].detail).toBe('User provided an invalid OAuth2 access token');
    expect(invalid.headers.get('www-authenticate')).toMatch(/^Documentation realm=/);
  });

  it('validates node creation (required fields, category, type) and escapes titles', async () => {
    const post = (body: unknown) => fetch(`${emu.apiUrl}nodes/`, { method: 'POST', headers: { ...auth(), 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const missing = await post({ data: { type: 'nodes', attributes: { title: 'x' } } });
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as any).errors[0]).toEqual({ source: { pointer: '/data/attributes/category' }, detail: 'This field is required.' });
    expect((await post({ data: { type: 'nodes', attributes: { title: 'x', category: 'nonsense' } } })).status).toBe(400);
    expect((await post({ data: { type: 'widgets', attributes: { title: 'x', category: 'project' } } })).status).toBe(409);
    const made = (await (await post({ data: { type: 'nodes', attributes: { title: '> data & < files', category: 'project' } } })).json()) as any;
    expect(made.data.attributes.title).toBe('&gt; data &amp; &lt; files');
    expect(made.data.relationships.parent).toBeUndefined();
  });

  it('WaterButler: 409 without code, 411 without length, 413 for a folder body, 404 on a slash mismatch', async () => {
    const put = (url: string, body?: string, headers: Record<string, string> = {}) => fetch(url, { method: 'PUT', headers: { ...auth(), ...headers }, body });
    const conflict = await put(`${upload}?kind=file&name=f1.txt`, 'x');
    expect(conflict.status).toBe(409);
    const conflictBody = (await conflict.json()) as any;
    expect(conflictBody.code).toBeUndefined();
    expect(conflictBody.message).toMatch(/already exists/);
    expect(conflictBody.data.attributes.name).toBe('f1.txt');
    const chunked = await fetch(`${upload}?kind=file&name=chunked.txt`, {
      method: 'PUT', headers: auth(), body: new ReadableStream({ start(c) { c.enqueue(new TextEncoder().encode('abc')); c.close(); } }), duplex: 'half',
    } as RequestInit);
    expect(chunked.status).toBe(411);
    expect((await put(`${upload}?kind=folder&name=withbody`, 'body')).status).toBe(413);
    const file = [...emu.state.files.values()].find((f) => f.name === 'f2.txt')!;
    expect((await fetch(`${upload}${file.id}/`, { headers: auth() })).status).toBe(404);
    expect((await put(`${upload}${file.id}?kind=file&name=x`, 'y')).status).toBe(400);
  });

  it('the storage host refuses a request that carries Authorization', async () => {
    const file = [...emu.state.files.values()].find((f) => f.name === 'f3.txt')!;
    const redirect = await fetch(`${upload}${file.id}`, { headers: auth(), redirect: 'manual' });
    expect(redirect.status).toBe(302);
    const location = redirect.headers.get('location')!;
    expect(location.startsWith(emu.storageUrl)).toBe(true);
    expect((await fetch(location, { headers: auth() })).status).toBe(403);
    const plain = await fetch(location);
    expect(plain.status).toBe(200);
    expect(await plain.text()).toBe('content 3');
  });

  it('injected faults: 429 with Retry-After, then normal service', async () => {
    emu.state.failNext({ path: '/users/me/', status: 429, retryAfter: 2 });
    const limited = await fetch(`${emu.apiUrl}users/me/`, { headers: auth() });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('2');
    expect(((await limited.json()) as any).errors[0].detail).toMatch(/throttled/);
    expect((await fetch(`${emu.apiUrl}users/me/`, { headers: auth() })).status).toBe(200);
  });
});
