// Issue #18 ("a large file resumes from its last part"): SIGKILL `ferry serve` while one large
// local file is being copied between two local folders, after the writer has vouched for part
// of it in the job's journal (targets/local/resumable-write.ts), restart it on the same data
// directory, and check that the job goes on from those bytes (the partial is never cut below
// what the journal recorded, nor replaced), that the file arrives byte for byte and checked,
// and that nothing of Ferry's is left behind once the job ended.
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Acknowledgement, Job } from '../../../shared/api.js';
import { journalFileOf } from '../../../electron/core/jobs/resume-journal.js';
import { encodeLocalId } from '../../../electron/core/targets/local/ids.js';
import { RESUMABLE_FILE_BYTES } from '../../../electron/core/targets/local/resumable-write.js';
import { chooseCli, Ferry } from './server.js';

const MiB = 1024 * 1024;
const SIZE = RESUMABLE_FILE_BYTES + 8 * MiB;
/** slow enough that the writer's first mark (every 5 s) lands well before the file's end */
const BANDWIDTH = 8 * MiB;

const root = await mkdtemp(path.join(os.tmpdir(), 'ferry-crash-large-'));
const workspace = path.join(root, 'workspace');
const dataDir = path.join(root, 'data');
const cli = chooseCli();
let ferry: Ferry | null = null;
afterAll(async () => {
  await ferry?.stop();
  await rm(root, { recursive: true, force: true });
});

/** The job's journal lines that vouch for part of a file (`p`), as the resumed run will read them. */
async function keptParts(ticket: string): Promise<{ n: number; at: string }[]> {
  const text = await readFile(journalFileOf(path.join(dataDir, 'jobs'), ticket), 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { p?: string; n?: number; at?: string })
    .filter((line): line is { p: string; n: number; at: string } => line.p !== undefined && typeof line.n === 'number' && typeof line.at === 'string');
}

async function until<T>(what: string, deadlineMs: number, probe: () => Promise<T | null>): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const found = await probe();
    if (found !== null) return found;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('crash: SIGKILL while a large local file is half copied', () => {
  it('goes on from the bytes the journal vouched for, and the file arrives whole and checked', async () => {
    console.log(`[crash-large-file] ferry serve: ${cli.built ? 'built CLI' : 'sources through tsx'} (${cli.why})`);
    const bytes = randomBytes(SIZE);
    await mkdir(path.join(workspace, 'Big'), { recursive: true });
    await mkdir(path.join(workspace, 'Inbox'), { recursive: true });
    await writeFile(path.join(workspace, 'Big', 'big.bin'), bytes);
    ferry = await Ferry.start({ dataDir, workspace, built: cli.built });

    expect((await ferry.fetch('api_v1/queue/', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ concurrency: 2, per_target: {}, bandwidth_limit: BANDWIDTH }) })).status).toBe(200);
    const started = await ferry.fetch(`api_v1/targets/local/resources/${encodeURIComponent(encodeLocalId('Inbox'))}/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'service-source-token': ferry.key, 'service-destination-token': ferry.key, 'duplicate-file-action': 'ignore' },
      body: JSON.stringify({ source_target_name: 'local', source_resource_id: encodeLocalId('Big') }),
    });
    expect(started.status, await started.clone().text()).toBe(202);
    const { ticket_number: ticket } = (await started.json()) as Acknowledgement;

    // the first mark: the partial's first bytes are on disk and in the journal
    const [kept] = await until('the journal to vouch for part of the file', 30_000, async () => {
      const parts = await keptParts(ticket);
      return parts.length > 0 && parts[0]!.n > 0 ? parts : null;
    });
    expect(kept!.n).toBeLessThan(SIZE);
    expect(path.dirname(kept!.at)).toBe(path.join(workspace, 'Inbox', 'Big'));
    await ferry.kill();
    const partialBefore = await stat(kept!.at);
    expect(partialBefore.size).toBeGreaterThanOrEqual(kept!.n);

    // the restarted server resumes the job on its own; watch the partial while it does
    ferry = await Ferry.start({ dataDir, workspace, built: cli.built });
    let smallest = Number.POSITIVE_INFINITY;
    let replaced = false;
    const done = await until('the resumed job to end', 60_000, async () => {
      const partial = await stat(kept!.at).catch(() => null);
      if (partial !== null) {
        smallest = Math.min(smallest, partial.size);
        if (partial.ino !== partialBefore.ino) replaced = true;
      }
      const job = (await ferry!.json<Job[]>('api_v1/jobs/')).find((candidate) => candidate.ticket_number === ticket);
      return job && job.status !== 'queued' && job.status !== 'running' ? job : null;
    });
    expect(done.status, JSON.stringify({ error: done.error, report: done.report })).toBe('succeeded');
    // (the queue's bandwidth limit is kept across the restart, so the resumed run lasts seconds)
    expect(Number.isFinite(smallest), 'the partial was still there after the restart').toBe(true);
    expect(smallest, 'the partial was never cut below what the journal vouched for').toBeGreaterThanOrEqual(kept!.n);
    expect(replaced, 'the partial was not replaced by a new file').toBe(false);
    expect(done.resumed).toMatchObject({ files_already_done: 0 });
    expect(done.report?.failed_fixity).toEqual([]);
    expect(done.report?.resources_created).toContain('Big/big.bin');
    expect((await readFile(path.join(workspace, 'Inbox', 'Big', 'big.bin'))).equals(bytes)).toBe(true);
    // no partial or temporary of Ferry's left (the provenance record is a visible file of the write's)
    expect((await readdir(path.join(workspace, 'Inbox', 'Big'))).filter((name) => name.startsWith('.'))).toEqual([]);
    expect(ferry.output()).not.toMatch(/unexpected error inside Ferry/);
  }, 120_000);
});
