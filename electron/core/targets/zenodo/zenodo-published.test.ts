// Zenodo on the records API: a new-record upload that fails leaves no draft behind, or names
// it and where to delete it (docs/targets/zenodo.md, Findings).
import { afterEach, describe, expect, it } from 'vitest';
import { makeConfig } from '../../config.js';
import { FerryError } from '../../errors.js';
import { MemorySecretStore } from '../../keychain/memory.js';
import { FaultPlan } from '../../../../test/emulators/shared/faults.js';
import { startZenodoEmulator, type ZenodoEmulator } from '../../../../test/emulators/zenodo/emulator.js';
import { ctx, entriesFrom, writeOptions } from '../../../../test/target-suite/test-entries.js';
import { createZenodoTarget } from './index.js';

const TOKEN = 'zenodo-token';
let emulator: ZenodoEmulator;
afterEach(() => emulator?.close());

async function start(faults?: FaultPlan) {
  emulator = await startZenodoEmulator({ faults });
  const config = makeConfig({ dataDir: '/nonexistent', remotes: { ...makeConfig().remotes, zenodoUrl: emulator.url } });
  return createZenodoTarget(config, new MemorySecretStore(), { ratePerSecond: 1000, retries: 1 });
}

describe('Zenodo: a new-record upload that fails', () => {
  const upload = (target: Awaited<ReturnType<typeof start>>) =>
    target.write(ctx(TOKEN), null, entriesFrom({ 'Set/': null, 'Set/a.txt': 'a', 'Set/b.txt': 'b' }, { withSize: true }), writeOptions('ignore')).catch((e: unknown) => e);
  // a 401 on the bytes ends the write (file-failure.ts)
  const refusedContent = { kind: 'status', server: 'api', method: 'PUT', path: '/content', status: 401 } as const;

  it('deletes the draft it made, and says so', async () => {
    const target = await start(new FaultPlan().add(refusedContent));
    const error = (await upload(target)) as FerryError;
    expect(error).toBeInstanceOf(FerryError);
    expect(error.message).toMatch(/The new draft record 'Set' \(\d+\) was removed again, so nothing is left behind\./);
    expect([...emulator.state.records.values()]).toEqual([]);
  });

  it('names the draft and where to delete it when deleting fails too', async () => {
    const faults = new FaultPlan().add(refusedContent).add({ kind: 'status', server: 'api', method: 'DELETE', status: 503, times: Infinity });
    const target = await start(faults);
    const error = (await upload(target)) as FerryError;
    const left = [...emulator.state.records.values()];
    expect(left).toHaveLength(1);
    expect(error.message).toContain(`The new draft record 'Set' (${left[0]!.id}) was left behind and could not be removed`);
    expect(error.message).toContain(`delete the draft on ${emulator.url}/uploads/${left[0]!.id}`);
  });
});
