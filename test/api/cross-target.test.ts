import { createHash } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Job, ResourceDetail, ResourceSummary } from '../../shared/api.js';
import { MemorySecretStore } from '../../electron/core/keychain/memory.js';
import { tokenAccount } from '../../electron/core/keychain/port.js';
import { createGithubTarget } from '../../electron/core/targets/github/index.js';
import { LocalTarget } from '../../electron/core/targets/local/local-target.js';
import { createOsfTarget } from '../../electron/core/targets/osf/index.js';
import { startGithubEmulator, type GithubEmulator } from '../emulators/github/server.js';
import { startOsfEmulator, type OsfEmulator } from '../emulators/osf/emulator.js';
import { run, startFerry, unzipTo, waitForJob, type Ferry } from './harness.js';

// Transfers between different targets through the API, the way the two panes use it:
// local → OSF, GitHub → local, OSF → GitHub, with remote tokens kept in the keychain
// (the request carries only the access key), and a download of what arrived.

const GITHUB_TOKEN = 'ghp_cross_target_token';
const md5 = (bytes: Buffer) => createHash('md5').update(bytes).digest('hex');

let ferry: Ferry;
let osf: OsfEmulator;
let github: GithubEmulator;
let osfToken: string;

beforeEach(async () => {
  osf = await startOsfEmulator();
  github = await startGithubEmulator();
  const user = osf.state.addUser('Cross Target');
  osfToken = osf.state.addToken(user.id);
  const ghUser = { id: 7, login: 'researcher' };
  github.state.tokens.set(GITHUB_TOKEN, ghUser);
  github.state.addRepo(ghUser, 'analysis-code', { 'README.md': '# Analysis\n', 'src/model.py': 'print("fit")\n', 'src/util/io.py': 'def load(): pass\n' });
  const secrets = new MemorySecretStore();
  await secrets.set(tokenAccount('osf'), osfToken);
  await secrets.set(tokenAccount('github'), GITHUB_TOKEN);
  ferry = await startFerry({
    secrets,
    targets: (config, store) => {
      const remotes = { ...config.remotes, osfApiUrl: osf.apiUrl, githubApiUrl: github.url };
      const remoteConfig = { ...config, remotes };
      return [
        new LocalTarget({ root: config.workspace }),
        createOsfTarget(remoteConfig, store, { ratePerSecond: 200, retries: 2 }),
        createGithubTarget(remoteConfig, store, { writeSpacingMs: 0, maxRateWaitMs: 2000 }),
      ];
    },
  });
});

afterEach(async () => {
  await ferry.close();
  await osf.close();
  await github.close();
});

async function list(target: string, container?: string): Promise<ResourceSummary[]> {
  const query = container === undefined ? '' : `?container=${encodeURIComponent(container)}`;
  const response = await ferry.fetch(`/api_v1/targets/${target}/resources/${query}`, { headers: ferry.bearer() });
  expect(response.status, await response.clone().text()).toBe(200);
  return (await response.json()) as ResourceSummary[];
}

async function transfer(destination: string, containerId: string | null, sourceTarget: string, sourceId: string): Promise<Job> {
  const response = await ferry.fetch(`/api_v1/targets/${destination}/resources/${containerId ? `${encodeURIComponent(containerId)}/` : ''}`, {
    method: 'POST',
    headers: ferry.bearer({ 'content-type': 'application/json', 'duplicate-file-action': 'update' }),
    body: JSON.stringify({ source_target_name: sourceTarget, source_resource_id: sourceId }),
  });
  expect(response.status, await response.clone().text()).toBe(202);
  const { ticket_number: ticket } = (await response.json()) as { ticket_number: string };
  return waitForJob(ferry, ticket, 60_000);
}

function pathOf(node: ResourceSummary, byId: Map<string, ResourceSummary>): string {
  const parent = byId.get(node.container);
  return parent ? `${pathOf(parent, byId)}/${node.title}` : node.title;
}

