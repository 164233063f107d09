import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { chmod, mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { bagNameFor, writeBagZip} from '../../bag/bag-writer.js';
import type { ProvenanceLog } from '../../provenance/format.js';
import { readZipText } from '../../zip/testing/zip-inspect.js';
import { HashCache } from './hash-cache.js';
import { encodeLocalId } from './ids.js';
import { LocalTarget } from './local-target.js';
import { readRememberedDigests, writeRememberedDigests } from './remembered-digests-file.js';
import { ctx, tempDir } from './test-helpers.js';

// What downloads remember outlives the process: a download after a restart takes it too,
// as long as the file's inode has not changed (its ctime says so).

let dir: string;
let root: string;
let digestsFile: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir('remembered-file'));
  root = path.join(dir, 'workspace');
  digestsFile = path.join(dir, 'data', 'remembered-digests.json');
  await mkdir(path.join(root, 'Data'), { recursive: true });
  await mkdir(path.dirname(digestsFile));
  await writeFile(path.join(root, 'Data', 'a.csv'), 'site,value\n'.repeat(300));
  await writeFile(path.join(root, 'Data', 'b.csv'), 'site,other\n'.repeat(300));
});
afterEach(async () => {
  await cleanup();
});

const md5 = (bytes: Buffer | string) => createHash('md5').update(bytes).digest('hex');

let downloads = 0;
async function remembered(target: LocalTarget): Promise<Record<string, boolean>> {
  const zipPath = path.join(dir, `${downloads++}.zip`);
  const bag = bagNameFor('local', 'x');
  await pipeline(writeBagZip(await target.read(ctx(), encodeLocalId('Data')), { targetName: 'local', resourceId: 'x', bagName: bag }), createWriteStream(zipPath));
  const provenance = (JSON.parse(await readZipText(zipPath, `${bag}/ferry-provenance.json`)) as ProvenanceLog).entries[0]!;
  await rm(zipPath);
  for (const file of provenance.files) expect(file.computed_hashes.md5).toBe(md5(await readFile(path.join(root, file.path))));
  return Object.fromEntries(provenance.files.map((file) => [file.path, file.hashes_remembered === true]));
}

it('a download after a restart takes what the last run remembered, except for a file whose inode changed since', async () => {
  const first = new LocalTarget({ root, settledAfterMs: 0, digestsFile });
  expect(await remembered(first)).toEqual({ 'Data/a.csv': false, 'Data/b.csv': false });
  await first.close();
  expect((await stat(digestsFile)).mode & 0o777).toBe(0o600);

  // a mode change moves the ctime, nothing else
  await chmod(path.join(root, 'Data', 'b.csv'), 0o640);
  const second = new LocalTarget({ root, settledAfterMs: 0, digestsFile });
  expect(await remembered(second)).toEqual({ 'Data/a.csv': true, 'Data/b.csv': false });
  await second.close();
});

it('nothing is written without a download that remembered something; a save leaves no temporary behind', async () => {
  const fresh = new LocalTarget({ root, digestsFile }); // files changed moments ago: not remembered
  await remembered(fresh);
  await fresh.close();
  expect(await readdir(path.dirname(digestsFile))).toEqual([]);
  const settled = new LocalTarget({ root, settledAfterMs: 0, digestsFile });
  await remembered(settled);
  await settled.close();
  expect(await readdir(path.dirname(digestsFile))).toEqual(['remembered-digests.json']);
});

it("a damaged file, another workspace's file or a crash's temporary: nothing is taken, nothing fails, the next save replaces it", async () => {
  const saved = new HashCache();
  saved.set({ path: 'Data/a.csv', size: 3300n, mtimeNs: 1n, ino: 2n, ctimeNs: 3n }, { md5: 'a'.repeat(32), sha256: 'b'.repeat(64) }, 7);
  await writeRememberedDigests(digestsFile, '/somewhere/else', saved.saved());
  expect(readRememberedDigests(digestsFile, path.resolve(root))).toEqual([]);
  expect(readRememberedDigests(digestsFile, '/somewhere/else')).toHaveLength(1);

  for (const damaged of ['{"format":1,', '[]', JSON.stringify({ format: 1, workspace: path.resolve(root), entries: [['Data/a.csv', '1', '2', '3', '4', -1, { md5: 'zz' }], 'x'] })]) {
    await writeFile(digestsFile, damaged);
    expect(readRememberedDigests(digestsFile, path.resolve(root))).toEqual([]);
  }
  const leftover = path.join(path.dirname(digestsFile), '.remembered-digests.json.0123456789ab.tmp');
  await writeFile(leftover, 'half');
  const target = new LocalTarget({ root, settledAfterMs: 0, digestsFile });
  await expect(readFile(leftover)).rejects.toMatchObject({ code: 'ENOENT' });
  await remembered(target);
  await target.close();
  expect(readRememberedDigests(digestsFile, path.resolve(root)).map((row) => row.path).sort()).toEqual(['Data/a.csv', 'Data/b.csv']);
});

it('a restored entry answers only a lookup that gives the same ctime', () => {
  const version = { path: 'Data/a.csv', size: 3300n, mtimeNs: 1n, ino: 2n, ctimeNs: 3n };
  const hashes = { md5: 'a'.repeat(32), sha256: 'b'.repeat(64) };
  const before = new HashCache();
  before.set(version, hashes, 7);
  const after = new HashCache();
  after.restore(before.saved());
  const { ctimeNs: _unknown, ...withoutCtime } = version;
  expect(after.get(withoutCtime)).toBeUndefined();
  expect(after.getWithCrc32(version)).toEqual({ hashes, crc32: 7 });
  expect(after.get({ ...version, ctimeNs: 4n })).toBeUndefined();
  // and a changed ctime drops it for good
  expect(after.get(version)).toBeUndefined();
});

it('saves on its own a few seconds after a download remembered something (a crash later loses nothing before that)', async () => {
  const target = new LocalTarget({ root, settledAfterMs: 0, digestsFile });
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  try {
    await remembered(target);
    expect(readRememberedDigests(digestsFile, path.resolve(root))).toEqual([]);
    vi.advanceTimersByTime(5000);
  } finally {
    vi.useRealTimers();
  }
  await vi.waitFor(() => expect(readRememberedDigests(digestsFile, path.resolve(root))).toHaveLength(2));
  await target.close();
});
