import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { missingFrom } from '../zenodo/shape.js';
import { startInvenioEmulator, type InvenioEmulator } from './emulator.js';

const recorded = (name: string) => (JSON.parse(readFileSync(new URL(`./recorded/${name}`, import.meta.url), 'utf8')) as { body: unknown }).body;

/**
 * The emulator's file entries carry every key (same JSON type) of real InvenioRDM answers
 * recorded against sandbox.zenodo.org (./recorded/). Documented difference: a pending entry
 * there echoes the `size` and `checksum` its client declared with the key; Ferry declares only
 * the key, so the emulator's pending entries have neither.
 */
describe('invenio emulator against recorded sandbox.zenodo.org answers', () => {
  let emulator: InvenioEmulator;
  const auth = { authorization: 'Bearer invenio-token' };
  beforeAll(async () => {
    emulator = await startInvenioEmulator();
  });
  afterAll(() => emulator.close());

  it('declaring a key answers the recorded files list, the entry pending', async () => {
    const r = emulator.state.addRecord(1, 'Recorded');
    const response = await fetch(`${emulator.url}/api/records/${r.id}/draft/files`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify([{ key: 'a.cwl' }]) });
    expect(response.status).toBe(201);
    const body = (await response.json()) as { entries: { status: string }[] };
    expect(missingFrom(body, recorded('zenodo-sandbox-2025-init-files.json'), [/^entries\[\]\.(size|checksum):/])).toEqual([]);
    expect(body.entries[0]?.status).toBe('pending');
  });

  it('a commit answers the recorded completed entry', async () => {
    const r = emulator.state.addRecord(1, 'Recorded');
    await fetch(`${emulator.url}/api/records/${r.id}/draft/files`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify([{ key: 'c.json' }]) });
    await fetch(`${emulator.url}/api/records/${r.id}/draft/files/c.json/content`, { method: 'PUT', headers: { ...auth, 'content-type': 'application/octet-stream' }, body: '{}' });
    const body = (await (await fetch(`${emulator.url}/api/records/${r.id}/draft/files/c.json/commit`, { method: 'POST', headers: auth })).json()) as { status: string; checksum: string };
    expect(missingFrom(body, recorded('zenodo-sandbox-2025-commit.json'))).toEqual([]);
    expect(body.status).toBe('completed');
    expect(body.checksum).toMatch(/^md5:[0-9a-f]{32}$/);
  });
});
