import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { once } from 'node:events';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { makeConfig } from '../../config.js';
import { MemorySecretStore } from '../../keychain/memory.js';
import { startDataverseEmulator, type DataverseEmulator } from '../../../../test/emulators/dataverse/emulator.js';
import { ctx, writeOptions } from '../../../../test/target-suite/test-entries.js';
import { createDataverseTarget } from './index.js';
import { datasetId } from './ids.js';
import type { JournalRecord } from './upload-journal.js';

/**
 * A multipart direct upload killed (SIGKILL) mid-way and run again sends only the parts storage
 * had not acknowledged. The goal is 1 GiB; this runs FERRY_DV_RESUME_MIB (default 12)
 * MiB in 1 MiB parts to spare the shared machines — the code path is the same.
 */
const MIB = 1024 * 1024;
const SIZE = Number(process.env.FERRY_DV_RESUME_MIB ?? 12) * MIB;
let emulator: DataverseEmulator;
let dir: string;

beforeEach(async () => {
  emulator = await startDataverseEmulator({ directUpload: true, partSize: MIB, s3DelayMs: 100 });
  dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-dv-resume-'));
});
afterEach(async () => {
  await emulator.close();
  await rm(dir, { recursive: true, force: true });
});

it('resumes a direct upload after the process sending it was killed, without resending acknowledged parts', async () => {
  const d = emulator.state.addDataset(1, 'Resume');
  const source = path.join(dir, 'source.bin');
  const bytes = randomBytes(SIZE);
  await writeFile(source, bytes);
  const journalDir = path.join(dir, 'journal');

  const child = spawn(process.execPath, ['--import', new URL('../../../../node_modules/tsx/dist/loader.mjs', import.meta.url).href, fileURLToPath(new URL('./test-support/direct-upload-child.ts', import.meta.url)), emulator.url, String(d.id), source, journalDir], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = once(child, 'exit');
  const parts = () => [...emulator.state.uploads.values()][0]?.parts.size ?? 0;
  try {
    for (const started = Date.now(); parts() < 4; ) {
      if (Date.now() - started > 60_000) throw new Error('the child never got 4 parts up');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    child.kill('SIGKILL');
    await exited;
  }
  const [journalFile] = await readdir(journalDir);
  const journaled = JSON.parse(await readFile(path.join(journalDir, journalFile!), 'utf8')) as JournalRecord;
  const done = Object.keys(journaled.done);
  expect(done.length).toBeGreaterThanOrEqual(3);
  expect(journaled.completed).toBe(false);
  const before = emulator.state.requests.length;

  const target = createDataverseTarget(makeConfig({ dataDir: dir }), new MemorySecretStore(), { defaultUrl: emulator.url, ratePerSecond: 1000, retries: 0, directUploadBytes: 1, journalDir });
  const entries = async function* () {
    yield { path: 'big.bin', kind: 'file' as const, size: SIZE, mtime: null, hashes: {}, open: async () => createReadStream(source) };
  };
  const outcome = await target.write(ctx('dv-token-1111'), datasetId(d.id), entries(), writeOptions());
  expect(outcome).toMatchObject({ created: ['big.bin'], fileErrors: [] });

  const resent = emulator.state.requests.slice(before).filter((r) => r.server === 's3').map((r) => new URL(`http://x${r.path}`).searchParams.get('partNumber'));
  for (const part of done) expect(resent, `part ${part} was acknowledged before the kill`).not.toContain(part);
  expect(resent.length + done.length).toBeGreaterThanOrEqual(SIZE / MIB);
  expect(emulator.state.requests.slice(before).some((r) => /uploadurls/.test(r.path))).toBe(false); // the journaled URLs were used
  const stored = d.draft!.files.find((f) => f.label === 'big.bin')!;
  expect(stored.bytes.equals(bytes)).toBe(true);
  expect(stored.checksum.value).toBe(createHash('md5').update(bytes).digest('hex'));
  expect(await readdir(journalDir), "journal left").toEqual([]);
}, 120_000);
