import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { makeConfig } from '../../config.js';
import { CancelledError } from '../../errors.js';
import { fastPathOn } from '../../fast-paths.js';
import { MemorySecretStore } from '../../keychain/memory.js';
import type { Entry, Target } from '../../target.js';
import { startDataverseEmulator, type DataverseEmulator, type DataverseEmulatorOptions } from '../../../../test/emulators/dataverse/emulator.js';
import { ctx, entriesFrom, writeOptions } from '../../../../test/target-suite/test-entries.js';
import { DATAVERSE_IN_FLIGHT, REGISTER_BATCH } from './dataverse-target.js';
import { datasetId } from './ids.js';
import { createDataverseTarget } from './index.js';

/**
 * `parallel-writes` on Dataverse: where the dataset's store takes direct uploads, a write keeps
 * DATAVERSE_IN_FLIGHT.direct files' storage PUTs under way at once (storage holds each PUT 40 ms
 * unless a test says otherwise, as a remote's round trip), while the dataset still sees one
 * change at a time — the emulator answers a change that overlaps another with Dataverse's
 * OptimisticLockException — and the addFiles registrations come one after another, their files
 * in entry order. The outcome and the resume journal read as a one-at-a-time write's would.
 * With the fast path off (FERRY_FAST_PATHS=-parallel-writes) one PUT is under way at a time.
 */
const TOKEN = 'dv-token-1111';
const FILES = 12;
const files = Object.fromEntries(Array.from({ length: FILES }, (_, i) => [`f${String(i).padStart(2, '0')}.bin`, `file ${i}\n`.repeat(10 + i)]));
const names = Object.keys(files);

let emulator: DataverseEmulator | undefined;
afterEach(() => emulator?.close());

async function start(options: DataverseEmulatorOptions, journalDir: string | null = null): Promise<Target> {
  emulator = await startDataverseEmulator({ s3DelayMs: 40, ...options });
  return createDataverseTarget(makeConfig({ dataDir: '/nonexistent' }), new MemorySecretStore(), { defaultUrl: emulator.url, ratePerSecond: 1000, retries: 0, journalDir });
}

/**
 * Several PUTs under way at once, never more than declared (`exactly`: as many as declared, for
 * a write whose PUTs are slow enough to fill every slot even on a loaded machine); with the
 * fast path off, one.
 */
function expectPutsInFlight(exactly = false): void {
  const most = emulator!.state.storagePuts.most;
  if (!fastPathOn('parallel-writes')) return void expect(most).toBe(1);
  expect(most).toBeGreaterThan(1);
  if (exactly) expect(most).toBe(DATAVERSE_IN_FLIGHT.direct.files);
  else expect(most).toBeLessThanOrEqual(DATAVERSE_IN_FLIGHT.direct.files);
}

const registered = () => emulator!.state.requests.filter((r) => /\/addFiles$/.test(r.path)).map((r) => (JSON.parse(r.jsonData!) as { fileName: string }[]).map((f) => f.fileName));
/** A write that stopped before any registration: nothing registered or in the draft, told to the job or journaled. */
async function expectNothingChanged(draftFiles: unknown[], written: string[], journalDir: string): Promise<void> {
  expect(registered()).toEqual([]);
  expect(draftFiles).toEqual([]);
  expect(written).toEqual([]);
  expect(await readdir(journalDir)).toEqual([]);
}
const adds = () => emulator!.state.requests.filter((r) => /\/add$/.test(r.path)).map((r) => (JSON.parse(r.jsonData!) as { label: string }).label);

