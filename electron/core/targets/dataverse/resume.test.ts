import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { once } from 'node:events';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
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
 * had not acknowledged. The goal is 1 GiB; by default this runs 12 MiB in 12 parts to
 * spare the shared machines (the code path is the same). The 1 GiB run:
 *   FERRY_DV_RESUME_MIB=1024 npx vitest run electron/core/targets/dataverse/resume.test.ts
 * Nothing holds the file in memory: the source is written from random chunks as it is hashed,
 * Ferry stages and sends byte ranges from disk, and the emulator's storage keeps every part and
 * the completed object as files (`storageDir`).
 */
const MIB = 1024 * 1024;
const SIZE = Number(process.env.FERRY_DV_RESUME_MIB ?? 12) * MIB;
/** about 16 parts whatever the size, never under 1 MiB */
const PART = Math.max(1, Math.ceil(SIZE / MIB / 16)) * MIB;
const PARTS = Math.ceil(SIZE / PART);
/** the child stages the whole file before its first part: give a GiB minutes, not seconds */
const LIMIT_MS = Math.max(120_000, (SIZE / MIB) * 600);
let emulator: DataverseEmulator;
let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-dv-resume-'));
  emulator = await startDataverseEmulator({ directUpload: true, partSize: PART, s3DelayMs: 100, storageDir: path.join(dir, 'storage') });
});
afterEach(async () => {
  await emulator.close();
  await rm(dir, { recursive: true, force: true });
});

/** `size` random bytes written to `file` a MiB at a time; their MD5. */
async function randomFile(file: string, size: number): Promise<string> {
  const hash = createHash('md5');
  async function* chunks() {
    for (let left = size; left > 0; left -= MIB) {
      const chunk = randomBytes(Math.min(MIB, left));
      hash.update(chunk);
      yield chunk;
    }
  }
  await pipeline(Readable.from(chunks()), createWriteStream(file));
  return hash.digest('hex');
}

async function md5OfFile(file: string): Promise<string> {
  const hash = createHash('md5');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

it(`resumes a ${SIZE / MIB} MiB direct upload in ${PARTS} parts after the process sending it was killed, without resending acknowledged parts`, async () => {
  const d = emulator.state.addDataset(1, 'Resume');
  const source = path.join(dir, 'source.bin');
  const sourceMd5 = await randomFile(source, SIZE);
  const journalDir = path.join(dir, 'journal');
  // the child's staged copy goes here, so the clean-up finds what the kill left
  const childTmp = path.join(dir, 'child-tmp');
  await mkdir(childTmp);

  const child = spawn(process.execPath, ['--import', new URL('../../../../node_modules/tsx/dist/loader.mjs', import.meta.url).href, fileURLToPath(new URL('./test-support/direct-upload-child.ts', import.meta.url)), emulator.url, String(d.id), source, journalDir], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, TMPDIR: childTmp },
  });
  const exited = once(child, 'exit');
  const parts = () => [...emulator.state.uploads.values()][0]?.parts.size ?? 0;
  try {
    for (const started = Date.now(); parts() < 4; ) {
      if (Date.now() - started > LIMIT_MS / 2) throw new Error('the child never got 4 parts up');
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
  expect(done.length).toBeLessThan(PARTS);
  expect(journaled.completed).toBe(false);
  const before = emulator.state.requests.length;

  const started = Date.now();
  const target = createDataverseTarget(makeConfig({ dataDir: dir }), new MemorySecretStore(), { defaultUrl: emulator.url, ratePerSecond: 1000, retries: 0, directUploadBytes: 1, journalDir });
  const entries = async function* () {
    yield { path: 'big.bin', kind: 'file' as const, size: SIZE, mtime: null, hashes: {}, open: async () => createReadStream(source) };
  };
  const outcome = await target.write(ctx('dv-token-1111'), datasetId(d.id), entries(), writeOptions());
  expect(outcome).toMatchObject({ created: ['big.bin'], fileErrors: [] });
  console.log(`resumed ${SIZE / MIB} MiB (${PARTS} parts of ${PART / MIB} MiB, ${done.length} done before the kill) in ${Date.now() - started} ms`);

  // exactly the parts the journal lacked, each once: none acknowledged before the kill again
  const resent = emulator.state.requests.slice(before).filter((r) => r.server === 's3').map((r) => new URL(`http://x${r.path}`).searchParams.get('partNumber'));
  const missing = Array.from({ length: PARTS }, (_, i) => String(i + 1)).filter((n) => !done.includes(n));
  expect(resent.sort((a, b) => Number(a) - Number(b))).toEqual(missing);
  expect(emulator.state.requests.slice(before).some((r) => /uploadurls/.test(r.path))).toBe(false); // the journaled URLs were used
  const stored = d.draft!.files.find((f) => f.label === 'big.bin')!;
  expect(stored.disk?.size).toBe(SIZE);
  expect(await md5OfFile(stored.disk!.path)).toBe(sourceMd5);
  expect(stored.checksum.value).toBe(sourceMd5);
  expect(await readdir(journalDir), 'journal left').toEqual([]);
}, LIMIT_MS);
