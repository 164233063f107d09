import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isFinishedStatus } from '../../../shared/api.js';
import { makeConfig } from '../config.js';
import { fastPathOn } from '../fast-paths.js';
import { createCore, type FerryCore } from '../ferry-core.js';
import { MemorySecretStore } from '../keychain/memory.js';
import { parseProvenance } from './format.js';
import { encodeLocalId, LocalTarget } from '../targets/local/index.js';
import { createInvenioTarget } from '../targets/invenio/index.js';
import { createWebdavTarget } from '../targets/webdav/index.js';
import { FaultPlan } from '../../../test/emulators/shared/faults.js';
import { startInvenioEmulator, type InvenioEmulator } from '../../../test/emulators/invenio/emulator.js';
import { apacheUnavailableReason, startApacheWebdav } from '../../../test/webdav/apache-webdav.js';
import { startWebdavFaultProxy, type FaultProxy } from '../../../test/webdav/fault-proxy.js';
import type { RealWebdav } from '../../../test/webdav/process.js';

/**
 * The provenance record takes the destination's hashes of each file from the write's own
 * answer (WriteOutcome.stored) instead of asking again: a job with the record costs the
 * record's own write and no request more per file, counted where the requests arrive. (It
 * used to ask for each file's detail: on InvenioRDM `GET …/draft` and the whole
 * `GET …/draft/files` a file, on WebDAV a PROPFIND a file and a listing of each folder.)
 */
const FILES = 12;
const folder: Record<string, string> = Object.fromEntries(
  Array.from({ length: FILES }, (_, i) => [`${['raw', 'clean', 'notes'][i % 3]}/f${i}.txt`, `file ${i}\n`.repeat(5 + i)]),
);
/** what the record itself may cost: a listing of where it goes, its own write and what that write checks */
const RECORD_REQUESTS = 6;

let root: string;
let core: FerryCore;
let localDetails = 0;
let invenio: InvenioEmulator;
let apache: RealWebdav | undefined;
let proxy: FaultProxy | undefined;
let davRequests = 0;
const apacheReason = apacheUnavailableReason();
if (apacheReason) console.warn(`[provenance requests] the WebDAV case is not run: ${apacheReason}`);

beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'ferry-provenance-requests-'));
  invenio = await startInvenioEmulator();
  if (!apacheReason) {
    apache = await startApacheWebdav();
    proxy = await startWebdavFaultProxy(apache.url, new FaultPlan(), { onExchange: () => void davRequests++ });
  }
  const config = makeConfig({ dataDir: path.join(root, 'data'), workspace: path.join(root, 'workspace'), jobConcurrency: 1 });
  core = await createCore(config, {
    secrets: new MemorySecretStore(),
    targets: (c) => [
      countingDetails(new LocalTarget({ root: c.workspace })),
      createInvenioTarget(c, new MemorySecretStore(), { defaultUrl: invenio.url, ratePerSecond: 1000, retries: 0 }),
      createWebdavTarget(c, new MemorySecretStore(), { retries: 1, timeoutMs: 10_000 }),
    ],
  });
  for (const [name, text] of Object.entries(folder)) {
    await mkdir(path.dirname(path.join(config.workspace, 'Study', name)), { recursive: true });
    await writeFile(path.join(config.workspace, 'Study', name), text);
  }
}, 60_000);
afterAll(async () => {
  await core?.close();
  await invenio?.close();
  await proxy?.close();
  await apache?.stop();
  if (root) await rm(root, { recursive: true, force: true });
});

function countingDetails(target: LocalTarget): LocalTarget {
  const detail = target.detail.bind(target);
  target.detail = (ctx, id) => {
    localDetails++;
    return detail(ctx, id);
  };
  return target;
}

