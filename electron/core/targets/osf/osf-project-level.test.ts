// Project-level operations against an emulator that answers like OSF: HTTP 500 to a `sort`
// on a node's provider list (docs/targets/osf.md), and a new-project upload that fails
// leaves no empty project behind.
import { afterEach, describe, expect, it } from 'vitest';
import { makeConfig } from '../../config.js';
import { FerryError } from '../../errors.js';
import { MemorySecretStore } from '../../keychain/memory.js';
import { FaultPlan } from '../../../../test/emulators/shared/faults.js';
import { startOsfEmulator, type OsfEmulator } from '../../../../test/emulators/osf/emulator.js';
import { collect, writeOptions } from '../../../../test/target-suite/test-entries.js';
import { nodeId } from './ids.js';
import { createOsfTarget } from './index.js';
import { entries } from './test-helpers.js';

let emu: OsfEmulator;
afterEach(() => emu?.close());

async function fixture(faults?: FaultPlan) {
  emu = await startOsfEmulator({ faults });
  const user = emu.state.addUser('Project Owner');
  const token = emu.state.addToken(user.id);
  const config = makeConfig({ dataDir: '/nonexistent', remotes: { ...makeConfig().remotes, osfApiUrl: emu.apiUrl } });
  const target = createOsfTarget(config, new MemorySecretStore(), { ratePerSecond: 200, retries: 1 });
  return { user, token, target, ctx: { token, signal: new AbortController().signal } };
}

const providerLists = () => emu.state.requests.filter((r) => r.server === 'api' && /^\/v2\/nodes\/[^/]+\/files\/(\?|$)/.test(r.url));

describe('OSF: a node\'s storage-provider list', () => {
  it('is answered 500 by the emulator when it carries sort, as OSF does', async () => {
    const { user, token } = await fixture();
    const node = emu.state.addNode({ title: 'P', owner: user.id });
    const ask = (query: string) => fetch(`${emu.apiUrl}nodes/${node.id}/files/${query}`, { headers: { authorization: `Bearer ${token}` } });
    expect((await ask('?sort=name')).status).toBe(500);
    expect((await ask('?page[size]=100')).status).toBe(200);
  });

  it('browsing, reading and uploading into a project work, and never send sort on that list', async () => {
    const { user, target, ctx } = await fixture();
    const node = emu.state.addNode({ title: 'Browse me', owner: user.id });
    emu.state.addFile(node.id, '/a.txt', 'a');
    const children = await collect(target.list(ctx, { container: nodeId(node.id) }));
    expect(children.map((c) => c.title)).toEqual(['osfstorage']);
    const read = await target.read(ctx, nodeId(node.id));
    expect((await collect(read.entries)).map((e) => e.path)).toEqual(['Browse me', 'Browse me/a.txt']);
    const outcome = await target.write(ctx, nodeId(node.id), entries([{ path: 'b.txt', content: 'b' }]), writeOptions('ignore'));
    expect(outcome.created).toEqual(['b.txt']);
    expect(providerLists().length).toBeGreaterThanOrEqual(3);
    for (const request of providerLists()) expect(new URL(request.url, 'http://x').searchParams.has('sort')).toBe(false);
  });
});

describe('OSF: a new-project upload', () => {
  it('makes the project and fills it', async () => {
    const { target, ctx } = await fixture();
    const outcome = await target.write(ctx, null, entries([{ path: 'Fresh' }, { path: 'Fresh/x.txt', content: 'x' }]), writeOptions('ignore'));
    expect(outcome.newResource?.title).toBe('Fresh');
    expect(outcome.created).toEqual(['Fresh/x.txt']);
    expect(providerLists().every((r) => !r.url.includes('sort='))).toBe(true);
  });

  it('that fails removes the project it made, and says so', async () => {
    // a 403 on the first upload ends the job (OSF writer: 401/403 are not per-file)
    const { target, ctx } = await fixture(new FaultPlan().add({ kind: 'status', server: 'files', method: 'PUT', status: 403 }));
    const error = await target.write(ctx, null, entries([{ path: 'Doomed' }, { path: 'Doomed/x.txt', content: 'x' }]), writeOptions('ignore')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FerryError);
    expect((error as FerryError).message).toMatch(/new OSF project 'Doomed' \(\w+\) was removed again, so nothing is left behind/);
    const live = [...emu.state.nodes.values()].filter((node) => node.title === 'Doomed' && !node.deleted);
    expect(live).toEqual([]);
  });

  it('that fails and cannot remove the project names it and how to delete it', async () => {
    const faults = new FaultPlan()
      .add({ kind: 'status', server: 'files', method: 'PUT', status: 403 })
      .add({ kind: 'status', server: 'api', method: 'DELETE', status: 503, times: Infinity });
    const { target, ctx } = await fixture(faults);
    const error = (await target.write(ctx, null, entries([{ path: 'Stuck' }, { path: 'Stuck/x.txt', content: 'x' }]), writeOptions('ignore')).catch((e: unknown) => e)) as FerryError;
    const node = [...emu.state.nodes.values()].find((n) => n.title === 'Stuck')!;
    expect(node.deleted).toBe(false);
    expect(error.message).toContain(`the new OSF project 'Stuck' (${node.id}) was left behind and could not be removed`.replace(/^t/, 'T'));
    expect(error.message).toContain(`delete it in OSF at ${emu.webUrl}${node.id}/`);
  });
});
