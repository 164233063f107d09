// Issue #21 item 2 and 3, over real HTTP on loopback with the emulators: descriptive metadata
// read from GitHub and GitLab (with CITATION.cff), Dataverse and a local folder with
// ro-crate-metadata.json, reviewed through GET …/metadata/, and written to figshare, Zenodo,
// Dataverse and GitHub on a new top-level transfer. Each destination, described back through the
// same API, equals the source where it can hold the field; what it cannot hold is in the
// job's notes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Acknowledgement, DescriptiveMetadata, Job, ResourceSummary } from '../../shared/api.js';
import { MemorySecretStore } from '../../electron/core/keychain/memory.js';
import { tokenAccount } from '../../electron/core/keychain/port.js';
import { LocalTarget } from '../../electron/core/targets/local/index.js';
import { createDataverseTarget } from '../../electron/core/targets/dataverse/index.js';
import { createFigshareTarget } from '../../electron/core/targets/figshare/index.js';
import { createGithubTarget } from '../../electron/core/targets/github/index.js';
import { createGitlabTarget } from '../../electron/core/targets/gitlab/index.js';
import { createZenodoTarget } from '../../electron/core/targets/zenodo/index.js';
import { startDataverseEmulator, type DataverseEmulator } from '../emulators/dataverse/emulator.js';
import { startFigshareEmulator, type FigshareEmulator } from '../emulators/figshare/emulator.js';
import { startGithubEmulator, type GithubEmulator } from '../emulators/github/server.js';
import { startGitlabEmulator, type GitlabEmulator } from '../emulators/gitlab/server.js';
import { startZenodoEmulator, type ZenodoEmulator } from '../emulators/zenodo/emulator.js';
import { findByPath, startFerry, waitForJob, writeTree, type Ferry } from './harness.js';

let ferry: Ferry;
let github: GithubEmulator;
let gitlab: GitlabEmulator;
let figshare: FigshareEmulator;
let dataverse: DataverseEmulator;
let zenodo: ZenodoEmulator;

const CITATION = [
  'cff-version: 1.2.0',
  'message: Please cite this software as below.',
  'title: Survey analysis code',
  'abstract: Scripts that clean and summarise the coastal survey.',
  'authors:',
  '  - given-names: Ada',
  '    family-names: Lovelace',
  '    orcid: https://orcid.org/0000-0002-1825-0097',
  '  - given-names: Charles',
  '    family-names: Babbage',
  'keywords: [survey, salinity]',
  'license: MIT',
  'repository-code: https://github.example/ada/survey-code',
].join('\n');

const CRATE = {
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
      funder: { '@id': '#nerc' },
    },
    { '@id': 'https://orcid.org/0000-0002-1825-0097', '@type': 'Person', name: 'Ada Lovelace', affiliation: { '@id': '#society' } },
    { '@id': '#society', '@type': 'Organization', name: 'Analytical Society' },
    { '@id': '#nerc', '@type': 'Organization', name: 'NERC' },
  ],
};