/** A transfer of the folder to a new top-level resource, with the provenance record or without. */
async function transfer(target: string, token: string, provenance: boolean): Promise<void> {
  const source = { target: 'local', resourceId: encodeLocalId('Study') };
  const submitted = await core.jobs.submit({
    kind: 'transfer',
    target,
    resource_id: null,
    source: { target: 'local', resource_id: source.resourceId },
    params: { source, containerId: null, duplicateAction: 'ignore', provenance },
    tokens: { source: core.accessKey, destination: token },
  });
  for (;;) {
    const job = core.jobs.get(submitted.ticket_number)!;
    if (isFinishedStatus(job.status)) {
      expect(job.status, job.error ?? '').toBe('succeeded');
      expect(job.report?.resources_created).toEqual(expect.arrayContaining(Object.keys(folder).map((name) => `Study/${name}`)));
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** The requests one transfer sent, with the record and without. */
async function requestsOf(target: string, token: string, count: () => number): Promise<{ with: number; without: number }> {
  const before = count();
  await transfer(target, token, false);
  const between = count();
  await transfer(target, token, true);
  return { without: between - before, with: count() - between };
}

describe('the provenance record asks the destination nothing the write already answered', () => {
  it('InvenioRDM (emulator): the record adds its own write, not two requests a file', async () => {
    const sent = await requestsOf('invenio', 'invenio-token', () => invenio.state.requests.length);
    // each file a PUT and a commit, and its declare (16 keys to one with `declare-batches`)
    expect(sent.without).toBeGreaterThanOrEqual((fastPathOn('declare-batches') ? 2 : 3) * FILES);
    expect(sent.with - sent.without, `with the record ${sent.with} requests, without ${sent.without}`).toBeLessThanOrEqual(RECORD_REQUESTS);
    // the record is complete all the same: every file with InvenioRDM's md5 of it, verified by it
    const draft = [...invenio.state.records.values()].at(-1)!;
    const bytes = draft.files.find((file) => file.key === 'ferry-provenance.json')?.bytes;
    const log = parseProvenance(bytes?.toString('utf8') ?? '');
    const files = log?.entries.at(-1)?.files ?? [];
    expect(files).toHaveLength(FILES);
    for (const file of files) expect(file, file.path).toMatchObject({ verified: true, destination_hashes: { md5: file.computed_hashes.md5 } });
  });

  it('local folders: no detail a file, and every file verified by the write\'s own record', async () => {
    await mkdir(path.join(root, 'workspace', 'Inbox'));
    const source = { target: 'local', resourceId: encodeLocalId('Study') };
    const submitted = await core.jobs.submit({
      kind: 'transfer',
      target: 'local',
      resource_id: encodeLocalId('Inbox'),
      source: { target: 'local', resource_id: source.resourceId },
      params: { source, containerId: encodeLocalId('Inbox'), duplicateAction: 'ignore', provenance: true },
      tokens: { source: core.accessKey, destination: core.accessKey },
    });
    const before = localDetails;
    let job = core.jobs.get(submitted.ticket_number)!;
    while (!isFinishedStatus(job.status)) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      job = core.jobs.get(submitted.ticket_number)!;
    }
    expect(job.status, job.error ?? '').toBe('succeeded');
    // the job's own (its destination, the record's place), never one a file
    expect(localDetails - before, 'details asked of the local target').toBeLessThanOrEqual(2);
    const checks = job.report?.written_checks ?? [];
    expect(checks.filter((check) => check.path !== 'Study/ferry-provenance.json')).toHaveLength(FILES);
    for (const check of checks) expect(check, check.path).toMatchObject({ result: 'verified', detail: expect.stringContaining('of its bytes as written (not read back)') });
    const log = parseProvenance(await readFile(path.join(root, 'workspace', 'Inbox', 'Study', 'ferry-provenance.json'), 'utf8'));
    const files = log?.entries.at(-1)?.files ?? [];
    expect(files).toHaveLength(FILES);
    for (const file of files) {
      expect(file, file.path).toMatchObject({ verified: true, destination_hashes: { md5: file.computed_hashes.md5, sha256: file.computed_hashes.sha256 } });
      expect(file.verification).toContain('md5 and sha256 of its bytes as written (not read back) matched');
    }
  });

  it.skipIf(apacheReason !== null)('WebDAV (Apache mod_dav): the record adds its own write, not a PROPFIND a file', async () => {
    const token = JSON.stringify({ url: proxy!.url, username: apache!.username, password: apache!.password });
    const sent = await requestsOf('webdav', token, () => davRequests);
    // a PUT and a MOVE a file, or one PUT where Apache is known to write PUTs atomically (fast path direct-puts)
    expect(sent.without).toBeGreaterThanOrEqual((fastPathOn('direct-puts') ? 1 : 2) * FILES);
    expect(sent.with - sent.without, `with the record ${sent.with} requests, without ${sent.without}`).toBeLessThanOrEqual(RECORD_REQUESTS);
  });
});
