// Check (extension) between local folders and OSF (its emulator), over real HTTP: OSF reports
// md5 and sha256 of every file, so a check compares by a shared hash, and with read_bytes reads
// only the side that gives none.
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Acknowledgement, CheckReport, Job, ResourceSummary } from '../../shared/api.js';
import { MemorySecretStore } from '../../electron/core/keychain/memory.js';
import { tokenAccount } from '../../electron/core/keychain/port.js';
import { LocalTarget } from '../../electron/core/targets/local/local-target.js';
import { createOsfTarget } from '../../electron/core/targets/osf/index.js';
import { startOsfEmulator, type OsfEmulator } from '../emulators/osf/emulator.js';
import { startFerry, waitForJob, writeTree, type Ferry } from './harness.js';

let ferry: Ferry;
let osf: OsfEmulator;

beforeAll(async () => {
  osf = await startOsfEmulator();
  const user = osf.state.addUser('Check');
  const secrets = new MemorySecretStore();
  await secrets.set(tokenAccount('osf'), osf.state.addToken(user.id));
  const node = osf.state.addNode({ title: 'Shared Data', owner: user.id });
  osf.state.addFile(node.id, '/tables/a.csv', Buffer.from('a\n'));
  osf.state.addFile(node.id, '/tables/b.csv', Buffer.from('b,b\n'));
  ferry = await startFerry({
    secrets,
    targets: (config, store) => [
      new LocalTarget({ root: config.workspace }),
      createOsfTarget({ ...config, remotes: { ...config.remotes, osfApiUrl: osf.apiUrl } }, store, { ratePerSecond: 200, retries: 2 }),
    ],
  });
});
afterAll(async () => {
  await ferry?.close();
  await osf?.close();
});

async function list(target: string, container?: string): Promise<ResourceSummary[]> {
  const query = container === undefined ? '' : `?container=${encodeURIComponent(container)}`;
  return (await (await ferry.fetch(`/api_v1/targets/${target}/resources/${query}`, { headers: ferry.bearer() })).json()) as ResourceSummary[];
}

async function submit(url: string, body: Record<string, unknown>, extra: Record<string, string> = {}): Promise<Job> {
  const response = await ferry.fetch(url, { method: 'POST', headers: ferry.bearer({ 'content-type': 'application/json', ...extra }), body: JSON.stringify(body) });
  expect(response.status, await response.clone().text()).toBe(202);
  return waitForJob(ferry, ((await response.json()) as Acknowledgement).ticket_number, 60_000);
}

async function check(destination: string, destinationId: string, source: string, sourceId: string, readBytes: boolean): Promise<CheckReport> {
  const job = await submit(`/api_v1/targets/${destination}/resources/${encodeURIComponent(destinationId)}/check/`, {
    source_target_name: source,
    source_resource_id: sourceId,
    read_bytes: readBytes,
  });
  expect(job.status, job.error ?? '').toBe('succeeded');
  return job.report!.check!;
}

it('OSF → local: compared by sha256, which both report, without reading a byte', async () => {
  const tables = (await list('osf')).find((node) => node.title === 'tables')!;
  await mkdir(path.join(ferry.workspace, 'Code'), { recursive: true });
  const code = (await list('local', 'None')).find((node) => node.title === 'Code')!;
  const transfer = await submit(`/api_v1/targets/local/resources/${code.id}/`, { source_target_name: 'osf', source_resource_id: tables.id }, { 'duplicate-file-action': 'ignore' });
  expect(transfer.status, transfer.error ?? '').toBe('succeeded');
  const copy = (await list('local', code.id)).find((node) => node.title === 'tables')!;
  for (const readBytes of [false, true]) {
    expect(await check('local', copy.id, 'osf', tables.id, readBytes)).toEqual({
      matched: 2,
      missing: [],
      extra: [],
      different: [],
      not_comparable: [],
      compared_by: { hash: 2, size: 0 },
      algorithms: { sha256: 2 },
      read_bytes: readBytes,
      read: { files: 0, bytes: 0 },
    });
  }
});

it('local → OSF: by size when the local files were never hashed; with read_bytes only the local bytes are read', async () => {
  await writeTree(ferry.workspace, { 'Notes/x.txt': 'x\n', 'Notes/deeper/y.txt': 'why\n' });
  const notes = (await list('local', 'None')).find((node) => node.title === 'Notes')!;
  const tables = (await list('osf')).find((node) => node.title === 'tables')!;
  const transfer = await submit(`/api_v1/targets/osf/resources/${encodeURIComponent(tables.id)}/`, { source_target_name: 'local', source_resource_id: notes.id }, { 'duplicate-file-action': 'ignore' });
  expect(transfer.status, transfer.error ?? '').toBe('succeeded');
  const copy = (await list('osf')).find((node) => node.title === 'Notes' && node.container === tables.id)!;

  expect(await check('osf', copy.id, 'local', notes.id, false)).toMatchObject({ matched: 2, compared_by: { hash: 0, size: 2 }, read: { files: 0, bytes: 0 } });
  expect(await check('osf', copy.id, 'local', notes.id, true)).toMatchObject({
    matched: 2,
    compared_by: { hash: 2, size: 0 },
    algorithms: { sha256: 2 },
    read: { files: 2, bytes: 2 + 4 },
  });
});
