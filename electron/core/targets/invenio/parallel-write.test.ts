import { afterEach, describe, expect, it } from 'vitest';
import { makeConfig } from '../../config.js';
import { CancelledError } from '../../errors.js';
import { fastPathOn } from '../../fast-paths.js';
import { MemorySecretStore } from '../../keychain/memory.js';
import type { Target } from '../../target.js';
import { startInvenioEmulator, type InvenioEmulator } from '../../../../test/emulators/invenio/emulator.js';
import { FaultPlan } from '../../../../test/emulators/shared/faults.js';
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

/**
 * `declare-batches`: new keys are declared up to 16 in one `POST …/draft/files`, their files
 * then a PUT and a commit each; a key whose file never took it over is removed again, and a
 * batch the instance refuses leaves each file to declare, and meet the refusal, itself. With
 * the fast path off (FERRY_FAST_PATHS=-declare-batches) every file declares its own key.
 */
describe('declared keys in batches, on InvenioRDM (emulator, 100 ms a request)', () => {
  const many = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`Run/m${String(i).padStart(2, '0')}.txt`, `many ${i}\n`.repeat(3 + i)]));
  const declares = () => emulator!.state.requests.filter((request) => /^POST \/api\/records\/[^/]+\/draft\/files$/.test(request)).length;

  it('declares the keys of 16 new files in one request, and commits each file with its MD5', async () => {
    const { target } = await start();
    const outcome = await target.write(ctx(TOKEN), null, entriesFrom({ 'Run/': null, ...many }), writeOptions());
    expect(outcome.created).toEqual(Object.keys(many));
    for (const [name, content] of Object.entries(many)) expect(outcome.stored?.get(name)).toMatchObject({ hashes: { md5: md5(content) } });
    const draft = [...emulator!.state.records.values()][0]!;
    expect(draft.files.every((file) => file.committed)).toBe(true);
    expect(draft.files).toHaveLength(40);
    expect(declares()).toBe(fastPathOn('declare-batches') ? 3 : 40);
  });

  it('removes the keys it declared ahead when the write stops before their files', async () => {
    const { target } = await start();
    const draft = emulator!.state.addRecord(1, 'Into', { 'there.txt': 'there' });
    const controller = new AbortController();
    let written = 0;
    const write = target.write({ token: TOKEN, signal: controller.signal }, recordId(draft.id), entriesFrom(many), {
      ...writeOptions(),
      signal: controller.signal,
      // cancelled with the first batch's files still to go
      onFileWritten: () => ++written === 3 && controller.abort(),
    });
    await expect(write).rejects.toBeInstanceOf(CancelledError);
    expect(written).toBeLessThan(16);
    // only committed files stay: none of the keys declared for files that never went up
    expect(draft.files.filter((file) => !file.committed).map((file) => file.key)).toEqual([]);
    expect(draft.files.length).toBeGreaterThanOrEqual(1 + 3);
  });

  it('declares each key of a batch again itself when the answer to the batch was lost', async () => {
    // the instance declares the keys, then the connection drops before its answer leaves
    emulator = await startInvenioEmulator({ latency: new Latency(100), faults: new FaultPlan().add({ kind: 'reset-after-landing', method: 'POST', path: /\/draft\/files$/ }) });
    const target = createInvenioTarget(makeConfig({ dataDir: '/nonexistent' }), new MemorySecretStore(), { defaultUrl: emulator.url, ratePerSecond: 1000, retries: 0 });
    const draft = emulator.state.addRecord(1, 'Lost', {});
    const outcome = await target.write(ctx(TOKEN), recordId(draft.id), entriesFrom(files), writeOptions());
    if (fastPathOn('declare-batches')) {
      // each file removes the key the batch may have declared (a 404 if not), then declares it
      expect(outcome.fileErrors).toEqual([]);
      expect(outcome.created).toEqual(names);
    } else {
      // one file's own declare whose answer was lost fails that file: the first of the two in
      // flight to reach the instance, which may be either
      expect(outcome.fileErrors).toEqual([{ path: expect.stringMatching(/^Run\/f0[01]\.txt$/), error: expect.any(String) }]);
      expect(outcome.created).toEqual(names.filter((name) => name !== outcome.fileErrors[0]!.path));
    }
    expect(draft.files.filter((file) => file.committed)).toHaveLength(outcome.created.length);
  });

  it('when the instance refuses a batch, each file declares its own key and reports its own refusal', async () => {
    // the instance allows 5 files; Ferry is not told, so the batch of 12 is refused as a whole
    const { target } = await start();
    emulator!.state.options.maxFiles = 5;
    const draft = emulator!.state.addRecord(1, 'Small', {});
    const outcome = await target.write(ctx(TOKEN), recordId(draft.id), entriesFrom(files), writeOptions());
    // which five get in is the order the two files in flight reach the instance: a limit Ferry knows is settled in entry order instead
    expect(outcome.created).toHaveLength(5);
    expect(outcome.fileErrors).toHaveLength(7);
    for (const failure of outcome.fileErrors) expect(failure.error).toMatch(/would result in 6 files \(max is 5\)/);
    expect([...outcome.created, ...outcome.fileErrors.map((failure) => failure.path)].sort()).toEqual(names);
    expect(draft.files.map((file) => [file.key, file.committed]).sort()).toEqual(outcome.created.map((name) => [name.replace('/', '__'), true]).sort());
  });
});

