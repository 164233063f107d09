// A few of the LoC conformance suite's bags end to end, as a person would send them: zipped,
// POSTed to /api_v1/ into a folder, run as an upload job (which defers the payload check to
// the write and puts nothing in place unless it passes). Valid bags land whole; invalid
// ones fail the job and leave the workspace byte for byte as it was.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Acknowledgement, Job, ResourceSummary } from '../../shared/api.js';
import { findByPath, snapshotTree, startFerry, uploadForm, waitForJob, writeTree, type Ferry } from '../api/harness.js';
import { filesOf, SUITE, suiteMissing, zipBag } from './suite.js';

const missing = suiteMissing();
if (missing) console.log(`Skipping the BagIt conformance suite over HTTP: ${missing}.`);

describe.skipIf(missing !== null)('LoC BagIt conformance bags over /api_v1/', () => {
  let ferry: Ferry;
  beforeAll(async () => {
    ferry = await startFerry();
  });
  afterAll(async () => ferry?.close());

  /** Uploads the suite's bag `name` into a new folder of the workspace; the job when it ends. */
  async function upload(name: string, folder: string): Promise<Job> {
    await writeTree(ferry.workspace, { [`${folder}/keep.txt`]: 'keep\n' });
    const list = (await (await ferry.fetch('/api_v1/targets/local/resources/', { headers: ferry.auth() })).json()) as ResourceSummary[];
    const into = findByPath(list, folder)!;
    const zipPath = path.join(ferry.root, `${folder}.zip`);
    await zipBag(path.join(SUITE, name), zipPath);
    const response = await ferry.fetch(`/api_v1/targets/local/resources/${encodeURIComponent(into.id)}/`, {
      method: 'POST',
      body: uploadForm(await readFile(zipPath)),
      // the payload exactly: no provenance record beside it
      headers: { ...ferry.auth(), 'duplicate-file-action': 'ignore', 'ferry-provenance': 'off' },
    });
    expect(response.status).toBe(202);
    return waitForJob(ferry, ((await response.json()) as Acknowledgement).ticket_number);
  }

  it.each(['v0.97/valid/UTF-16-encoded-tag-files', 'v0.97/valid/holey-bag', 'v0.97/valid/bag-with-encoded-names', 'v0.97/valid/uncommon-metadata-separators'])(
    'writes the payload of %s, every file byte for byte',
    async (name) => {
      const folder = name.replace(/\W+/g, '-');
      const job = await upload(name, folder);
      expect(job.status, job.error ?? '').toBe('succeeded');
      const payload = await filesOf(path.join(SUITE, name, 'data'));
      expect((await filesOf(path.join(ferry.workspace, folder))).sort()).toEqual(['keep.txt', ...payload].sort());
      for (const file of payload) {
        expect((await readFile(path.join(ferry.workspace, folder, file))).equals(await readFile(path.join(SUITE, name, 'data', file))), file).toBe(true);
      }
    },
  );

  it.each([
    ['v1.0/invalid/bagit-with-invalid-whitespace', /bagit\.txt line 1 is "BagIt-Version : 1\.0"/],
    ['v0.97/invalid/out-of-scope-file-paths-using-dot-notation-for-fetch', /fetch\.txt line 1 would fetch "\.\.\/\.\.\/\.\.\/README\.md" to outside/],
    ['v0.97/invalid/corrupt-tag-file', /does not match its md5 checksum in tagmanifest-md5\.txt/],
  ])('fails the job for %s, writing nothing', async (name, reason) => {
    const folder = name.replace(/\W+/g, '-');
    await writeTree(ferry.workspace, { [`${folder}/keep.txt`]: 'keep\n' });
    const before = await snapshotTree(ferry.workspace);
    const job = await upload(name, folder);
    expect(job.status).toBe('failed');
    expect(job.error).toMatch(reason);
    expect(await snapshotTree(ferry.workspace)).toEqual(before);
  });
});
