// Issue #21 part 1: folder modes for records that keep no folders, over real HTTP on loopback.
// A three-level tree goes from a local folder to the Zenodo emulator (an InvenioRDM instance)
// and to the figshare emulator in each mode (header ferry-folders), is stored as the mode
// says, and comes back to a local folder byte for byte with its paths, rebuilt from what
// ferry-provenance.json records of the write.
import { randomBytes } from 'node:crypto';
import { readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Acknowledgement, Job, ResourceSummary, TargetDescription } from '../../shared/api.js';
import { MemorySecretStore } from '../../electron/core/keychain/memory.js';
import { tokenAccount } from '../../electron/core/keychain/port.js';
import type { ProvenanceLog } from '../../electron/core/provenance/format.js';
import { LocalTarget } from '../../electron/core/targets/local/index.js';
import { createFigshareTarget } from '../../electron/core/targets/figshare/index.js';
import { createZenodoTarget } from '../../electron/core/targets/zenodo/index.js';
import { startFigshareEmulator, type FigshareEmulator } from '../emulators/figshare/emulator.js';
import { startZenodoEmulator, type ZenodoEmulator } from '../emulators/zenodo/emulator.js';
import { expectApiError, findByPath, snapshotTree, startFerry, unzipTo, uploadForm, waitForJob, writeTree, zipFolder, type Ferry } from './harness.js';

let ferry: Ferry;
let zenodo: ZenodoEmulator;
let figshare: FigshareEmulator;

// three levels below the record, a name that only looks flattened, text and incompressible bytes
const TREE = {
  'Survey/readme.txt': 'Coastal survey, 2026.\n',
  'Survey/notes__draft.txt': 'a name with the separator in it\n',
  'Survey/raw/run1.csv': 'site,psu\n'.concat('A,35\n'.repeat(2000)),
  'Survey/raw/deep/gauge/levels.bin': randomBytes(200_000),
  'Survey/docs/method.md': '# Method\n',
};

beforeAll(async () => {
  zenodo = await startZenodoEmulator();
  figshare = await startFigshareEmulator({ processingReads: 0 });
  const secrets = new MemorySecretStore();
  await secrets.set(tokenAccount('zenodo'), 'zenodo-token');
  await secrets.set(tokenAccount('figshare'), 'figshare-token');
  ferry = await startFerry({
    secrets,
    targets: (config, store) => {
      const remoteConfig = { ...config, remotes: { ...config.remotes, zenodoUrl: zenodo.url, figshareApiUrl: figshare.url } };
      return [
        new LocalTarget({ root: config.workspace }),
        createZenodoTarget(remoteConfig, store, { ratePerSecond: 1000, retries: 2 }),
        createFigshareTarget(remoteConfig, store, { ratePerSecond: 1000, retries: 1, downloadUrl: figshare.downloadUrl }),
      ];
    },
  });
  await writeTree(ferry.workspace, TREE);
}, 60_000);
afterAll(async () => {
  await ferry?.close();
  await Promise.all([zenodo?.close(), figshare?.close()]);
});

async function list(target: string, container?: string): Promise<ResourceSummary[]> {
  const query = container === undefined ? '' : `?container=${encodeURIComponent(container)}`;
  return (await (await ferry.fetch(`/api_v1/targets/${target}/resources/${query}`, { headers: ferry.bearer() })).json()) as ResourceSummary[];
}

function post(to: string, into: string | null, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Response> {
  const where = into === null ? `/api_v1/targets/${to}/resources/` : `/api_v1/targets/${to}/resources/${encodeURIComponent(into)}/`;
  return ferry.fetch(where, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: ferry.bearer({ 'duplicate-file-action': 'ignore', 'content-type': 'application/json', ...headers }),
  });
}

async function transfer(to: string, into: string | null, from: string, sourceId: string, headers: Record<string, string> = {}): Promise<Job> {
  const response = await post(to, into, { source_target_name: from, source_resource_id: sourceId }, headers);
  expect(response.status, await response.clone().text()).toBe(202);
  const job = await waitForJob(ferry, ((await response.json()) as Acknowledgement).ticket_number, 60_000);
  expect(job.status, `${job.error ?? ''} ${JSON.stringify(job.report?.file_errors ?? [])}`).toBe('succeeded');
  return job;
}

