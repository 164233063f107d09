import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job, ResourceDetail, ResourceSummary } from '../../shared/api.js';
import { MemorySecretStore } from '../../electron/core/keychain/memory.js';
import { tokenAccount } from '../../electron/core/keychain/port.js';
import { LocalTarget } from '../../electron/core/targets/local/local-target.js';
import { createOsfTarget } from '../../electron/core/targets/osf/index.js';
import { createDataverseTarget } from '../../electron/core/targets/dataverse/index.js';
import { validateBag, type BagFile } from '../../electron/core/bag/bag-validator.js';
import { startOsfEmulator, type OsfEmulator } from '../emulators/osf/emulator.js';
import { startDataverseEmulator, type DataverseEmulator } from '../emulators/dataverse/emulator.js';
import { run, startFerry, unzipTo, waitForJob, type Ferry } from './harness.js';

// OSF → Dataverse → bag, through the HTTP API with both emulators: an OSF project with a
// nested folder and a CSV (which Dataverse ingests into a `.tab`) becomes a new dataset, and
// that dataset downloads as a BagIt bag whose manifests hold the OSF files' own hashes: every
// checksum is compared at every hop (OSF's MD5 → Dataverse's stored MD5 → the bag's manifests,
// which the bag validator checks against the bytes).

const md5 = (bytes: Buffer | string) => createHash('md5').update(bytes).digest('hex');
const OSF_FILES: Record<string, Buffer> = {
  'readings.csv': Buffer.from('site,depth,psu\nA,10,35.1\nB,20,34.8\n'),
  'raw/deep/cast 1.bin': Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 31) % 256)),
  'raw/notes.txt': Buffer.from('calibrated on board\n'),
};

let ferry: Ferry;
let osf: OsfEmulator;
let dataverse: DataverseEmulator;
let projectId: string;

beforeAll(async () => {
  osf = await startOsfEmulator();
  dataverse = await startDataverseEmulator();
  const user = osf.state.addUser('Ocean Team');
  const node = osf.state.addNode({ title: 'Ocean Survey', owner: user.id });
  for (const [file, bytes] of Object.entries(OSF_FILES)) osf.state.addFile(node.id, file, bytes);
  projectId = `n-${node.id}`;
  const secrets = new MemorySecretStore();
  await secrets.set(tokenAccount('osf'), osf.state.addToken(user.id));
  await secrets.set(tokenAccount('dataverse'), 'dv-token-1111');
  ferry = await startFerry({
    secrets,
    targets: (config, store) => {
      const remoteConfig = { ...config, remotes: { ...config.remotes, osfApiUrl: osf.apiUrl } };
      return [
        new LocalTarget({ root: config.workspace }),
        createOsfTarget(remoteConfig, store, { ratePerSecond: 200, retries: 2 }),
        createDataverseTarget(remoteConfig, store, { defaultUrl: dataverse.url, ratePerSecond: 1000, retries: 2 }),
      ];
    },
  });
});

afterAll(async () => {
  await ferry?.close();
  await osf?.close();
  await dataverse?.close();
});

async function list(target: string, container?: string): Promise<ResourceSummary[]> {
  const query = container === undefined ? '' : `?container=${encodeURIComponent(container)}`;
  const response = await ferry.fetch(`/api_v1/targets/${target}/resources/${query}`, { headers: ferry.bearer() });
  expect(response.status, await response.clone().text()).toBe(200);
  return (await response.json()) as ResourceSummary[];
}

async function detail(target: string, id: string): Promise<ResourceDetail> {
  const response = await ferry.fetch(`/api_v1/targets/${target}/resources/${encodeURIComponent(id)}.json/`, { headers: ferry.bearer() });
  expect(response.status, await response.clone().text()).toBe(200);
  return (await response.json()) as ResourceDetail;
}

function pathOf(node: ResourceSummary, byId: Map<string, ResourceSummary>): string {
  const parent = byId.get(node.container);
  return parent ? `${pathOf(parent, byId)}/${node.title}` : node.title;
}

/** Every file of a bag on disk, for the bag validator. */
async function bagFiles(root: string, relative = ''): Promise<BagFile[]> {
  const out: BagFile[] = [];
  for (const entry of await readdir(path.join(root, relative), { withFileTypes: true })) {
    const child = relative ? `${relative}/${entry.name}` : entry.name;
    const full = path.join(root, child);
    if (entry.isDirectory()) out.push(...(await bagFiles(root, child)));
    else out.push({ path: child, size: (await stat(full)).size, open: async () => createReadStream(full) });
  }
  return out;
}

