// Issue #21 item 2 (first part) with the done-means of the issue, over real HTTP on
// loopback with the OSF and Zenodo emulators: a transfer OSF → Zenodo creates a deposition
// whose creators, description, keywords and licence are the OSF project's, with a provenance file listing every
// file's source and destination hash; transferring that deposition on to a local folder
// appends a second entry.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Acknowledgement, Job, ResourceSummary, TargetDescription } from '../../shared/api.js';
import { MemorySecretStore } from '../../electron/core/keychain/memory.js';
import { tokenAccount } from '../../electron/core/keychain/port.js';
import type { ProvenanceLog } from '../../electron/core/provenance/format.js';
import { LocalTarget } from '../../electron/core/targets/local/index.js';
import { createOsfTarget } from '../../electron/core/targets/osf/index.js';
import { createZenodoTarget } from '../../electron/core/targets/zenodo/index.js';
import { startOsfEmulator, type OsfEmulator } from '../emulators/osf/emulator.js';
import { startZenodoEmulator, type ZenodoEmulator } from '../emulators/zenodo/emulator.js';
import { findByPath, startFerry, waitForJob, writeTree, type Ferry } from './harness.js';

let ferry: Ferry;
let osf: OsfEmulator;
let zenodo: ZenodoEmulator;
let projectId: string;

beforeAll(async () => {
  osf = await startOsfEmulator();
  zenodo = await startZenodoEmulator();
  const user = osf.state.addUser('Ada Lovelace');
  user.orcid = '0000-0002-1825-0097';
  const second = osf.state.addUser('Charles Babbage');
  const osfToken = osf.state.addToken(user.id);
  const node = osf.state.addNode({ title: 'Coastal Survey', owner: user.id, description: 'Salinity at two sites & monthly samples.', tags: ['coast', 'salinity'] });
  osf.state.addContributor(node.id, second.id, 'write');
  node.license = { id: '563c1cf88c5e4a3877f9e96a', name: 'CC-By Attribution 4.0 International' };
  osf.state.addFile(node.id, 'readings.csv', 'site,psu\nA,35\n');
  osf.state.addFile(node.id, 'raw/log.txt', 'calibrated\n');
  projectId = `n-${node.id}`;
  const secrets = new MemorySecretStore();
  await secrets.set(tokenAccount('osf'), osfToken);
  await secrets.set(tokenAccount('zenodo'), 'zenodo-token');
  ferry = await startFerry({
    secrets,
    targets: (config, store) => {
      const remoteConfig = { ...config, remotes: { ...config.remotes, osfApiUrl: osf.apiUrl, zenodoUrl: zenodo.url } };
      return [
        new LocalTarget({ root: config.workspace }),
        createOsfTarget(remoteConfig, store, { ratePerSecond: 200, retries: 2 }),
        createZenodoTarget(remoteConfig, store, { ratePerSecond: 1000, retries: 2 }),
      ];
    },
  });
  await writeTree(ferry.workspace, { 'Shelf/keep.txt': 'keep\n' });
});
afterAll(async () => {
  await ferry?.close();
  await osf?.close();
  await zenodo?.close();
});

async function list(target: string, container = 'None'): Promise<ResourceSummary[]> {
  return (await (await ferry.fetch(`/api_v1/targets/${target}/resources/?container=${encodeURIComponent(container)}`, { headers: ferry.bearer() })).json()) as ResourceSummary[];
}

async function transfer(to: string, into: string | null, from: string, sourceId: string): Promise<Job> {
  const response = await ferry.fetch(`/api_v1/targets/${to}/resources/${into ? `${encodeURIComponent(into)}/` : ''}`, {
    method: 'POST',
    body: JSON.stringify({ source_target_name: from, source_resource_id: sourceId }),
    headers: ferry.bearer({ 'duplicate-file-action': 'ignore', 'content-type': 'application/json' }),
  });
  expect(response.status, await response.clone().text()).toBe(202);
  const job = await waitForJob(ferry, ((await response.json()) as Acknowledgement).ticket_number, 60_000);
  expect(job.status, job.error ?? '').toBe('succeeded');
  return job;
}