/** The tree as written, without the provenance record the transfers add. */
function withoutRecord(tree: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(tree).filter(([file]) => !file.endsWith('ferry-provenance.json')));
}

const STORED: Record<string, string[]> = {
  flatten: ['docs__method.md', 'ferry-provenance.json', 'notes__draft.txt', 'raw__deep__gauge__levels.bin', 'raw__run1.csv', 'readme.txt'],
  'zip-per-folder': ['docs.zip', 'ferry-provenance.json', 'notes__draft.txt', 'raw.zip', 'readme.txt'],
  bag: ['Survey.zip', 'ferry-provenance.json'],
};

describe.each(['zenodo', 'figshare'])('folder modes on %s', (target) => {
  it.each(['flatten', 'zip-per-folder', 'bag'])('%s: a three-level tree goes there and comes back byte for byte, with its paths', async (mode) => {
    const survey = findByPath(await list('local'), 'Survey')!;
    const job = await transfer(target, null, 'local', survey.id, { 'ferry-folders': mode });
    const record = job.report!.new_resource!;
    // stored as the mode says: no folders inside the record
    const stored = await list(target, record.id);
    expect(stored.map((node) => node.title).sort()).toEqual(STORED[mode]);
    // and the report says so
    expect(job.report!.notes ?? []).toContainEqual(expect.stringMatching(/keeps no folders: /));

    // the mode and what each stored name stands for are in the record's provenance
    const log = storedLog(target, record.id);
    const entry = log.entries.at(-1)!;
    expect(entry.folders?.mode).toBe(mode);
    if (mode === 'zip-per-folder') {
      expect(entry.folders!.stored).toEqual(expect.arrayContaining([{ file: 'raw.zip', path: 'raw' }, { file: 'docs.zip', path: 'docs' }]));
      // each ZIP holds its folder by name, its text deflated (smaller than the bytes it holds)
      const zip = storedBytes(target, record.id, 'raw.zip');
      expect(zip.includes('raw/deep/gauge/levels.bin')).toBe(true);
      expect(zip.length).toBeLessThan(TREE['Survey/raw/deep/gauge/levels.bin'].length + TREE['Survey/raw/run1.csv'].length);
    }
    if (mode === 'flatten') expect(entry.folders!.stored).not.toContainEqual(expect.objectContaining({ file: 'notes__draft.txt' }));

    // back to a local folder: the tree as it was (a name that only looks flattened stays one file)
    const back = `Back ${target} ${mode}`;
    await writeTree(ferry.workspace, { [`${back}/.keep`]: '' });
    const into = findByPath(await list('local'), back)!;
    await transfer('local', into.id, target, record.id);
    const original = await snapshotTree(path.join(ferry.workspace, 'Survey'));
    const returned = withoutRecord(await snapshotTree(path.join(ferry.workspace, back, record.title)));
    expect(returned).toEqual(original);
  });
});

/** A file of the record as the service stores it. */
function storedBytes(target: string, recordId: string, name: string): Buffer {
  const files: { key?: string; name?: string; bytes: Buffer | null }[] =
    target === 'zenodo' ? zenodo.state.records.get(recordId.slice(1))!.files : figshare.state.articles.get(Number(/a(\d+)$/.exec(recordId)![1]))!.files;
  return files.find((file) => (file.key ?? file.name) === name)!.bytes!;
}

function storedLog(target: string, recordId: string): ProvenanceLog {
  return JSON.parse(storedBytes(target, recordId, 'ferry-provenance.json').toString('utf8')) as ProvenanceLog;
}