beforeAll(async () => {
  github = await startGithubEmulator();
  gitlab = await startGitlabEmulator();
  figshare = await startFigshareEmulator({ processingReads: 0 });
  dataverse = await startDataverseEmulator();
  zenodo = await startZenodoEmulator();
  const user = { id: 7, login: 'ada' };
  github.state.tokens.set('gh-token', user);
  const repo = github.state.addRepo(user, 'survey-code', { 'CITATION.cff': CITATION, 'clean.py': 'print("clean")\n', 'lib/io.py': 'def load(): pass\n' });
  repo.description = 'Cleaning scripts';
  repo.topics = ['oceanography'];
  repo.license = { key: 'mit', name: 'MIT License', spdx_id: 'MIT' };
  const glUser = { id: 9, username: 'grace', name: 'Grace' };
  gitlab.state.tokens.set('gl-token', glUser);
  const project = gitlab.state.addProject(glUser, 'harbour-code', { 'CITATION.cff': CITATION.replace('Survey analysis code', 'Harbour analysis code'), 'clean.py': 'print("clean")\n' });
  project.description = 'Harbour scripts\n\nThat clean the readings.';
  project.topics = ['Oceanography', 'harbour data'];
  project.license = { key: 'apache-2.0', name: 'Apache License 2.0', nickname: null, html_url: 'http://choosealicense.com/licenses/apache-2.0/', source_url: 'http://www.apache.org/licenses/LICENSE-2.0.html' };
  const dataset = dataverse.state.addDataset(1, 'Harbour Salinity', { 'readings.csv': 'site,psu\nA,35\n', 'raw/log.txt': 'calibrated\n' });
  const primitive = (typeName: string, value: string) => ({ typeName, multiple: false, typeClass: 'primitive', value });
  dataset.citation = [
    { typeName: 'author', multiple: true, typeClass: 'compound', value: [{ authorName: primitive('authorName', 'Grace Hopper'), authorAffiliation: primitive('authorAffiliation', 'Navy'), authorIdentifierScheme: { typeName: 'authorIdentifierScheme', multiple: false, typeClass: 'controlledVocabulary', value: 'ORCID' }, authorIdentifier: primitive('authorIdentifier', '0000-0001-5109-3700') }] },
    { typeName: 'dsDescription', multiple: true, typeClass: 'compound', value: [{ dsDescriptionValue: primitive('dsDescriptionValue', 'Salinity in the harbour, monthly.') }] },
    { typeName: 'subject', multiple: true, typeClass: 'controlledVocabulary', value: ['Earth and Environmental Sciences'] },
    { typeName: 'keyword', multiple: true, typeClass: 'compound', value: [{ keywordValue: primitive('keywordValue', 'harbour') }, { keywordValue: primitive('keywordValue', 'salinity') }] },
  ];
  dataset.license = { name: 'CC BY 4.0', uri: 'http://creativecommons.org/licenses/by/4.0' };
  const secrets = new MemorySecretStore();
  await secrets.set(tokenAccount('github'), 'gh-token');
  await secrets.set(tokenAccount('gitlab'), 'gl-token');
  await secrets.set(tokenAccount('figshare'), 'figshare-token');
  await secrets.set(tokenAccount('dataverse'), 'dv-token-1111');
  await secrets.set(tokenAccount('zenodo'), 'zenodo-token');
  ferry = await startFerry({
    secrets,
    targets: (config, store) => {
      const remoteConfig = { ...config, remotes: { ...config.remotes, githubApiUrl: github.url, gitlabUrl: gitlab.url, figshareApiUrl: figshare.url, dataverseUrl: dataverse.url, zenodoUrl: zenodo.url } };
      return [
        new LocalTarget({ root: config.workspace }),
        createGithubTarget(remoteConfig, store, { writeSpacingMs: 0, maxRateWaitMs: 2000 }),
        createGitlabTarget(remoteConfig, store, { maxRateWaitMs: 2000, ratePerSecond: 1000 }),
        createFigshareTarget(remoteConfig, store, { ratePerSecond: 1000, retries: 1, downloadUrl: figshare.downloadUrl }),
        createDataverseTarget(remoteConfig, store, { ratePerSecond: 1000, retries: 0, journalDir: null, lockPollMs: 10 }),
        createZenodoTarget(remoteConfig, store, { ratePerSecond: 1000, retries: 2 }),
      ];
    },
  });
  await writeTree(ferry.workspace, { 'Tide Gauges/gauges.csv': 'gauge,m\nA,1.2\n', 'Tide Gauges/ro-crate-metadata.json': JSON.stringify(CRATE), 'Tide Gauges/raw/a.txt': 'a\n' });
}, 60_000);
afterAll(async () => {
  await ferry?.close();
  await Promise.all([github?.close(), gitlab?.close(), figshare?.close(), dataverse?.close(), zenodo?.close()]);
});

async function list(target: string, container = 'None'): Promise<ResourceSummary[]> {
  return (await (await ferry.fetch(`/api_v1/targets/${target}/resources/?container=${encodeURIComponent(container)}`, { headers: ferry.bearer() })).json()) as ResourceSummary[];
}

async function metadataOf(target: string, id: string): Promise<DescriptiveMetadata> {
  const response = await ferry.fetch(`/api_v1/targets/${target}/resources/${encodeURIComponent(id)}/metadata/`, { headers: ferry.bearer() });
  expect(response.status, await response.clone().text()).toBe(200);
  return (await response.json()) as DescriptiveMetadata;
}

async function transferToTop(to: string, from: string, sourceId: string, extra: Record<string, unknown> = {}): Promise<Job> {
  const response = await ferry.fetch(`/api_v1/targets/${to}/resources/`, {
    method: 'POST',
    body: JSON.stringify({ source_target_name: from, source_resource_id: sourceId, ...extra }),
    headers: ferry.bearer({ 'duplicate-file-action': 'ignore', 'content-type': 'application/json' }),
  });
  expect(response.status, await response.clone().text()).toBe(202);
  const job = await waitForJob(ferry, ((await response.json()) as Acknowledgement).ticket_number, 60_000);
  expect(job.status, job.error ?? '').toBe('succeeded');
  return job;
}

