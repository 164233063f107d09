// A transfer of one large file between two local folders, paused while the file is half
// written (the queue's bandwidth limit makes it last), then resumed: the resumed run reads
// only the bytes the first did not keep (targets/local/resumable-write.ts), the file arrives
// byte for byte, and the job's check of the source's digests covers the whole file.
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Acknowledgement, Job } from '../../shared/api.js';
import type { Entry, Target } from '../../electron/core/target.js';
import { encodeLocalId } from '../../electron/core/targets/local/ids.js';
import { LocalTarget } from '../../electron/core/targets/local/index.js';
import { RESUMABLE_FILE_BYTES } from '../../electron/core/targets/local/resumable-write.js';
import { renamed, startFerry, waitForJob, type Ferry } from './harness.js';
import { countedEntry } from '../support/counted-entry.js';

const SIZE = RESUMABLE_FILE_BYTES + 8 * 1024 * 1024;
/** bytes the source handed out, not counting those a writer kept (Entry.openFrom) */
const counter = { read: 0 };

/** The workspace as a source whose reads are counted. */
function counted(target: Target): Target {
  async function* entries(source: AsyncIterable<Entry>): AsyncGenerator<Entry> {
    for await (const entry of source) yield countedEntry(entry, (bytes) => (counter.read += bytes));
  }
  return {
    ...renamed(target, target.info.name, target.info.readable_name),
    read: async (ctx, id) => {
      const read = await target.read(ctx, id);
      return { ...read, entries: entries(read.entries) };
    },
  };
}

let ferry: Ferry;
let vault: string;
const bytes = randomBytes(SIZE);

beforeAll(async () => {
  ferry = await startFerry({
    targets: (config) => {
      vault = path.join(config.workspace, '..', 'vault');
      return [counted(new LocalTarget({ root: config.workspace })), renamed(new LocalTarget({ root: vault }), 'vault', 'Vault')];
    },
  });
  await mkdir(path.join(ferry.workspace, 'Big'), { recursive: true });
  await mkdir(path.join(vault, 'Inbox'), { recursive: true });
  await writeFile(path.join(ferry.workspace, 'Big', 'big.bin'), bytes);
});
afterAll(() => ferry?.close());

const json = (body: unknown) => ({ body: JSON.stringify(body), headers: { ...ferry.bearer(), 'content-type': 'application/json' } });

async function job(ticket: string): Promise<Job> {
  return (await (await ferry.fetch(`/api_v1/jobs/${ticket}/`, { headers: ferry.bearer() })).json()) as Job;
}

/**
 * Starts a transfer of Big into the vault's `folder` under a 24 MiB/s limit and pauses it once
 * 24 MiB were read (the file then half written); lifts the limit again. Returns the ticket.
 */
async function pausedMidFile(folder: string): Promise<string> {
  await mkdir(path.join(vault, folder), { recursive: true });
  counter.read = 0;
  expect((await ferry.fetch('/api_v1/queue/', { method: 'PUT', ...json({ concurrency: 2, per_target: {}, bandwidth_limit: 24 * 1024 * 1024 }) })).status).toBe(200);
  const started = await ferry.fetch(`/api_v1/targets/vault/resources/${encodeURIComponent(encodeLocalId(folder))}/`, {
    method: 'POST',
    body: JSON.stringify({ source_target_name: 'local', source_resource_id: encodeLocalId('Big') }),
    headers: { 'service-source-token': ferry.key, 'service-destination-token': ferry.key, 'duplicate-file-action': 'ignore', 'content-type': 'application/json' },
  });
  expect(started.status, await started.clone().text()).toBe(202);
  const { ticket_number: ticket } = (await started.json()) as Acknowledgement;
  for (let i = 0; i < 400 && counter.read < 24 * 1024 * 1024; i++) await new Promise((resolve) => setTimeout(resolve, 25));
  expect((await ferry.fetch(`/api_v1/jobs/${ticket}/pause/`, { method: 'POST', headers: ferry.bearer() })).status).toBe(200);
  await ferry.fetch('/api_v1/queue/', { method: 'PUT', ...json({ concurrency: 2, per_target: {}, bandwidth_limit: null }) });
  return ticket;
}

const ferryFilesIn = async (folder: string, prefix: string) => (await readdir(folder)).filter((name) => name.startsWith(prefix));

describe('a large local file paused mid-way', () => {
  it('resumes from the bytes already on disk and arrives whole, checked against the source', async () => {
    // the source's digests, for the job to check the bytes against (the workspace lists them once computed)
    await ferry.fetch(`/api_v1/targets/local/resources/${encodeURIComponent(encodeLocalId('Big/big.bin'))}/`, { headers: ferry.auth() });
    const ticket = await pausedMidFile('Inbox');
    const firstRead = counter.read;
    expect(firstRead).toBeLessThan(SIZE);
    const folder = path.join(vault, 'Inbox', 'Big');
    expect(await ferryFilesIn(folder, '.ferry-resume-')).toHaveLength(1);

    counter.read = 0;
    expect((await ferry.fetch(`/api_v1/jobs/${ticket}/resume/`, { method: 'POST', headers: ferry.bearer() })).status).toBe(202);
    const done = await waitForJob(ferry, ticket, 60_000);
    expect(done.status, JSON.stringify(done.report)).toBe('succeeded');
    // the resumed run read only what the first did not keep: at least 8 MiB less than the file
    expect(counter.read).toBeLessThan(SIZE - 8 * 1024 * 1024);
    expect(counter.read).toBeGreaterThanOrEqual(SIZE - firstRead);
    expect(done.resumed).toMatchObject({ files_already_done: 0 });
    expect(done.report?.failed_fixity).toEqual([]);
    expect(done.report?.resources_created).toContain('Big/big.bin');
    expect((await job(ticket)).progress.bytes_done).toBeGreaterThanOrEqual(SIZE);
    expect((await readFile(path.join(folder, 'big.bin'))).equals(bytes)).toBe(true);
    expect(await ferryFilesIn(folder, '.ferry-')).toEqual([]);
  });

  it('leaves no partial behind when the paused job is cancelled', async () => {
    const ticket = await pausedMidFile('Other');
    const folder = path.join(vault, 'Other', 'Big');
    expect(await ferryFilesIn(folder, '.ferry-resume-')).toHaveLength(1);
    expect((await ferry.fetch(`/api_v1/jobs/${ticket}/`, { method: 'DELETE', headers: ferry.bearer() })).status).toBe(200);
    expect((await job(ticket)).status).toBe('cancelled');
    expect(await ferryFilesIn(folder, '.ferry-')).toEqual([]);
  });
});
