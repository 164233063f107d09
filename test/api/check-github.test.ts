// Check (extension) GitHub (its emulator) → local over real HTTP. A small repository is read
// from a shallow clone, whose files give a git blob id (git-sha1) and no size: nothing a local
// folder reports too. Without read_bytes such files cannot be compared, and the check says so
// rather than succeed; with read_bytes both sides are hashed and compared.
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Acknowledgement, Job, ResourceSummary } from '../../shared/api.js';
import { MemorySecretStore } from '../../electron/core/keychain/memory.js';
import { tokenAccount } from '../../electron/core/keychain/port.js';
import { createGithubTarget } from '../../electron/core/targets/github/index.js';
import { LocalTarget } from '../../electron/core/targets/local/local-target.js';
import { startGithubEmulator, type GithubEmulator } from '../emulators/github/server.js';
import { startFerry, waitForJob, type Ferry } from './harness.js';

const TOKEN = 'ghp_check_token';
const FILES = { 'README.md': '# Analysis\n', 'src/model.py': 'print("fit")\n' };
let ferry: Ferry;
let github: GithubEmulator;

beforeAll(async () => {
  github = await startGithubEmulator();
  const user = { id: 7, login: 'researcher' };
  github.state.tokens.set(TOKEN, user);
  github.state.addRepo(user, 'analysis-code', FILES);
  const secrets = new MemorySecretStore();
  await secrets.set(tokenAccount('github'), TOKEN);
  ferry = await startFerry({
    secrets,
    targets: (config, store) => [
      new LocalTarget({ root: config.workspace }),
      createGithubTarget({ ...config, remotes: { ...config.remotes, githubApiUrl: github.url } }, store, { writeSpacingMs: 0, maxRateWaitMs: 2000 }),
    ],
  });
});
afterAll(async () => {
  await ferry?.close();
  await github?.close();
});

async function list(target: string, container: string): Promise<ResourceSummary[]> {
  return (await (await ferry.fetch(`/api_v1/targets/${target}/resources/?container=${encodeURIComponent(container)}`, { headers: ferry.bearer() })).json()) as ResourceSummary[];
}

async function submit(url: string, body: Record<string, unknown>, extra: Record<string, string> = {}): Promise<Job> {
  const response = await ferry.fetch(url, { method: 'POST', headers: ferry.bearer({ 'content-type': 'application/json', ...extra }), body: JSON.stringify(body) });
  expect(response.status, await response.clone().text()).toBe(202);
  return waitForJob(ferry, ((await response.json()) as Acknowledgement).ticket_number, 60_000);
}

it('a repository and its local copy: not comparable without read_bytes, matched by sha256 with it', async () => {
  const repo = (await list('github', 'None')).find((node) => node.title === 'analysis-code')!;
  await mkdir(path.join(ferry.workspace, 'Code'), { recursive: true });
  const code = (await list('local', 'None')).find((node) => node.title === 'Code')!;
  const transfer = await submit(`/api_v1/targets/local/resources/${code.id}/`, { source_target_name: 'github', source_resource_id: repo.id }, { 'duplicate-file-action': 'ignore' });
  expect(transfer.status, transfer.error ?? '').toBe('succeeded');
  const copy = (await list('local', code.id)).find((node) => node.title === 'analysis-code')!;
  const checkUrl = `/api_v1/targets/local/resources/${copy.id}/check/`;

  const unread = await submit(checkUrl, { source_target_name: 'github', source_resource_id: repo.id });
  expect(unread.status).toBe('completed_with_errors');
  expect(unread.error).toMatch(/^The resources differ: 2 not comparable \('analysis-code\/README.md', 'analysis-code\/src\/model.py'\); 0 files matched\./);
  expect(unread.report!.check).toMatchObject({
    matched: 0,
    missing: [],
    extra: [],
    different: [],
    not_comparable: [
      { path: 'analysis-code/README.md', reason: expect.stringMatching(/read_bytes/) },
      { path: 'analysis-code/src/model.py', reason: expect.stringMatching(/read_bytes/) },
    ],
    compared_by: { hash: 0, size: 0 },
  });

  const read = await submit(checkUrl, { source_target_name: 'github', source_resource_id: repo.id, read_bytes: true });
  expect(read.status, read.error ?? '').toBe('succeeded');
  // the local copy's md5 and sha256 are remembered from its writing: only GitHub's bytes are read
  expect(read.report!.check).toMatchObject({ matched: 2, not_comparable: [], compared_by: { hash: 2, size: 0 }, algorithms: { sha256: 2 } });
  expect(read.report!.check!.read).toEqual({ files: 2, bytes: Object.values(FILES).reduce((sum, text) => sum + Buffer.byteLength(text), 0) });
});
