// Issue #17, part 2: a plain ZIP is checked before anything is written, as a bag is. A
// damaged entry (its CRC-32 does not match) anywhere in the archive leaves the destination
// exactly as it was: no file of the archive put in place, no existing file replaced.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import yazl from 'yazl';
import type { Job } from '../../shared/api.js';
import { encodeLocalId } from '../../electron/core/targets/local/ids.js';
import { openUploadZip } from '../../electron/core/bag/upload-reader.js';
import { DEFAULT_LIMITS } from '../../electron/core/limits.js';
import { snapshotTree, startFerry, uploadForm, waitForJob, writeTree, type Ferry } from '../api/harness.js';
import { LocalTarget } from '../../electron/core/targets/local/local-target.js';
import { createOsfTarget } from '../../electron/core/targets/osf/index.js';
import { MemorySecretStore } from '../../electron/core/keychain/memory.js';
import { tokenAccount } from '../../electron/core/keychain/port.js';
import { startOsfEmulator } from '../emulators/osf/emulator.js';

/** A stored ZIP of `files`; the stored bytes of `damaged` get one byte changed (its CRC then no longer matches). */
async function zipWithDamagedEntry(files: Record<string, string>, damaged: string): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const [name, content] of Object.entries(files)) zip.addBuffer(Buffer.from(content), name, { compress: false, mtime: new Date(2020, 0, 1) });
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
  const bytes = Buffer.concat(chunks);
  const at = bytes.indexOf(Buffer.from(files[damaged]!));
  expect(at).toBeGreaterThan(0);
  bytes[at] = bytes[at]! ^ 0x20;
  return bytes;
}

const FILES = {
  'a.txt': 'new a\n',
  'b.txt': 'new b\n',
  'sub/c.txt': 'the damaged one, in the middle\n',
  'sub/d.txt': 'new d\n',
  'z.txt': 'new z\n',
};

let ferry: Ferry | null = null;
afterEach(async () => {
  await ferry?.close();
  ferry = null;
});

describe('a plain ZIP with a damaged entry', () => {
  for (const action of ['update', 'ignore'] as const) {
    it(`writes nothing and replaces nothing (duplicate action ${action})`, async () => {
      ferry = await startFerry();
      await writeTree(ferry.workspace, { 'inbox/a.txt': 'old a\n', 'inbox/sub/d.txt': 'old d\n', 'inbox/keep.txt': 'keep\n' });
      const before = await snapshotTree(ferry.workspace);
      const zip = await zipWithDamagedEntry(FILES, 'sub/c.txt');
      const response = await ferry.fetch(`/api_v1/targets/local/resources/${encodeLocalId('inbox')}/`, {
        method: 'POST',
        headers: ferry.auth({ 'duplicate-file-action': action }),
        body: uploadForm(zip),
      });
      expect(response.status).toBe(202);
      const { ticket_number: ticket } = (await response.json()) as { ticket_number: string };
      const job: Job = await waitForJob(ferry, ticket);
      expect(job.status).toBe('failed');
      expect(job.error).toMatch(/"sub\/c\.txt" is damaged \(its CRC-32 does not match\)/);
      expect(await snapshotTree(ferry.workspace)).toEqual(before);
    });
  }

  it('as a new top-level resource: no folder is left behind', async () => {
    ferry = await startFerry();
    await writeTree(ferry.workspace, { 'keep.txt': 'keep\n' });
    const before = await snapshotTree(ferry.workspace);
    const zip = await zipWithDamagedEntry({ 'Top/a.txt': 'a\n', 'Top/b.txt': 'damaged b\n', 'Top/c.txt': 'c\n' }, 'Top/b.txt');
    const response = await ferry.fetch('/api_v1/targets/local/resources/', { method: 'POST', headers: ferry.auth({ 'duplicate-file-action': 'ignore' }), body: uploadForm(zip) });
    expect(response.status).toBe(202);
    const { ticket_number: ticket } = (await response.json()) as { ticket_number: string };
    const job = await waitForJob(ferry, ticket);
    expect(job.status).toBe('failed');
    expect(await snapshotTree(ferry.workspace)).toEqual(before);
  });
});

describe('the upload reader, for a destination that cannot stage', () => {
  let dir = '';
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('checks every CRC-32 before it hands out the first entry', async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-plain-'));
    const file = path.join(dir, 'upload.zip');
    await writeFile(file, await zipWithDamagedEntry(FILES, 'z.txt'));
    await expect(openUploadZip(file, DEFAULT_LIMITS, { payload: 'check' })).rejects.toThrow(/"z\.txt" is damaged \(its CRC-32 does not match\)/);
    // deferred: the writer stages, and the job checks while it writes
    const archive = await openUploadZip(file, DEFAULT_LIMITS, { payload: 'defer' });
    await archive.close();
  });
});

describe('a plain ZIP with a damaged entry, uploaded to a remote target (OSF, on loopback: it publishes each file as it goes)', () => {
  it('fails before the first write: no project, no file on OSF', async () => {
    const osf = await startOsfEmulator();
    try {
      const user = osf.state.addUser('Integrity');
      const secrets = new MemorySecretStore();
      await secrets.set(tokenAccount('osf'), osf.state.addToken(user.id));
      ferry = await startFerry({
        secrets,
        targets: (config, store) => [new LocalTarget({ root: config.workspace }), createOsfTarget({ ...config, remotes: { ...config.remotes, osfApiUrl: osf.apiUrl } }, store, { ratePerSecond: 200, retries: 2 })],
      });
      const zip = await zipWithDamagedEntry({ 'Survey/a.txt': 'a\n', 'Survey/b.txt': 'b\n', 'Survey/c.txt': 'the damaged one, last\n' }, 'Survey/c.txt');
      const response = await ferry.fetch('/api_v1/targets/osf/resources/', { method: 'POST', headers: ferry.bearer({ 'duplicate-file-action': 'ignore' }), body: uploadForm(zip) });
      expect(response.status, await response.clone().text()).toBe(202);
      const { ticket_number: ticket } = (await response.json()) as { ticket_number: string };
      const job = await waitForJob(ferry, ticket, 60_000);
      expect(job.status).toBe('failed');
      expect(job.error).toMatch(/"Survey\/c\.txt" is damaged \(its CRC-32 does not match\)/);
      const listing = await ferry.fetch('/api_v1/targets/osf/resources/', { headers: ferry.bearer() });
      expect(listing.status).toBe(200);
      expect(await listing.json()).toEqual([]);
    } finally {
      await osf.close();
    }
  });
});