describe('a parallel write to Dataverse (emulator, storage 40–100 ms a PUT)', () => {
  it('keeps its direct uploads in flight, one change of the dataset at a time, registered and reported in entry order', async () => {
    const target = await start({ directUpload: true, s3DelayMs: 100 });
    const d = emulator!.state.addDataset(1, 'Parallel');
    // an empty file goes natively, between the direct uploads
    const entries = { ...Object.fromEntries(names.slice(0, 6).map((name) => [name, files[name]!])), 'empty.txt': '', ...Object.fromEntries(names.slice(6).map((name) => [name, files[name]!])) };
    const written: string[] = [];
    const outcome = await target.write(ctx(TOKEN), datasetId(d.id), entriesFrom(entries), { ...writeOptions(), onFileWritten: (path) => written.push(path) });
    expect(outcome.fileErrors).toEqual([]);
    expect(outcome.created).toEqual(Object.keys(entries));
    expect(written).toEqual(Object.keys(entries));
    expect([...(outcome.stored?.keys() ?? [])]).toEqual(Object.keys(entries));
    expectPutsInFlight(true);
    // never two changes at once (the emulator would have refused one), registrations in entry order
    expect(emulator!.state.changes.most).toBe(1);
    expect(registered()).toEqual([names]);
    expect(adds()).toEqual(['empty.txt']);
    expect(d.draft!.files.map((f) => f.label).sort()).toEqual(Object.keys(entries).sort());
  });

  it('registers REGISTER_BATCH at a time, each batch once the one before has answered, in entry order', async () => {
    const target = await start({ directUpload: true, s3DelayMs: 20 });
    const d = emulator!.state.addDataset(1, 'Batches');
    const many = Object.fromEntries(Array.from({ length: REGISTER_BATCH + 30 }, (_, i) => [`m/${String(i).padStart(3, '0')}.txt`, `m ${i}`]));
    const outcome = await target.write(ctx(TOKEN), datasetId(d.id), entriesFrom(many), writeOptions());
    expect(outcome.created).toEqual(Object.keys(many));
    const batches = registered();
    expect(batches.map((batch) => batch.length)).toEqual([REGISTER_BATCH, 30]);
    expect(batches.flat()).toEqual(Object.keys(many).map((path) => path.slice('m/'.length)));
    expect(emulator!.state.changes.most).toBe(1);
    expectPutsInFlight();
  });

  it("a PUT storage refuses in the middle is that file's error; the others are created, reported in entry order", async () => {
    const target = await start({ directUpload: true });
    const d = emulator!.state.addDataset(1, 'Expired');
    const refused = names[5]!;
    emulator!.state.expiredPutSize = Buffer.byteLength(files[refused]!);
    const written: string[] = [];
    const outcome = await target.write(ctx(TOKEN), datasetId(d.id), entriesFrom(files), { ...writeOptions(), onFileWritten: (path) => written.push(path) });
    const others = names.filter((name) => name !== refused);
    expect(outcome.created).toEqual(others);
    expect(written).toEqual(others);
    expect(outcome.fileErrors).toEqual([{ path: refused, error: expect.stringMatching(/storage/) }]);
    expect(registered()).toEqual([others]);
    expectPutsInFlight();
  });

  // several in flight (parallel-writes): the files after a held one reach storage beside it
  it.runIf(fastPathOn('parallel-writes'))('cancelled with uploads in storage waiting for their turn: registers none, removes their journal records', { timeout: 15_000 }, async () => {
    const journalDir = await mkdtemp(path.join(os.tmpdir(), 'ferry-dv-parallel-cancel-'));
    try {
      const target = await start({ directUpload: true }, journalDir);
      const d = emulator!.state.addDataset(1, 'Cancelled');
      const cancel = new AbortController();
      const file = (name: string, open?: () => Promise<Readable>): Entry => ({ path: name, kind: 'file', size: Buffer.byteLength(files[name]!), mtime: null, hashes: {}, open: open ?? (async () => Readable.from([Buffer.from(files[name]!)])) });
      // the second file's bytes come only with the cancel: the three after it go to storage meanwhile
      const held = () => new Promise<Readable>((resolve) => cancel.signal.addEventListener('abort', () => resolve(Readable.from([Buffer.from(files[names[1]!]!)]))));
      const watch = setInterval(() => emulator!.state.objects.size >= 4 && cancel.abort(), 5);
      async function* entries(): AsyncIterable<Entry> {
        yield file(names[0]!);
        yield file(names[1]!, held);
        for (const name of names.slice(2, 5)) yield file(name);
      }
      const written: string[] = [];
      try {
        await expect(target.write(ctx(TOKEN), datasetId(d.id), entries(), { ...writeOptions(), signal: cancel.signal, onFileWritten: (p) => written.push(p) })).rejects.toBeInstanceOf(CancelledError);
      } finally {
        clearInterval(watch);
      }
      expect(emulator!.state.objects.size).toBe(4);
      await expectNothingChanged(d.draft!.files, written, journalDir);
    } finally {
      await rm(journalDir, { recursive: true, force: true });
    }
  });

  it('a hard failure (the token revoked) stops new starts, registers nothing, and leaves no journal record', { timeout: 15_000 }, async () => {
    const journalDir = await mkdtemp(path.join(os.tmpdir(), 'ferry-dv-parallel-revoked-'));
    try {
      const target = await start({ directUpload: true }, journalDir);
      const d = emulator!.state.addDataset(1, 'Revoked');
      const many = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`r${String(i).padStart(2, '0')}.bin`, `r ${i}\n`.repeat(20)]));
      // the user's token stops working once two files are in storage (401 "Bad API key" from then on)
      const watch = setInterval(() => emulator!.state.objects.size >= 2 && emulator!.state.users.delete(TOKEN), 5);
      const written: string[] = [];
      try {
        await expect(target.write(ctx(TOKEN), datasetId(d.id), entriesFrom(many), { ...writeOptions(), onFileWritten: (p) => written.push(p) })).rejects.toMatchObject({ status: 401 });
      } finally {
        clearInterval(watch);
      }
      // the files in flight when it failed, and no new ones
      expect(emulator!.state.requests.filter((r) => /uploadurls/.test(r.path)).length).toBeLessThanOrEqual(2 + 2 * DATAVERSE_IN_FLIGHT.direct.files);
      await expectNothingChanged(d.draft!.files, written, journalDir);
    } finally {
      await rm(journalDir, { recursive: true, force: true });
    }
  });

  it('sends one file at a time where the store takes no direct upload', async () => {
    const target = await start({ directUpload: false });
    const d = emulator!.state.addDataset(1, 'Native');
    const outcome = await target.write(ctx(TOKEN), datasetId(d.id), entriesFrom(files), writeOptions());
    expect(outcome.created).toEqual(names);
    expect(adds()).toEqual(names);
    expect(emulator!.state.changes.most).toBe(1);
    expect(emulator!.state.requests.filter((r) => /uploadurls/.test(r.path))).toHaveLength(1);
  });
});
