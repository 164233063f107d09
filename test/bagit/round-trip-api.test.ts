// A folder with odd names, downloaded from the local target as a bag over /api_v1/ and
// uploaded back into another folder: the same names and bytes come back (docs/bagit.md).
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Acknowledgement, ResourceSummary } from '../../shared/api.js';
import { findByPath, snapshotTree, startFerry, uploadForm, waitForJob, writeTree, type Ferry } from '../api/harness.js';

// names with a control character are refused on upload (zip/entry-policy.ts; round-trip.test.ts)
const NAMES = ['with space.txt', '100% sure.txt', 'literal %25 and %0A.txt', 'trailing space ', 'Nu\u0301n\u0303ez (NFD).txt', 'caf\u00e9 (NFC).txt', '.DS_Store', 'sub dir /Thumbs.db'];

describe('download → upload over /api_v1/', () => {
  let ferry: Ferry;
  beforeAll(async () => {
    ferry = await startFerry();
    await writeTree(ferry.workspace, { ...Object.fromEntries(NAMES.map((name, i) => [`Odd/${name}`, `file ${i}\n`])), 'Back/keep.txt': 'keep\n' });
  });
  afterAll(async () => ferry?.close());

  it('brings every odd name back with its bytes', async () => {
    const list = (await (await ferry.fetch('/api_v1/targets/local/resources/', { headers: ferry.auth() })).json()) as ResourceSummary[];
    const odd = findByPath(list, 'Odd')!;
    const back = findByPath(list, 'Back')!;
    const detail = (await (await fetch(`${odd.detail}.json/`, { headers: ferry.auth() })).json()) as { download_url: string };
    const zip = Buffer.from(await (await fetch(detail.download_url, { headers: ferry.auth() })).arrayBuffer());

    const response = await ferry.fetch(`/api_v1/targets/local/resources/${encodeURIComponent(back.id)}/`, {
      method: 'POST',
      body: uploadForm(zip),
      headers: { ...ferry.auth(), 'duplicate-file-action': 'ignore' },
    });
    expect(response.status).toBe(202);
    const job = await waitForJob(ferry, ((await response.json()) as Acknowledgement).ticket_number);
    expect(job.status, job.error ?? '').toBe('succeeded');

    const original = await snapshotTree(path.join(ferry.workspace, 'Odd'));
    expect(await snapshotTree(path.join(ferry.workspace, 'Back', 'Odd'))).toEqual(original);
    for (const [i, name] of NAMES.entries()) expect(await readFile(path.join(ferry.workspace, 'Back', 'Odd', name), 'utf8'), JSON.stringify(name)).toBe(`file ${i}\n`);
  });
});