describe('transfers between targets', () => {
  it('local → OSF (a new private project), then the project downloads as a bag with OSF hashes checked', async () => {
    const files: Record<string, Buffer> = {
      'Field Survey/answers.csv': Buffer.from('id,answer\n1,yes\n'),
      'Field Survey/raw/scan #1.bin': Buffer.from(Array.from({ length: 4096 }, (_, i) => i % 251)),
    };
    for (const [relative, bytes] of Object.entries(files)) {
      await mkdir(path.dirname(path.join(ferry.workspace, relative)), { recursive: true });
      await writeFile(path.join(ferry.workspace, relative), bytes);
    }
    const survey = (await list('local', 'None')).find((node) => node.title === 'Field Survey')!;
    const job = await transfer('osf', null, 'local', survey.id);
    expect(job.status, job.error ?? '').toBe('succeeded');
    expect(job.report?.new_resource?.title).toBe('Field Survey');
    expect(job.report?.failed_fixity).toEqual([]);

    const everything = await list('osf');
    const byId = new Map(everything.map((node) => [node.id, node]));
    const project = everything.find((node) => node.container === 'None' && node.title === 'Field Survey')!;
    const osfFiles = everything.filter((node) => node.kind === 'item');
    // the data, and the transfer's provenance record at the top of the new project (docs/provenance.md)
    expect(osfFiles.map((node) => pathOf(node, byId)).sort()).toEqual(['Field Survey/osfstorage/answers.csv', 'Field Survey/osfstorage/ferry-provenance.json', 'Field Survey/osfstorage/raw/scan #1.bin']);
    for (const node of osfFiles.filter((file) => file.title !== 'ferry-provenance.json')) {
      const detail = (await (await ferry.fetch(`/api_v1/targets/osf/resources/${node.id}.json/`, { headers: ferry.bearer() })).json()) as ResourceDetail;
      const relative = pathOf(node, byId).replace('/osfstorage', '');
      expect(detail.hashes.md5).toBe(md5(files[relative]!));
    }

    const zip = path.join(ferry.root, 'project.zip');
    const response = await ferry.fetch(`/api_v1/targets/osf/resources/${project.id}.zip/`, { headers: ferry.bearer() });
    expect(response.status).toBe(200);
    await writeFile(zip, Buffer.from(await response.arrayBuffer()));
    await run('unzip', ['-t', '-q', zip]);
    const out = path.join(ferry.root, 'unzipped');
    await unzipTo(zip, out);
    const bag = path.join(out, `osf_download_${project.id.replace(/[^A-Za-z0-9._-]/g, '_')}`);
    const provenance = (JSON.parse(await readFile(path.join(bag, 'ferry-provenance.json'), 'utf8')) as { entries: { files: { path: string; fixity: string }[] }[] }).entries[0]!;
    expect(provenance.files.map((file) => file.fixity)).toEqual(['ok', 'ok', 'ok']);
    expect(await readFile(path.join(bag, 'data', 'Field Survey', 'raw', 'scan #1.bin'))).toEqual(files['Field Survey/raw/scan #1.bin']);
  });

  it('GitHub → local: a repository folder arrives with its git blob ids checked in flight', async () => {
    const repo = (await list('github', 'None')).find((node) => node.title === 'analysis-code')!;
    const src = (await list('github', repo.id)).find((node) => node.title === 'src')!;
    await mkdir(path.join(ferry.workspace, 'Code'), { recursive: true });
    const code = (await list('local', 'None')).find((node) => node.title === 'Code')!;
    const job = await transfer('local', code.id, 'github', src.id);
    expect(job.status, job.error ?? '').toBe('succeeded');
    expect(await readFile(path.join(ferry.workspace, 'Code', 'src', 'model.py'), 'utf8')).toBe('print("fit")\n');
    expect(await readFile(path.join(ferry.workspace, 'Code', 'src', 'util', 'io.py'), 'utf8')).toBe('def load(): pass\n');
  });

  it('OSF → GitHub: an OSF folder becomes one commit in a repository', async () => {
    const node = osf.state.addNode({ title: 'Shared Data', owner: osf.state.users.values().next().value!.id });
    osf.state.addFile(node.id, '/tables/a.csv', Buffer.from('a\n'));
    osf.state.addFile(node.id, '/tables/b.csv', Buffer.from('b\n'));
    const everything = await list('osf');
    const tables = everything.find((candidate) => candidate.title === 'tables')!;
    const repo = (await list('github', 'None')).find((candidate) => candidate.title === 'analysis-code')!;
    const ghRepo = github.state.repos.find((candidate) => candidate.name === 'analysis-code')!;
    const commitsBefore = github.state.commitCount(ghRepo);
    const job = await transfer('github', repo.id, 'osf', tables.id);
    expect(job.status, job.error ?? '').toBe('succeeded');
    // one commit for the data, one for its provenance record (written once the data's hashes are known)
    expect(github.state.commitCount(ghRepo)).toBe(commitsBefore + 2);
    const stored = github.state.files(ghRepo);
    expect(stored['tables/ferry-provenance.json']).toBeDefined();
    expect(stored['tables/a.csv']?.toString()).toBe('a\n');
    expect(stored['tables/b.csv']?.toString()).toBe('b\n');
  });
});
