import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startZenodoEmulator, type ZenodoEmulator } from './emulator.js';
import { missingFrom } from './shape.js';

const recorded = (name: string) => (JSON.parse(readFileSync(new URL(`./recorded/${name}`, import.meta.url), 'utf8')) as { body: unknown }).body;

/**
 * The emulator's bodies carry every key (with the same JSON type) of real zenodo.org
 * responses recorded in ./recorded/. Documented differences: the 2022 recording has a
 * `registerconceptdoi` link and free-form metadata fields (license, keywords, ...) the
 * emulator stores only when a client sends them.
 */
describe('zenodo emulator against recorded responses', () => {
  let emulator: ZenodoEmulator;
  const auth = { authorization: 'Bearer zenodo-token' };
  beforeAll(async () => {
    emulator = await startZenodoEmulator();
  });
  afterAll(() => emulator.close());

  it('POST /api/deposit/depositions has the recorded shape', async () => {
    const response = await fetch(`${emulator.url}/api/deposit/depositions`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{}' });
    expect(response.status).toBe(201);
    expect(missingFrom(await response.json(), recorded('deposition-create.json'))).toEqual([]);
  });

  it('a draft with files has the recorded shape, checksums bare hex', async () => {
    const d = emulator.state.addDeposition(1, 'My fairly test', { 'file_0.txt': 'file_0' });
    const body = (await (await fetch(`${emulator.url}/api/deposit/depositions/${d.id}`, { headers: auth })).json()) as { files: { checksum: string }[] };
    expect(missingFrom(body, recorded('deposition-draft-with-files.json'), [/^links\.registerconceptdoi/, /^metadata\.(access_right|contributors|doi|keywords|license|publication_date)/])).toEqual([]);
    expect(body.files[0]?.checksum).toBe((recorded('legacy-file.json') as { checksum: string }).checksum);
    expect(missingFrom(body.files[0], recorded('legacy-file.json'))).toEqual([]);
  });

  it('errors have {message, status}; bad token 401, anonymous 403', async () => {
    const bad = await fetch(`${emulator.url}/api/deposit/depositions`, { headers: { authorization: 'Bearer nope' } });
    expect(bad.status).toBe(401);
    expect(await bad.json()).toMatchObject({ message: expect.any(String), status: 401 });
    expect((await fetch(`${emulator.url}/api/deposit/depositions`)).status).toBe(403);
  });

  it('JSON without a JSON Content-Type is 415, as on Zenodo', async () => {
    const d = emulator.state.addDeposition(1, 'x');
    const response = await fetch(`${emulator.url}/api/deposit/depositions/${d.id}`, { method: 'PUT', headers: auth, body: '{"metadata":{}}' });
    expect(response.status).toBe(415);
  });
});