describe('OSF → Dataverse → bag', () => {
  it('carries an OSF project with a nested folder and an ingested CSV into a new dataset, and its bag holds the OSF hashes', async () => {
    // OSF's own hashes, as Ferry reports them
    const osfAll = await list('osf');
    const osfById = new Map(osfAll.map((node) => [node.id, node]));
    const osfHashes = new Map<string, string>();
    for (const node of osfAll.filter((n) => n.kind === 'item' && pathOf(n, osfById).startsWith('Ocean Survey/'))) {
      osfHashes.set(pathOf(node, osfById).replace(/^Ocean Survey\/osfstorage\//, ''), (await detail('osf', node.id)).hashes.md5!);
    }
    expect(Object.fromEntries(osfHashes)).toEqual(Object.fromEntries(Object.entries(OSF_FILES).map(([file, bytes]) => [file, md5(bytes)])));

    // OSF → a new Dataverse dataset
    const response = await ferry.fetch('/api_v1/targets/dataverse/resources/', {
      method: 'POST',
      headers: ferry.bearer({ 'content-type': 'application/json', 'duplicate-file-action': 'ignore' }),
      body: JSON.stringify({ source_target_name: 'osf', source_resource_id: projectId }),
    });
    expect(response.status, await response.clone().text()).toBe(202);
    const job: Job = await waitForJob(ferry, ((await response.json()) as { ticket_number: string }).ticket_number, 60_000);
    expect(job.status, job.error ?? '').toBe('succeeded');
    expect(job.report?.failed_fixity).toEqual([]);
    const datasetId = job.report!.new_resource!.id;

    // Dataverse stored the CSV ingested (a .tab) and keeps the original's MD5; the nested folder is its File Path
    const dataset = [...dataverse.state.datasets.values()].find((d) => `d${d.id}` === datasetId || d.title === job.report!.new_resource!.title)!;
    const stored = dataverse.state.latest(dataset);
    const csv = stored.find((file) => file.original?.name === 'readings.csv')!;
    expect(csv.label).toBe('readings.tab');
    expect(csv.bytes.equals(OSF_FILES['readings.csv']!)).toBe(false);
    expect(csv.checksum.value).toBe(md5(OSF_FILES['readings.csv']!));
    expect(stored.find((file) => file.label === 'cast 1.bin')?.directoryLabel).toBe('raw/deep');
    for (const file of stored.filter((f) => f.label !== 'ferry-provenance.json')) {
      const name = `${file.directoryLabel ? `${file.directoryLabel}/` : ''}${file.original?.name ?? file.label}`;
      expect(file.checksum.value, name).toBe(osfHashes.get(name));
    }

    // the dataset as a bag: valid, and its MD5 manifest is OSF's hashes
    const zip = path.join(ferry.root, 'dataset.zip');
    const download = await ferry.fetch(`/api_v1/targets/dataverse/resources/${encodeURIComponent(datasetId)}.zip/`, { headers: ferry.bearer() });
    expect(download.status, download.status === 200 ? '' : await download.text()).toBe(200);
    await writeFile(zip, Buffer.from(await download.arrayBuffer()));
    await run('unzip', ['-t', '-q', zip]);
    const out = path.join(ferry.root, 'dataset-bag');
    await unzipTo(zip, out);
    const [bagName] = await readdir(out);
    const bag = path.join(out, bagName!);
    const validated = await validateBag(await bagFiles(bag));
    const title = job.report!.new_resource!.title;
    const manifest = new Map([...validated.hashes].filter(([file]) => file !== `${title}/ferry-provenance.json`).map(([file, hashes]) => [file.slice(title.length + 1), hashes.md5]));
    expect(Object.fromEntries(manifest)).toEqual(Object.fromEntries(osfHashes));
    // the bytes are the uploaded ones, the CSV's original and not the .tab
    expect(await readFile(path.join(bag, 'data', title, 'readings.csv'))).toEqual(OSF_FILES['readings.csv']);
    const provenance = JSON.parse(await readFile(path.join(bag, 'ferry-provenance.json'), 'utf8')) as { entries: { files: { fixity: string }[] }[] };
    expect(provenance.entries.at(-1)!.files.every((file) => file.fixity === 'ok')).toBe(true);
  });
});
