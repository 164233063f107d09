// Issue #21 item 1: every upload and transfer writes (or extends) ferry-provenance.json at
// the top of what it wrote, over real HTTP on loopback, with the Zenodo emulator as a flat
// destination. The record follows the data: the next hop appends its own entry.
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Acknowledgement, Job, ResourceSummary } from '../../shared/api.js';
import { MemorySecretStore } from '../../electron/core/keychain/memory.js';
import { tokenAccount } from '../../electron/core/keychain/port.js';
import type { ProvenanceLog } from '../../electron/core/provenance/format.js';
import { LocalTarget } from '../../electron/core/targets/local/index.js';
import { createZenodoTarget } from '../../electron/core/targets/zenodo/index.js';
import { bagNameFor, writeBagZip } from '../../electron/core/bag/bag-writer.js';
import { folderReadResult } from '../../electron/core/bag/testing/folder-source.js';
import { startZenodoEmulator, type ZenodoEmulator } from '../emulators/zenodo/emulator.js';
import { expectApiError, findByPath, renamed, startFerry, uploadForm, waitForJob, writeTree, type Ferry } from './harness.js';

const md5 = (text: string) => createHash('md5').update(text).digest('hex');

let ferry: Ferry;
let zenodo: ZenodoEmulator;
let otherRoot: string;
beforeAll(async () => {
  zenodo = await startZenodoEmulator();
  const secrets = new MemorySecretStore();
  await secrets.set(tokenAccount('zenodo'), 'zenodo-token');
  ferry = await startFerry({
    secrets,
    targets: (config, store) => {
      otherRoot = path.join(path.dirname(config.workspace), 'other');
      const remoteConfig = { ...config, remotes: { ...config.remotes, zenodoUrl: zenodo.url } };
      return [
        new LocalTarget({ root: config.workspace }),
        renamed(new LocalTarget({ root: otherRoot }), 'other', 'Other folder'),
        createZenodoTarget(remoteConfig, store, { ratePerSecond: 1000, retries: 2 }),
      ];
    },
  });
  await writeTree(ferry.workspace, { 'Study/a.csv': 'x,y\n1,2\n', 'Study/raw/b.txt': 'raw\n', 'Quiet/c.txt': 'c\n' });
  await writeTree(otherRoot, { 'Inbox/keep.txt': 'keep\n', 'Archive/keep.txt': 'keep\n' });
});
afterAll(async () => {
  await ferry?.close();
  await zenodo?.close();
});

async function list(target: string): Promise<ResourceSummary[]> {
  return (await (await ferry.fetch(`/api_v1/targets/${target}/resources/`, { headers: ferry.bearer() })).json()) as ResourceSummary[];
}

async function transfer(to: string, into: string | null, from: string, sourceId: string, extra: Record<string, string> = {}): Promise<Job> {
  const where = into === null ? `/api_v1/targets/${to}/resources/` : `/api_v1/targets/${to}/resources/${encodeURIComponent(into)}/`;
  const response = await ferry.fetch(where, {
    method: 'POST',
    body: JSON.stringify({ source_target_name: from, source_resource_id: sourceId }),
    headers: ferry.bearer({ 'duplicate-file-action': 'ignore', 'content-type': 'application/json', ...extra }),
  });
  expect(response.status, await response.clone().text()).toBe(202);
  const job = await waitForJob(ferry, ((await response.json()) as Acknowledgement).ticket_number);
  expect(job.status, job.error ?? '').toBe('succeeded');
  return job;
}

const readLog = async (file: string) => JSON.parse(await readFile(file, 'utf8')) as ProvenanceLog;