describe('OSF → Zenodo → local', () => {
  it('carries the project creators, description, keywords and licence, and the provenance record, across two hops', async () => {
    const project = (await list('osf')).find((node) => node.title === 'Coastal Survey')!;
    expect(project.id).toBe(projectId);
    const toZenodo = await transfer('zenodo', null, 'osf', project.id);
    const deposition = zenodo.state.records.get(toZenodo.report!.new_resource!.id.slice(1))!;
    // the records API's metadata schema (docs/targets/zenodo.md "Metadata")
    expect(deposition.title).toBe('Coastal Survey');
    expect(deposition.metadata).toMatchObject({
      description: '<p>Salinity at two sites &amp; monthly samples.</p>',
      subjects: [{ subject: 'coast' }, { subject: 'salinity' }],
      creators: [
        { person_or_org: { type: 'personal', family_name: 'Ada Lovelace', identifiers: [{ scheme: 'orcid', identifier: '0000-0002-1825-0097' }] } },
        { person_or_org: { type: 'personal', family_name: 'Charles Babbage' } },
      ],
      rights: [{ id: 'cc-by-4.0' }],
      resource_type: { id: 'dataset' },
    });
    expect(toZenodo.report!.notes ?? []).toEqual([expect.stringMatching(/^Zenodo keeps no folders: .*'raw\/log\.txt' as 'raw__log\.txt'/)]);
    const record = deposition.files.find((file) => file.key === 'ferry-provenance.json')!;
    const first = (JSON.parse(record.bytes!.toString('utf8')) as ProvenanceLog).entries[0]!;
    expect(first.source).toMatchObject({ target: 'osf', resource_id: project.id, title: 'Coastal Survey' });
    expect(first.files.map((file) => file.path.split('/').slice(1).join('/')).sort()).toEqual(['raw/log.txt', 'readings.csv']);
    for (const file of first.files) {
      expect(Object.keys(file.source_hashes)).toEqual(expect.arrayContaining(['md5']));
      expect(file.destination_hashes?.md5).toBe(file.source_hashes.md5);
      expect(file.verified, file.verification).toBe(true);
    }

    const shelf = findByPath(await list('local', 'None'), 'Shelf')!;
    const toLocal = await transfer('local', shelf.id, 'zenodo', toZenodo.report!.new_resource!.id);
    const log = JSON.parse(await readFile(path.join(ferry.workspace, 'Shelf', toZenodo.report!.new_resource!.title, 'ferry-provenance.json'), 'utf8')) as ProvenanceLog;
    expect(log.entries.map((entry) => [entry.source.target, entry.destination.target])).toEqual([
      ['osf', 'zenodo'],
      ['zenodo', 'local'],
    ]);
    expect(log.entries[1]!.job).toBe(toLocal.ticket_number);
    expect(log.entries[1]!.files.every((file) => file.verified)).toBe(true);
  });

  it('a destination that keeps no metadata says so in the job instead of dropping it silently', async () => {
    const project = (await list('osf')).find((node) => node.title === 'Coastal Survey')!;
    const job = await transfer('local', null, 'osf', project.id);
    expect(job.report!.notes).toEqual([expect.stringMatching(/^The destination \(Local folders\) keeps no descriptive metadata: the source's title, description, creators, keywords, license were not carried/)]);
  });
});

describe('GET /api_v1/targets/ keeps_metadata', () => {
  it('says which destinations keep descriptive metadata, in the list and on each target', async () => {
    const listed = (await (await ferry.fetch('/api_v1/targets/')).json()) as TargetDescription[];
    expect(Object.fromEntries(listed.map((t) => [t.name, t.keeps_metadata]))).toEqual({ local: false, osf: true, zenodo: true });
    expect(((await (await ferry.fetch('/api_v1/targets/zenodo/')).json()) as TargetDescription).keeps_metadata).toBe(true);
  });
});