describe('descriptive metadata across targets', () => {
  it('GitHub with CITATION.cff → figshare: authors with ORCID, keywords, licence and abstract arrive; the rest is named', async () => {
    const repo = (await list('github')).find((node) => node.title === 'survey-code')!;
    const source = await metadataOf('github', repo.id);
    expect(source).toEqual({
      title: 'Survey analysis code',
      description: 'Scripts that clean and summarise the coastal survey.',
      keywords: ['survey', 'salinity'],
      license: 'MIT',
      creators: [{ name: 'Ada Lovelace', orcid: '0000-0002-1825-0097' }, { name: 'Charles Babbage' }],
      related_identifiers: [{ identifier: 'https://github.example/ada/survey-code', relation: 'isSupplementedBy' }],
    });
    const job = await transferToTop('figshare', 'github', repo.id);
    const article = figshare.state.articles.get(Number(job.report!.new_resource!.id.slice(1)))!;
    expect(article.described).toMatchObject({ license: 3, keywords: ['survey', 'salinity'], authors: [{ name: 'Ada Lovelace', orcid_id: '0000-0002-1825-0097' }, { name: 'Charles Babbage' }] });
    const back = await metadataOf('figshare', job.report!.new_resource!.id);
    expect(back).toEqual({ ...source, title: 'survey-code', related_identifiers: [{ identifier: 'https://github.example/ada/survey-code', relation: 'references' }] });
    expect(job.report!.notes).toEqual(
      expect.arrayContaining([expect.stringMatching(/without their relation/), expect.stringMatching(/named 'survey-code' after the source's folder; the title 'Survey analysis code' was not given/)]),
    );
  });

  it('GitLab with CITATION.cff and a detected licence → GitHub: description, homepage and topics arrive; the rest is named', async () => {
    const project = (await list('gitlab')).find((node) => node.title === 'harbour-code')!;
    const source = await metadataOf('gitlab', project.id);
    // the CITATION.cff wins where it says something (title, abstract, keywords, licence); GitLab's licence key is read with license=true
    expect(source).toEqual({
      title: 'Harbour analysis code',
      description: 'Scripts that clean and summarise the coastal survey.',
      keywords: ['survey', 'salinity'],
      license: 'MIT',
      creators: [{ name: 'Ada Lovelace', orcid: '0000-0002-1825-0097' }, { name: 'Charles Babbage' }],
      related_identifiers: [{ identifier: 'https://github.example/ada/survey-code', relation: 'isSupplementedBy' }],
    });
    expect(gitlab.state.requests).toContain(`GET /api/v4/projects/${project.id.slice(1)}`);

    const reviewed: DescriptiveMetadata = { description: 'Harbour scripts\n\nThat clean the readings.', keywords: ['Oceanography', 'harbour data', 'pH (total scale)'], license: 'Apache-2.0', related_identifiers: [{ identifier: 'https://doi.org/10.5281/zenodo.77', relation: 'isIdenticalTo' }] };
    const job = await transferToTop('github', 'gitlab', project.id, { metadata: reviewed });
    const made = github.state.repos.find((r) => r.name === 'harbour-code')!;
    expect(made).toMatchObject({ description: 'Harbour scripts That clean the readings.', homepage: 'https://doi.org/10.5281/zenodo.77', topics: ['oceanography', 'harbour-data'] });
    expect(job.report!.notes).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^GitHub keeps a description of one line/),
        expect.stringMatching(/'pH \(total scale\)' were not added as topics/),
        "GitHub reads a repository's licence from a LICENSE file in it, so the licence 'Apache-2.0' was not set; add that file.",
      ]),
    );
    // described back, the CITATION.cff that travelled with the files wins over the repository's own fields, as on GitLab
    expect(await metadataOf('github', job.report!.new_resource!.id)).toEqual(source);
  });

  it('Dataverse → Zenodo: the citation block becomes the record\'s creators, description, keywords and licence', async () => {
    const dataset = (await list('dataverse')).find((node) => node.title === 'Harbour Salinity')!;
    const source = await metadataOf('dataverse', dataset.id);
    expect(source).toEqual({
      title: 'Harbour Salinity',
      description: 'Salinity in the harbour, monthly.',
      creators: [{ name: 'Grace Hopper', orcid: '0000-0001-5109-3700', affiliation: 'Navy' }],
      keywords: ['harbour', 'salinity'],
      license: 'CC-BY-4.0',
    });
    const job = await transferToTop('zenodo', 'dataverse', dataset.id);
    expect(job.report!.notes ?? []).toEqual([expect.stringMatching(/^Zenodo keeps no folders: .*'raw\/log\.txt' as 'raw__log\.txt'/)]);
    const record = zenodo.state.records.get(job.report!.new_resource!.id.slice(1))!;
    expect(record.metadata).toMatchObject({
      creators: [{ person_or_org: { type: 'personal', family_name: 'Grace Hopper', identifiers: [{ scheme: 'orcid', identifier: '0000-0001-5109-3700' }] }, affiliations: [{ name: 'Navy' }] }],
      rights: [{ id: 'cc-by-4.0' }],
    });
    expect(await metadataOf('zenodo', job.report!.new_resource!.id)).toEqual(expect.objectContaining(source));
  });

  it('a local folder with ro-crate-metadata.json → Dataverse: author with ORCID as authorIdentifierScheme, licence from the installation, grant', async () => {
    const folder = findByPath(await list('local'), 'Tide Gauges')!;
    const source = await metadataOf('local', folder.id);
    expect(source).toEqual({
      title: 'Tide Gauges',
      description: 'Hourly sea level at three gauges.',
      creators: [{ name: 'Ada Lovelace', orcid: '0000-0002-1825-0097', affiliation: 'Analytical Society' }],
      keywords: ['tides', 'sea level'],
      license: 'CC-BY-4.0',
      funding: [{ funder: 'NERC' }],
    });
    const job = await transferToTop('dataverse', 'local', folder.id);
    expect(job.report!.notes ?? []).toEqual([]);
    const made = [...dataverse.state.datasets.values()].find((d) => d.title === 'Tide Gauges')!;
    const author = made.citation!.find((f) => f.typeName === 'author')!.value as Record<string, { value: string }>[];
    expect(author[0]!.authorIdentifierScheme!.value).toBe('ORCID');
    expect(made.license).toEqual({ name: 'CC BY 4.0', uri: 'http://creativecommons.org/licenses/by/4.0' });
    expect(await metadataOf('dataverse', job.report!.new_resource!.id)).toEqual(source);
  });

  it('takes reviewed metadata with the transfer instead of the source\'s, and refuses it for a folder', async () => {
    const dataset = (await list('dataverse')).find((node) => node.title === 'Harbour Salinity')!;
    const reviewed: DescriptiveMetadata = { title: 'Harbour Salinity', description: 'Edited.', creators: [{ name: 'Grace Hopper', orcid: 'https://orcid.org/0000-0001-5109-3700' }], keywords: ['edited'] };
    const job = await transferToTop('figshare', 'dataverse', dataset.id, { metadata: reviewed });
    // no licence in the reviewed copy: figshare gives a new item its default (CC BY 4.0)
    expect(await metadataOf('figshare', job.report!.new_resource!.id)).toEqual({ ...reviewed, creators: [{ name: 'Grace Hopper', orcid: '0000-0001-5109-3700' }], license: 'CC-BY-4.0' });

    const bad = await ferry.fetch('/api_v1/targets/figshare/resources/', {
      method: 'POST',
      body: JSON.stringify({ source_target_name: 'dataverse', source_resource_id: dataset.id, metadata: { creators: [{ orcid: 'x' }] } }),
      headers: ferry.bearer({ 'duplicate-file-action': 'ignore', 'content-type': 'application/json' }),
    });
    expect(bad.status).toBe(400);
    const intoFolder = await ferry.fetch(`/api_v1/targets/local/resources/${findByPath(await list('local'), 'Tide Gauges')!.id}/`, {
      method: 'POST',
      body: JSON.stringify({ source_target_name: 'dataverse', source_resource_id: dataset.id, metadata: reviewed }),
      headers: ferry.bearer({ 'duplicate-file-action': 'ignore', 'content-type': 'application/json' }),
    });
    expect(intoFolder.status).toBe(400);
    expect(((await intoFolder.json()) as { error: string }).error).toMatch(/new top-level resource/);
  });

  it('a file describes nothing ({}), and an unknown resource is a 404', async () => {
    const folder = findByPath(await list('local'), 'Tide Gauges')!;
    const file = (await list('local', folder.id)).find((node) => node.title === 'gauges.csv')!;
    expect(await metadataOf('local', file.id)).toEqual({});
    expect((await ferry.fetch('/api_v1/targets/figshare/resources/a999999/metadata/', { headers: ferry.bearer() })).status).toBe(404);
  });
});
