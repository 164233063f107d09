// Issue #21 items 2 and 3, over real HTTP on loopback: a ZIP or bag uploaded as a NEW
// top-level resource that holds a ro-crate-metadata.json or CITATION.cff (in its one top
// folder, at the top of a bag's data/, or beside bagit.txt) gives the new resource that
// metadata, as a transfer gives the source's. ZIPs are built here (yazl), sent as multipart,
// and the records the emulators made are read back.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import yazl from 'yazl';
import type { Acknowledgement, DescriptiveMetadata, Job } from '../../shared/api.js';
import { MemorySecretStore } from '../../electron/core/keychain/memory.js';
import { tokenAccount } from '../../electron/core/keychain/port.js';
import { LocalTarget } from '../../electron/core/targets/local/index.js';
import { createFigshareTarget } from '../../electron/core/targets/figshare/index.js';
import { createZenodoTarget } from '../../electron/core/targets/zenodo/index.js';
import { startFigshareEmulator, type FigshareEmulator } from '../emulators/figshare/emulator.js';
import { startZenodoEmulator, type ZenodoEmulator } from '../emulators/zenodo/emulator.js';
import { findByPath, startFerry, uploadForm, waitForJob, type Ferry } from './harness.js';

let ferry: Ferry;
let figshare: FigshareEmulator;
let zenodo: ZenodoEmulator;

const CRATE = JSON.stringify({
  '@context': 'https://w3id.org/ro/crate/1.1/context',
  '@graph': [
    { '@id': 'ro-crate-metadata.json', '@type': 'CreativeWork', about: { '@id': './' }, conformsTo: { '@id': 'https://w3id.org/ro/crate/1.1' } },
    {
      '@id': './',
      '@type': 'Dataset',
      name: 'Tide Gauges',
      description: 'Hourly sea level at three gauges.',
      author: [{ '@id': 'https://orcid.org/0000-0002-1825-0097' }],
      keywords: ['tides', 'sea level'],
      license: { '@id': 'https://creativecommons.org/licenses/by/4.0/' },
    },
    { '@id': 'https://orcid.org/0000-0002-1825-0097', '@type': 'Person', name: 'Ada Lovelace', affiliation: { '@id': '#society' } },
    { '@id': '#society', '@type': 'Organization', name: 'Analytical Society' },
  ],
});

const CITATION = [
  'cff-version: 1.2.0',
  'message: Please cite as below.',
  'title: Harbour Salinity',
  'abstract: Salinity in the harbour, monthly.',
  'authors:',
  '  - given-names: Grace',
  '    family-names: Hopper',
  '    orcid: https://orcid.org/0000-0001-5109-3700',
  'keywords: [harbour, salinity]',
].join('\n');

/** A ZIP of `files` (name → text), as a desktop archiver writes one. */
async function zipOf(files: Record<string, string>): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const [name, content] of Object.entries(files)) zip.addBuffer(Buffer.from(content), name);
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** A bag's files: `payload` under data/ with its sha256 manifest, `tags` beside bagit.txt. */
function bagOf(payload: Record<string, string>, tags: Record<string, string> = {}): Record<string, string> {
  const sha = (text: string) => createHash('sha256').update(text).digest('hex');
  return {
    'bagit.txt': 'BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n',
    'manifest-sha256.txt': Object.entries(payload).map(([file, content]) => `${sha(content)}  data/${file}\n`).join(''),
    ...tags,
    ...Object.fromEntries(Object.entries(payload).map(([file, content]) => [`data/${file}`, content])),
  };
}

async function uploadToTop(target: string, zip: Buffer): Promise<Job> {
  const response = await ferry.fetch(`/api_v1/targets/${target}/resources/`, { method: 'POST', body: uploadForm(zip), headers: ferry.bearer({ 'duplicate-file-action': 'ignore' }) });
  expect(response.status, await response.clone().text()).toBe(202);
  const job = await waitForJob(ferry, ((await response.json()) as Acknowledgement).ticket_number, 60_000);
  expect(job.status, job.error ?? '').toBe('succeeded');
  return job;
}

async function metadataOf(target: string, id: string): Promise<DescriptiveMetadata> {
  const response = await ferry.fetch(`/api_v1/targets/${target}/resources/${encodeURIComponent(id)}/metadata/`, { headers: ferry.bearer() });
  expect(response.status, await response.clone().text()).toBe(200);
  return (await response.json()) as DescriptiveMetadata;
}

beforeAll(async () => {
  figshare = await startFigshareEmulator({ processingReads: 0 });
  zenodo = await startZenodoEmulator();
  const secrets = new MemorySecretStore();
  await secrets.set(tokenAccount('figshare'), 'figshare-token');
  await secrets.set(tokenAccount('zenodo'), 'zenodo-token');
  ferry = await startFerry({
    secrets,
    targets: (config, store) => {
      const remoteConfig = { ...config, remotes: { ...config.remotes, figshareApiUrl: figshare.url, zenodoUrl: zenodo.url } };
      return [
        new LocalTarget({ root: config.workspace }),
        createFigshareTarget(remoteConfig, store, { ratePerSecond: 1000, retries: 1, downloadUrl: figshare.downloadUrl }),
        createZenodoTarget(remoteConfig, store, { ratePerSecond: 1000, retries: 2 }),
      ];
    },
  });
}, 60_000);
afterAll(async () => {
  await ferry?.close();
  await Promise.all([figshare?.close(), zenodo?.close()]);
});

