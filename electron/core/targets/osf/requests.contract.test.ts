// "What Ferry sends" to OSF: the requests of a listing, a download, an upload into a project
// and a new-project upload, recorded by the emulator at Ferry's default rate, each checked
// against the evidence table in docs/targets/osf.md and the rules that table states.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeConfig } from '../../config.js';
import { MemorySecretStore } from '../../keychain/memory.js';
import { startOsfEmulator, type OsfEmulator } from '../../../../test/emulators/osf/emulator.js';
import type { LoggedRequest } from '../../../../test/emulators/osf/state.js';
import { busiestWindow, evidenceRows, withoutEvidence, type SentRequest } from '../../../../test/emulators/shared/evidence-table.js';
import { collect, ctx, drain, writeOptions } from '../../../../test/target-suite/test-entries.js';
import { fileNodeId, nodeId, storageId } from './ids.js';
import { createOsfTarget } from './index.js';
import { entries } from './test-helpers.js';

/** The real host each emulator server stands for, as docs/targets/osf.md writes it. */
const HOSTS: Record<LoggedRequest['server'], string> = { api: 'api.osf.io', files: 'files.<region>.osf.io', storage: '<storage>', web: 'osf.io' };
/** Ferry's default: 5 requests a second to each OSF host (index.ts); OSF's burst limit is 10. */
const FERRY_RATE = 5;

let emu: OsfEmulator;
let sent: LoggedRequest[] = [];

beforeAll(async () => {
  emu = await startOsfEmulator();
  const user = emu.state.addUser('Contract User');
  const token = emu.state.addToken(user.id);
  const project = emu.state.addNode({ title: 'Contract project', owner: user.id });
  const file = emu.state.addFile(project.id, '/a.txt', 'a bytes');
  emu.state.addFile(project.id, '/data/b.txt', 'b bytes');
  const target = createOsfTarget(makeConfig({ dataDir: '/nonexistent', remotes: { ...makeConfig().remotes, osfApiUrl: emu.apiUrl } }), new MemorySecretStore(), { ratePerSecond: FERRY_RATE });
  const c = ctx(token);

  await collect(target.list(c, { container: null }));
  await collect(target.list(c, { container: nodeId(project.id) }));
  await collect(target.list(c, { container: storageId(project.id, 'osfstorage') }));
  await drain((await target.read(c, fileNodeId(project.id, 'osfstorage', file.id))).entries);
  await target.write(c, nodeId(project.id), entries([{ path: 'up' }, { path: 'up/new.txt', content: 'new' }]), writeOptions('ignore'));
  await target.write(c, null, entries([{ path: 'Top' }, { path: 'Top/x.txt', content: 'x' }]), writeOptions('ignore'));
  sent = [...emu.state.requests];
}, 60_000);
afterAll(() => emu?.close());

const asSent = (request: LoggedRequest): SentRequest => ({ method: request.method, host: HOSTS[request.server], path: request.url.split('?')[0]! });
const query = (request: LoggedRequest) => new URL(request.url, 'http://x').searchParams;

describe('What Ferry sends to OSF', () => {
  it('every request has a row of evidence in docs/targets/osf.md, and all succeed', () => {
    expect(sent.length).toBeGreaterThan(10);
    expect(withoutEvidence(evidenceRows('osf'), sent.map(asSent))).toEqual([]);
    expect(sent.filter((r) => (r.status ?? 0) >= 400)).toEqual([]);
  });

  it("sends no sort on a node's storage-provider list, and sort=name on every file listing", () => {
    const providers = sent.filter((r) => r.server === 'api' && /^\/v2\/nodes\/[^/]+\/files\/$/.test(r.url.split('?')[0]!));
    expect(providers.length).toBeGreaterThanOrEqual(3);
    for (const request of providers) expect(query(request).has('sort')).toBe(false);
    const listings = sent.filter((r) => r.server === 'api' && /^\/v2\/nodes\/[^/]+\/files\/[^/]+\//.test(r.url.split('?')[0]!));
    expect(listings.length).toBeGreaterThan(0);
    for (const request of listings) expect(query(request).get('sort')).toBe('name');
  });

  it('sends the token to the API and WaterButler only, never to the storage host or osf.io', () => {
    expect(sent.filter((r) => r.authorization).every((r) => r.server === 'api' || r.server === 'files')).toBe(true);
    expect(sent.some((r) => r.server === 'storage')).toBe(true);
    for (const request of sent) expect([...query(request).keys()].filter((key) => /token/i.test(key))).toEqual([]);
  });

  it("stays within Ferry's rate to each host, under OSF's burst limit of 10 a second", () => {
    for (const server of ['api', 'files'] as const) {
      expect(busiestWindow(sent.filter((r) => r.server === server).map((r) => r.at))).toBeLessThanOrEqual(FERRY_RATE);
    }
  });
});