describe('into an existing record', () => {
  // flatten: the write's record sits in its folder (Survey/ferry-provenance.json, flattened); zip-per-folder: at the top
  const STORED_INTO: Record<string, string[]> = {
    flatten: ['Survey__docs__method.md', 'Survey__ferry-provenance.json', 'Survey__notes__draft.txt', 'Survey__raw__deep__gauge__levels.bin', 'Survey__raw__run1.csv', 'Survey__readme.txt', 'old.txt'],
    'zip-per-folder': ['Survey.zip', 'ferry-provenance.json', 'old.txt'],
  };

  it.each(['flatten', 'zip-per-folder'])('%s: the folder written sits beside the files there, and the record reads back with it as a folder', async (mode) => {
    const shared = zenodo.state.addRecord(1, `Shared ${mode}`, { 'old.txt': 'old\n' });
    const survey = findByPath(await list('local'), 'Survey')!;
    await transfer('zenodo', `r${shared.id}`, 'local', survey.id, { 'ferry-folders': mode });
    expect(zenodo.state.records.get(shared.id)!.files.map((file) => file.key).sort()).toEqual(STORED_INTO[mode]);

    const back = `Back shared ${mode}`;
    await writeTree(ferry.workspace, { [`${back}/.keep`]: '' });
    await transfer('local', findByPath(await list('local'), back)!.id, 'zenodo', `r${shared.id}`);
    const returned = await snapshotTree(path.join(ferry.workspace, back, `Shared ${mode}`));
    expect(returned['old.txt']).toBeDefined();
    if (mode === 'flatten') expect(returned['Survey/ferry-provenance.json']).toBeDefined();
    const below = Object.fromEntries(Object.entries(returned).filter(([file]) => file.startsWith('Survey/')).map(([file, hash]) => [file.slice('Survey/'.length), hash]));
    expect(withoutRecord(below)).toEqual(await snapshotTree(path.join(ferry.workspace, 'Survey')));
  });
});

describe('a figshare project', () => {
  it('an item written into a project with zip-per-folder reads back as its tree when the whole project is read', async () => {
    const project = figshare.state.addProject(1, 'Coast');
    const survey = findByPath(await list('local'), 'Survey')!;
    await transfer('figshare', `p${project.id}`, 'local', survey.id, { 'ferry-folders': 'zip-per-folder' });
    await writeTree(ferry.workspace, { 'Back project/.keep': '' });
    await transfer('local', findByPath(await list('local'), 'Back project')!.id, 'figshare', `p${project.id}`);
    const returned = await snapshotTree(path.join(ferry.workspace, 'Back project', 'Coast'));
    const item = Object.fromEntries(Object.entries(returned).filter(([file]) => file.startsWith('Survey/')).map(([file, hash]) => [file.slice('Survey/'.length), hash]));
    expect(withoutRecord(item)).toEqual(await snapshotTree(path.join(ferry.workspace, 'Survey')));
  });
});

describe('a retry', () => {
  it('sends a packed folder Zenodo stored damaged again, as the first run packed it, and the record then reads back whole', async () => {
    const survey = findByPath(await list('local'), 'Survey')!;
    zenodo.state.damageOnStore.add('raw.zip');
    const response = await post('zenodo', null, { source_target_name: 'local', source_resource_id: survey.id }, { 'ferry-folders': 'zip-per-folder' });
    const first = await waitForJob(ferry, ((await response.json()) as Acknowledgement).ticket_number, 60_000);
    zenodo.state.damageOnStore.delete('raw.zip');
    expect(first.status).toBe('completed_with_errors');
    expect(first.report!.failed_files!.map((failed) => failed.path)).toEqual(['Survey/raw.zip']);
    const record = first.report!.new_resource!;

    const retried = await ferry.fetch(`/api_v1/jobs/${first.ticket_number}/retry/`, { method: 'POST', headers: ferry.bearer() });
    expect(retried.status, await retried.clone().text()).toBe(202);
    const second = await waitForJob(ferry, ((await retried.json()) as Acknowledgement).ticket_number, 60_000);
    expect(second.status, second.error ?? '').toBe('succeeded');
    expect(second.report!.resources_created).toEqual(['raw.zip']);
    expect((await list('zenodo', record.id)).map((node) => node.title).sort()).toEqual(STORED['zip-per-folder']);

    await writeTree(ferry.workspace, { 'Back retried/.keep': '' });
    await transfer('local', findByPath(await list('local'), 'Back retried')!.id, 'zenodo', record.id);
    expect(withoutRecord(await snapshotTree(path.join(ferry.workspace, 'Back retried', record.title)))).toEqual(await snapshotTree(path.join(ferry.workspace, 'Survey')));
  });
});

