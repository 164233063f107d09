/* eslint-disable @typescript-eslint/no-explicit-any -- assertions on parsed JSON bodies */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOsfEmulator, type OsfEmulator } from './emulator.js';

/**
 * The emulator's WaterButler move/rename, seen from a plain HTTP client, against what
 * waterbutler/server/api/v1/provider/movecopy.py and core/provider.py handle_name_conflict do.
 */
describe('OSF emulator: WaterButler POST (move, rename)', () => {
  let emu: OsfEmulator;
  let token: string;
  let node: string;
  const auth = () => ({ authorization: `Bearer ${token}`, 'content-type': 'application/json' });
  const moveLink = async (fileId: string) => ((await (await fetch(`${emu.apiUrl}files/${fileId}/`, { headers: { authorization: `Bearer ${token}` } })).json()) as any).data.links.move as string;
  const post = async (fileId: string, body: unknown) => fetch(await moveLink(fileId), { method: 'POST', headers: auth(), body: JSON.stringify(body) });

  beforeAll(async () => {
    emu = await startOsfEmulator();
    const user = emu.state.addUser();
    token = emu.state.addToken(user.id);
    node = emu.state.addNode({ title: 'moves', owner: user.id }).id;
  });
  afterAll(() => emu.close());

  it('refuses a body without Content-Length (411), an unknown action, a rename without a name, a path without a trailing slash (400)', async () => {
    const a = emu.state.addFile(node, '/v/a.txt', 'a');
    const link = new URL(await moveLink(a.id));
    const status = await new Promise<number>((resolve, reject) => {
      const request = http.request(link, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'transfer-encoding': 'chunked' } }, (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      });
      request.on('error', reject);
      request.end('{"action":"rename","rename":"x"}');
    });
    expect(status).toBe(411);
    expect((await post(a.id, { action: 'delete' })).status).toBe(400);
    expect((await post(a.id, { action: 'rename' })).status).toBe(400);
    expect((await post(a.id, { action: 'move', path: `/${emu.state.addFolder(node, '/w/').id}` })).status).toBe(400);
  });

  it('replaces by default (200), warns with 409 when asked, and answers 201 with the entity where the name was free', async () => {
    const a = emu.state.addFile(node, '/x/a.txt', 'a');
    const b = emu.state.addFile(node, '/x/b.txt', 'b');
    const warned = await post(a.id, { action: 'rename', rename: 'b.txt', conflict: 'warn' });
    expect(warned.status).toBe(409);
    expect(((await warned.json()) as any).message).toBe('Cannot complete action: file or folder "b.txt" already exists in this location');
    const free = await post(a.id, { action: 'rename', rename: 'c.txt' });
    expect(free.status).toBe(201);
    expect(((await free.json()) as any).data.attributes).toMatchObject({ name: 'c.txt', path: `/${a.id}`, kind: 'file' });
    const replaced = await post(a.id, { action: 'rename', rename: 'b.txt' });
    expect(replaced.status).toBe(200);
    expect(emu.state.files.has(b.id)).toBe(false);
  });
});
