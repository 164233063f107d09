// Zenodo as it is since the 2023 InvenioRDM move: a published deposition's legacy
// links.download is the /draft/ URL, a 404 without an open draft (docs/targets/zenodo.md);
// and a new-deposition upload that fails leaves no draft behind.
import { afterEach, describe, expect, it } from 'vitest';
import { makeConfig } from '../../config.js';
import { FerryError } from '../../errors.js';
import { MemorySecretStore } from '../../keychain/memory.js';
import { FaultPlan } from '../../../../test/emulators/shared/faults.js';
import { startZenodoEmulator, type ZenodoEmulator } from '../../../../test/emulators/zenodo/emulator.js';
import { ctx, drain, entriesFrom, writeOptions } from '../../../../test/target-suite/test-entries.js';
import { depositionId, fileId } from './ids.js';
import { createZenodoTarget } from './index.js';

const TOKEN = 'zenodo-token';
let emulator: ZenodoEmulator;
afterEach(() => emulator?.close());

async function start(faults?: FaultPlan) {
  emulator = await startZenodoEmulator({ faults });
  const config = makeConfig({ dataDir: '/nonexistent', remotes: { ...makeConfig().remotes, zenodoUrl: emulator.url } });
  return createZenodoTarget(config, new MemorySecretStore(), { ratePerSecond: 1000, retries: 1 });
}

describe('Zenodo: files of a published deposition', () => {
  it('the emulator gives the /draft/ link for a published record, and 404s it', async () => {
    await start();
    const published = emulator.state.addDeposition(1, 'Done', { 'a b.csv': 'abc' }, true);
    const answer = (await (await fetch(`${emulator.url}/api/deposit/depositions/${published.id}`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as { files: { links: { download: string } }[] };
    const link = answer.files[0]!.links.download;
    expect(link).toBe(`${emulator.url}/api/records/${published.id}/draft/files/a%20b.csv/content`);
    expect((await fetch(link, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(404);
    expect((await fetch(link.replace('/draft/', '/'), { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
  });

  it('are read from the record, with a "/" in a key kept as a "/"', async () => {
    const target = await start();
    const published = emulator.state.addDeposition(1, 'Done', { 'raw/a b.csv': 'abc', 'top.txt': 'top' }, true);
    const read = await target.read(ctx(TOKEN), depositionId(published.id));
    const files = await drain(read.entries);
    expect(files.get('Done/raw/a b.csv')?.toString()).toBe('abc');
    expect(files.get('Done/top.txt')?.toString()).toBe('top');
    const single = await target.read(ctx(TOKEN), fileId(published.id, 'top.txt'));
    expect((await drain(single.entries)).get('top.txt')?.toString()).toBe('top');
    const contents = emulator.state.requests.filter((r) => r.endsWith('/content'));
    expect(contents).toContain(`GET /api/records/${published.id}/files/raw/a%20b.csv/content`);
    expect(contents.every((r) => !r.includes('/draft/'))).toBe(true);
  });

  it('a draft\'s files still come from links.download', async () => {
    const target = await start();
    const draft = emulator.state.addDeposition(1, 'Draft', { 'd.txt': 'draft bytes' });
    const files = await drain((await target.read(ctx(TOKEN), depositionId(draft.id))).entries);
    expect(files.get('Draft/d.txt')?.toString()).toBe('draft bytes');
    expect(emulator.state.requests).toContain(`GET /api/records/${draft.id}/draft/files/d.txt/content`);
  });
});

describe('Zenodo: a new-deposition upload that fails', () => {
  const upload = (target: Awaited<ReturnType<typeof start>>) =>
    target.write(ctx(TOKEN), null, entriesFrom({ 'Set/': null, 'Set/a.txt': 'a', 'Set/b.txt': 'b' }, { withSize: true }), writeOptions('ignore')).catch((e: unknown) => e);

  it('deletes the draft it made, and says so', async () => {
    // a 401 on the bucket ends the write (file-failure.ts)
    const target = await start(new FaultPlan().add({ kind: 'status', server: 'api', method: 'PUT', path: '/api/files/', status: 401 }));
    const error = (await upload(target)) as FerryError;
    expect(error).toBeInstanceOf(FerryError);
    expect(error.message).toMatch(/The new Zenodo deposition 'Set' \(id \d+\) was removed again, so nothing is left behind\./);
    expect([...emulator.state.depositions.values()]).toEqual([]);
  });

  it('names the draft and where to delete it when deleting fails too', async () => {
    const faults = new FaultPlan()
      .add({ kind: 'status', server: 'api', method: 'PUT', path: '/api/files/', status: 401 })
      .add({ kind: 'status', server: 'api', method: 'DELETE', status: 503, times: Infinity });
    const target = await start(faults);
    const error = (await upload(target)) as FerryError;
    const left = [...emulator.state.depositions.values()];
    expect(left).toHaveLength(1);
    expect(error.message).toContain(`The new Zenodo deposition 'Set' (id ${left[0]!.id}) was left behind and could not be removed`);
    expect(error.message).toContain(`delete the draft at ${emulator.url}/deposit/${left[0]!.id}`);
  });
});