describe('ferry-provenance.json in every destination', () => {
  let zenodoJob: Job;

  it('a transfer into a folder records every file with source and destination hashes, verified', async () => {
    const study = findByPath(await list('local'), 'Study')!;
    const inbox = findByPath(await list('other'), 'Inbox')!;
    const job = await transfer('other', inbox.id, 'local', study.id);
    const log = await readLog(path.join(otherRoot, 'Inbox/Study/ferry-provenance.json'));
    expect(log.format).toBe('ferry-provenance/1');
    expect(log.entries).toHaveLength(1);
    const [entry] = log.entries;
    expect(entry).toMatchObject({
      action: 'transfer',
      job: job.ticket_number,
      source: { target: 'local', resource_id: study.id, title: 'Study' },
      destination: { target: 'other', resource_id: inbox.id },
    });
    const byPath = new Map(entry!.files.map((file) => [file.path, file]));
    expect([...byPath.keys()].sort()).toEqual(['Study/a.csv', 'Study/raw/b.txt']);
    expect(byPath.get('Study/a.csv')).toMatchObject({ outcome: 'created', size: 8, verified: true, destination_hashes: { md5: md5('x,y\n1,2\n') }, computed_hashes: { md5: md5('x,y\n1,2\n') } });
    expect(byPath.get('Study/a.csv')!.verification).toMatch(/matched/);
    // the record is not a file of the data: the job's report lists only what was transferred
    expect(job.report!.resources_created).toEqual(expect.arrayContaining(['Study/a.csv', 'Study/raw/b.txt']));
    expect(job.report!.resources_created.filter((created) => created.endsWith('ferry-provenance.json'))).toEqual([]);
    expect(await readdir(path.join(otherRoot, 'Inbox'))).toEqual(expect.arrayContaining(['keep.txt', 'Study']));
  });

  it('a transfer to Zenodo stores the record as a top-level file of the new deposition, md5-verified', async () => {
    const study = findByPath(await list('local'), 'Study')!;
    zenodoJob = await transfer('zenodo', null, 'local', study.id);
    const deposition = zenodo.state.records.get(zenodoJob.report!.new_resource!.id.slice(1))!;
    expect(deposition.files.map((file) => file.key).sort()).toEqual(['a.csv', 'ferry-provenance.json', 'raw__b.txt']);
    const record = deposition.files.find((file) => file.key === 'ferry-provenance.json')!;
    const log = JSON.parse(record.bytes!.toString('utf8')) as ProvenanceLog;
    expect(log.entries).toHaveLength(1);
    const files1 = log.entries[0]!.files;
    expect(files1.map((file) => [file.path, file.verified, file.destination_hashes?.md5])).toEqual([
      ['Study/a.csv', true, md5('x,y\n1,2\n')],
      ['Study/raw/b.txt', true, md5('raw\n')],
    ]);
  });

  it('transferring that deposition on to a local folder appends a second entry to the record it carries', async () => {
    const id = zenodoJob.report!.new_resource!.id;
    const archive = findByPath(await list('other'), 'Archive')!;
    const job = await transfer('other', archive.id, 'zenodo', id);
    const title = zenodoJob.report!.new_resource!.title;
    const log = await readLog(path.join(otherRoot, 'Archive', title, 'ferry-provenance.json'));
    expect(log.entries.map((entry) => [entry.action, entry.source.target, entry.destination.target])).toEqual([
      ['transfer', 'local', 'zenodo'],
      ['transfer', 'zenodo', 'other'],
    ]);
    const second = log.entries[1]!;
    expect(second.job).toBe(job.ticket_number);
    expect(second.source.identifier).toMatch(/^https?:\/\//);
    // the carried record is not itself listed as a transferred file; the name Ferry flattened
    // on Zenodo (its first entry says so) is a folder again
    expect(second.files.map((file) => file.path).sort()).toEqual([`${title}/a.csv`, `${title}/raw/b.txt`]);
    expect(second.files.map((file) => [file.fixity, file.verified])).toEqual([['ok', true], ['ok', true]]);
  });

  it('where the destination already holds a record, both histories are kept, and an ignored file is not called verified', async () => {
    const inbox = findByPath(await list('other'), 'Inbox')!;
    await transfer('other', inbox.id, 'zenodo', zenodoJob.report!.new_resource!.id);
    const log = await readLog(path.join(otherRoot, 'Inbox/Study/ferry-provenance.json'));
    expect(log.entries.map((entry) => [entry.source.target, entry.destination.target])).toEqual([
      ['local', 'other'],
      ['local', 'zenodo'],
      ['zenodo', 'other'],
    ]);
    const ignored = log.entries[2]!.files.find((file) => file.path === 'Study/a.csv')!;
    expect(ignored).toMatchObject({ outcome: 'ignored', fixity: 'not-read', verified: false });
    expect(ignored.verification).toMatch(/^Not verified: Other folder already had a file at this path/);
  });

  it('a bag downloaded earlier keeps its download entry when uploaded: the upload appends', async () => {
    const bagName = bagNameFor('local', 'quiet');
    const zipPath = path.join(ferry.root, 'quiet.zip');
    await pipeline(writeBagZip(folderReadResult(path.join(ferry.workspace, 'Quiet')), { targetName: 'local', resourceId: 'quiet', bagName }), createWriteStream(zipPath));
    const response = await ferry.fetch('/api_v1/targets/other/resources/', {
      method: 'POST',
      body: uploadForm(await readFile(zipPath)),
      headers: ferry.auth({ 'duplicate-file-action': 'ignore' }),
    });
    expect(response.status, await response.clone().text()).toBe(202);
    const job = await waitForJob(ferry, ((await response.json()) as Acknowledgement).ticket_number);
    expect(job.status, job.error ?? '').toBe('succeeded');
    const log = await readLog(path.join(otherRoot, 'Quiet/ferry-provenance.json'));
    expect(log.entries.map((entry) => entry.action)).toEqual(['download', 'upload']);
    expect(log.entries[1]).toMatchObject({ job: job.ticket_number, source: { target: 'bag', title: 'Quiet' } });
    expect(log.entries[1]!.files).toMatchObject([{ path: 'Quiet/c.txt', fixity: 'ok', verified: true }]);
  });

  it('ferry-provenance: off writes no record; another value is refused before the job starts', async () => {
    const quiet = findByPath(await list('local'), 'Quiet')!;
    const inbox = findByPath(await list('other'), 'Inbox')!;
    await transfer('other', inbox.id, 'local', quiet.id, { 'ferry-provenance': 'off' });
    expect(await readdir(path.join(otherRoot, 'Inbox/Quiet'))).toEqual(['c.txt']);
    const refused = await ferry.fetch(`/api_v1/targets/other/resources/${encodeURIComponent(inbox.id)}/`, {
      method: 'POST',
      body: JSON.stringify({ source_target_name: 'local', source_resource_id: quiet.id }),
      headers: ferry.auth({ 'duplicate-file-action': 'ignore', 'content-type': 'application/json', 'ferry-provenance': 'maybe' }),
    });
    await expectApiError(refused, 400, 'bad_request');
  });
});