describe('an upload and a download', () => {
  it('an uploaded ZIP goes into Zenodo as a ZIP per folder, and the record downloads as a bag of the tree', async () => {
    const zip = await zipFolder(ferry.workspace, path.join(ferry.root, 'survey-upload.zip'), [], ['Survey']);
    const response = await ferry.fetch('/api_v1/targets/zenodo/resources/', {
      method: 'POST',
      body: uploadForm(zip),
      headers: ferry.bearer({ 'duplicate-file-action': 'ignore', 'ferry-folders': 'zip-per-folder' }),
    });
    expect(response.status, await response.clone().text()).toBe(202);
    const job = await waitForJob(ferry, ((await response.json()) as Acknowledgement).ticket_number, 60_000);
    expect(job.status, job.error ?? '').toBe('succeeded');
    const record = job.report!.new_resource!;
    expect((await list('zenodo', record.id)).map((node) => node.title).sort()).toEqual(STORED['zip-per-folder']);

    const download = await ferry.fetch(`/api_v1/targets/zenodo/resources/${encodeURIComponent(record.id)}.zip/`, { headers: ferry.bearer() });
    expect(download.status, await download.clone().text()).toBe(200);
    const zipPath = path.join(ferry.root, 'survey-download.zip');
    await writeFile(zipPath, Buffer.from(await download.arrayBuffer()));
    const out = path.join(ferry.root, 'survey-download');
    await unzipTo(zipPath, out);
    const [bag] = await readdir(out);
    const payload = withoutRecord(await snapshotTree(path.join(out, bag!, 'data', record.title)));
    expect(payload).toEqual(await snapshotTree(path.join(ferry.workspace, 'Survey')));
  });
});

describe('choosing a folder mode', () => {
  it('each target says which modes a write there chooses among: all three where records keep no folders, none elsewhere', async () => {
    const targets = (await (await ferry.fetch('/api_v1/targets/')).json()) as TargetDescription[];
    const modes = Object.fromEntries(targets.map((target) => [target.name, target.capabilities.folder_modes]));
    expect(modes).toEqual({ local: [], zenodo: ['flatten', 'zip-per-folder', 'bag'], figshare: ['flatten', 'zip-per-folder', 'bag'] });
  });

  it('an unknown mode is a 400 with a sentence naming the modes, before anything is written', async () => {
    const survey = findByPath(await list('local'), 'Survey')!;
    const before = (await list('zenodo')).length;
    const response = await post('zenodo', null, { source_target_name: 'local', source_resource_id: survey.id }, { 'ferry-folders': 'nested' });
    const body = await expectApiError(response, 400, 'bad_request');
    expect(body.error).toMatch(/ferry-folders as 'flatten' .*'zip-per-folder' .*'bag'.*not 'nested'/);
    const field = await post('zenodo', null, { source_target_name: 'local', source_resource_id: survey.id, folders: 'tar' });
    expect((await expectApiError(field, 400, 'bad_request')).error).toMatch(/not 'tar'/);
    expect((await list('zenodo')).length).toBe(before);
  });

  it('without the provenance record the report says the ZIPs will read back as ZIPs, and they do', async () => {
    const survey = findByPath(await list('local'), 'Survey')!;
    const job = await transfer('zenodo', null, 'local', survey.id, { 'ferry-folders': 'zip-per-folder', 'ferry-provenance': 'off' });
    expect(job.report!.notes).toContainEqual(expect.stringMatching(/^Zenodo keeps no folders: each folder was stored as one ZIP \('(raw|docs)\.zip', '(raw|docs)\.zip'\); no ferry-provenance.json records this, so Ferry reads them back as ZIP files\.$/));
    const record = job.report!.new_resource!;
    await writeTree(ferry.workspace, { 'Back unrecorded/.keep': '' });
    await transfer('local', findByPath(await list('local'), 'Back unrecorded')!.id, 'zenodo', record.id, { 'ferry-provenance': 'off' });
    const returned = await snapshotTree(path.join(ferry.workspace, 'Back unrecorded', record.title));
    expect(Object.keys(returned).sort()).toEqual(['docs.zip', 'notes__draft.txt', 'raw.zip', 'readme.txt']);
  });

  it('a packing mode is refused for a destination that keeps folders', async () => {
    const survey = findByPath(await list('local'), 'Survey')!;
    await writeTree(ferry.workspace, { 'Elsewhere/.keep': '' });
    const into = findByPath(await list('local'), 'Elsewhere')!;
    const response = await post('local', into.id, { source_target_name: 'local', source_resource_id: survey.id }, { 'ferry-folders': 'zip-per-folder' });
    expect((await expectApiError(response, 400, 'bad_request')).error).toMatch(/keeps folders as they are/);
  });
});