describe('metadata from an uploaded ZIP or bag', () => {
  it('a ZIP whose top folder holds ro-crate-metadata.json → Zenodo: the record has its creators with ORCID and affiliation, description, keywords and licence', async () => {
    const job = await uploadToTop('zenodo', await zipOf({ 'Tide Gauges/gauges.csv': 'gauge,m\nA,1.2\n', 'Tide Gauges/ro-crate-metadata.json': CRATE }));
    expect(job.report!.notes ?? []).toEqual([]);
    const record = zenodo.state.records.get(job.report!.new_resource!.id.slice(1))!;
    expect(record.metadata).toMatchObject({
      description: '<p>Hourly sea level at three gauges.</p>',
      creators: [{ person_or_org: { type: 'personal', identifiers: [{ scheme: 'orcid', identifier: '0000-0002-1825-0097' }] }, affiliations: [{ name: 'Analytical Society' }] }],
      subjects: [{ subject: 'tides' }, { subject: 'sea level' }],
      rights: [{ id: 'cc-by-4.0' }],
    });
    expect(await metadataOf('zenodo', job.report!.new_resource!.id)).toEqual({
      title: 'Tide Gauges',
      description: 'Hourly sea level at three gauges.',
      creators: [{ name: 'Ada Lovelace', orcid: '0000-0002-1825-0097', affiliation: 'Analytical Society' }],
      keywords: ['tides', 'sea level'],
      license: 'CC-BY-4.0',
      publication_date: expect.any(String),
    });
    // the metadata file is data like any other: it is in the record too
    expect(record.files.map((f) => f.key).sort()).toEqual(['ferry-provenance.json', 'gauges.csv', 'ro-crate-metadata.json']);
  });

  it("a bag → figshare: the CITATION.cff in data/<folder> wins field by field; the bag's own RO-Crate beside bagit.txt fills the licence", async () => {
    // the packager's crate: another description (the CITATION.cff's wins) and CC0, which the CITATION.cff does not say (figshare's default would be CC BY 4.0)
    const packaging = CRATE.replace('Hourly sea level at three gauges.', 'Packed by a lab tool.').replace('Tide Gauges', 'Packed').replace('https://creativecommons.org/licenses/by/4.0/', 'https://creativecommons.org/publicdomain/zero/1.0/');
    const job = await uploadToTop('figshare', await zipOf(bagOf({ 'Harbour/readings.csv': 'site,psu\nA,35\n', 'Harbour/CITATION.cff': CITATION }, { 'ro-crate-metadata.json': packaging })));
    const article = figshare.state.articles.get(Number(job.report!.new_resource!.id.slice(1)))!;
    expect(article.described).toMatchObject({ authors: [{ name: 'Grace Hopper', orcid_id: '0000-0001-5109-3700' }], keywords: ['harbour', 'salinity'], license: 2 });
    expect(await metadataOf('figshare', job.report!.new_resource!.id)).toMatchObject({
      description: 'Salinity in the harbour, monthly.',
      creators: [{ name: 'Grace Hopper', orcid: '0000-0001-5109-3700' }],
      keywords: ['harbour', 'salinity'],
      license: 'CC0-1.0',
    });
    // named after the bag's folder; the described title it does not bear is said, not dropped
    expect(job.report!.notes).toEqual(expect.arrayContaining([expect.stringMatching(/named 'Harbour' after the source's folder; the title 'Harbour Salinity' was not given to it/)]));
  });

  it('a destination that keeps no metadata keeps the file that says it, which describes the new folder there; an upload into a folder takes none', async () => {
    const job = await uploadToTop('local', await zipOf({ 'Survey/CITATION.cff': CITATION, 'Survey/a.csv': '1\n' }));
    expect(job.report!.notes ?? []).toEqual([]);
    expect(await metadataOf('local', job.report!.new_resource!.id)).toEqual({ title: 'Harbour Salinity', description: 'Salinity in the harbour, monthly.', creators: [{ name: 'Grace Hopper', orcid: '0000-0001-5109-3700' }], keywords: ['harbour', 'salinity'] });

    const list = (await (await ferry.fetch('/api_v1/targets/zenodo/resources/?container=None', { headers: ferry.bearer() })).json()) as { id: string; title: string; container: string }[];
    const record = findByPath(list, 'Tide Gauges')!;
    const before = structuredClone(zenodo.state.records.get(record.id.slice(1))!.metadata);
    const response = await ferry.fetch(`/api_v1/targets/zenodo/resources/${encodeURIComponent(record.id)}/`, { method: 'POST', body: uploadForm(await zipOf({ 'more.csv': '2\n', 'CITATION.cff': CITATION })), headers: ferry.bearer({ 'duplicate-file-action': 'ignore' }) });
    const into = await waitForJob(ferry, ((await response.json()) as Acknowledgement).ticket_number, 60_000);
    expect(into.status, into.error ?? '').toBe('succeeded');
    expect(zenodo.state.records.get(record.id.slice(1))!.metadata).toEqual(before);
  });
});
