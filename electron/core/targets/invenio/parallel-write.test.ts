import { afterEach, describe, expect, it } from 'vitest';
import { makeConfig } from '../../config.js';
import { CancelledError } from '../../errors.js';
import { fastPathOn } from '../../fast-paths.js';
import { MemorySecretStore } from '../../keychain/memory.js';
import type { Target } from '../../target.js';
import { startInvenioEmulator, type InvenioEmulator } from '../../../../test/emulators/invenio/emulator.js';
import { Latency } from '../../../../test/emulators/shared/latency.js';
import { ctx, entriesFrom, md5, writeOptions } from '../../../../test/target-suite/test-entries.js';
import { createZenodoTarget } from '../zenodo/index.js';
import { recordId } from './ids.js';
import { createInvenioTarget } from './index.js';
import { INVENIO_IN_FLIGHT, type InvenioInstance } from './invenio-target.js';

/**
 * `parallel-writes` on InvenioRDM: a write keeps its declared files in flight (each request
 * held 100 ms as a remote's round trip; a file is three requests one after another), and its
 * outcome reads exactly as a one-at-a-time write's would: every list in entry order, a per-file
 * refusal in its place, the file refused as one too many for the record the same one. With the
 * fast path off (FERRY_FAST_PATHS=-parallel-writes) one request is under way at a time.
 */
const TOKEN = 'invenio-token';
const FILES = 12;
const files = Object.fromEntries(Array.from({ length: FILES }, (_, i) => [`Run/f${String(i).padStart(2, '0')}.txt`, `file ${i}\n`.repeat(10 + i)]));
const names = Object.keys(files);
const keys = names.map((name) => name.slice('Run/'.length));

let emulator: InvenioEmulator | undefined;
afterEach(() => emulator?.close());

async function start(instance?: InvenioInstance): Promise<{ latency: Latency; target: Target }> {
  const latency = new Latency(100);
  emulator = await startInvenioEmulator({ latency, maxFiles: instance?.maxFiles });
  const target = createInvenioTarget(makeConfig({ dataDir: '/nonexistent' }), new MemorySecretStore(), { defaultUrl: emulator.url, ratePerSecond: 1000, retries: 0, instance });
  return { latency, target };
}

describe('a parallel write to InvenioRDM (emulator, 100 ms a request)', () => {
  it('keeps its declared files in flight into a new draft, and reports them in entry order', async () => {
    const { latency, target } = await start();
    const outcome = await target.write(ctx(TOKEN), null, entriesFrom({ 'Run/': null, ...files }), writeOptions());
    expect(outcome.created).toEqual(names);
    expect([...(outcome.stored?.keys() ?? [])]).toEqual(names);
    for (const name of names) expect(outcome.stored?.get(name)).toMatchObject({ hashes: { md5: md5(files[name]!) } });
    const draft = [...emulator!.state.records.values()][0]!;
    // declared on the server in the order their requests ran
    expect(draft.files.map((file) => [file.key, file.committed]).sort()).toEqual(keys.map((key) => [key, true]));
    expect(latency.mostUnderWay).toBe(fastPathOn('parallel-writes') ? INVENIO_IN_FLIGHT.files : 1);
    // connections are kept for the next request (each answer Ferry has no use for is read to its end, remote/answer-body.ts)
    expect(latency.connections, `${latency.connections} connections for ${latency.requests} requests`).toBeLessThanOrEqual(INVENIO_IN_FLIGHT.files + 4);
  });

  it('refuses the same file as one too many as a one-at-a-time write would, counting the files in flight', async () => {
    const instance: InvenioInstance = {
      name: 'small',
      readableName: 'Small RDM',
      account: (token) => ({ url: `${emulator!.url}/`, token }),
      maxFiles: 5,
      maxRecordBytes: 10 ** 9,
      allowEmptyFiles: true,
      concurrency: { files: 4, bytes: 8 * 1024 * 1024 },
    };
    const { target } = await start(instance);
    const draft = emulator!.state.addRecord(1, 'Small', { 'there.txt': 'there' });
    const outcome = await target.write(ctx(TOKEN), recordId(draft.id), entriesFrom(files), writeOptions());
    expect(outcome.created).toEqual(names.slice(0, 4));
    expect(outcome.fileErrors).toEqual(names.slice(4).map((path) => ({ path, error: 'A Small RDM record holds at most 5 files; this one is full.' })));
    // declared on the server in the order their requests ran
    expect(draft.files.map((file) => file.key).sort()).toEqual(['there.txt', ...names.slice(0, 4).map((name) => name.replace('/', '__'))].sort());
  });

  it('stops at a cancel with no request under way, and deletes the new draft again', async () => {
    const { latency, target } = await start();
    const controller = new AbortController();
    const commits = () => emulator!.state.requests.filter((r) => /\/commit$/.test(r)).length;
    // cancelled once two files are committed: others are in flight then
    const watch = setInterval(() => commits() >= 2 && controller.abort(), 5);
    try {
      const write = target.write({ token: TOKEN, signal: controller.signal }, null, entriesFrom({ 'Run/': null, ...files }), { ...writeOptions(), signal: controller.signal });
      await expect(write).rejects.toBeInstanceOf(CancelledError);
    } finally {
      clearInterval(watch);
    }
    // nothing was under way when the draft was deleted: its DELETE is the last request to arrive
    await new Promise((resolve) => setTimeout(resolve, 3 * latency.ms));
    expect(emulator!.state.requests.at(-1)).toMatch(/^DELETE \/api\/records\/[^/]+\/draft$/);
    expect([...emulator!.state.records.values()].filter((record) => record.draft)).toEqual([]);
    expect(commits()).toBeLessThan(FILES);
  });

  it('Zenodo, at one request a second, declares one file at a time', () => {
    const zenodo = createZenodoTarget(makeConfig({ dataDir: '/nonexistent' }), new MemorySecretStore());
    expect(zenodo.info.concurrency?.files).toBe(1);
  });
});
