import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { encodeLocalId } from './ids.js';
import { LocalTarget } from './local-target.js';
import { READ_AHEAD_BYTES, READ_AHEAD_FILES, ReadAhead } from './read-ahead.js';
import { ctx, tempDir } from './test-helpers.js';

// A folder read reads small files ahead of the consumer: the bytes must be the files',
// in order, whatever the consumer does (open twice, skip some, stop early).

let root: string;
let cleanup: () => Promise<void>;
const files = new Map<string, Buffer>();

beforeAll(async () => {
  ({ dir: root, cleanup } = await tempDir('read-ahead'));
  for (let i = 0; i < 60; i++) {
    const name = `Data/d${i % 4}/f${String(i).padStart(2, '0')}.bin`;
    const bytes = randomBytes(i === 7 ? 0 : i === 8 ? 1024 * 1024 + 5 : 1000 + i * 3000);
    files.set(name, bytes);
  }
  for (const [name, bytes] of files) {
    await mkdir(path.dirname(path.join(root, name)), { recursive: true });
    await writeFile(path.join(root, name), bytes);
  }
});

afterAll(async () => {
  await cleanup();
});

async function bytesOf(stream: AsyncIterable<unknown>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

it('gives every file\'s bytes, opened once, twice, or not at all', async () => {
  const target = new LocalTarget({ root });
  const read = await target.read(ctx(), encodeLocalId('Data'));
  const seen: string[] = [];
  let i = 0;
  for await (const entry of read.entries) {
    if (entry.kind === 'folder') continue;
    seen.push(entry.path);
    const expected = files.get(entry.path)!;
    expect(entry.size).toBe(expected.length);
    if (i % 5 === 4) continue; // never opened
    expect((await bytesOf(await entry.open())).equals(expected)).toBe(true);
    if (i % 3 === 0) expect((await bytesOf(await entry.open())).equals(expected)).toBe(true);
    i++;
  }
  expect(seen.sort()).toEqual([...files.keys()].sort());
});

it('a file replaced by a symlink before its read ahead is refused, not followed', async () => {
  const target = new LocalTarget({ root });
  await writeFile(path.join(root, 'secret.txt'), 'secret');
  const read = await target.read(ctx(), encodeLocalId('Data'));
  const iterator = read.entries[Symbol.asyncIterator]();
  await iterator.next(); // the folder itself: the walk has not begun
  const victim = path.join(root, 'Data', 'd3', 'f59.bin');
  const original = await readFile(victim);
  await rm(victim);
  await symlink(path.join(root, 'secret.txt'), victim);
  try {
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
      if (next.value.path !== 'Data/d3/f59.bin') continue;
      // the walk saw the link (and skipped it), or saw the file and opening it now fails
      const opened = await next.value.open().then(bytesOf, (error: unknown) => error);
      expect(opened).toBeInstanceOf(Error);
    }
  } finally {
    await rm(victim);
    await writeFile(victim, original);
  }
});

it('stopping early leaves nothing behind that breaks the next read', async () => {
  const target = new LocalTarget({ root });
  for (let round = 0; round < 3; round++) {
    const read = await target.read(ctx(), encodeLocalId('Data'));
    let n = 0;
    for await (const entry of read.entries) {
      if (++n > 5) break;
      if (entry.kind === 'file') await bytesOf(await entry.open());
    }
  }
});

describe('a small file read on a file worker thread (worker-reads) or on this thread', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
    vi.resetModules();
  });

  it.each([
    ['on a file worker thread', ''],
    ['on this thread', '-worker-reads'],
  ])('a small file is offered whole (whole-small-files), its bytes and digests those of the file, read ahead once and from disk after that, %s', async (_where, setting) => {
  vi.resetModules();
  vi.stubEnv('FERRY_FAST_PATHS', setting);
  const { createHash } = await import('node:crypto');
  const { readWholeOf } = await import('../../jobs/whole-entry.js');
  const { LocalTarget } = await import('./local-target.js');
  const target = new LocalTarget({ root });
  const read = await target.read(ctx(), encodeLocalId('Data'));
  let offered = 0;
  for await (const entry of read.entries) {
    if (entry.kind === 'folder') continue;
    const expected = files.get(entry.path)!;
    const readWhole = readWholeOf(entry);
    // up to 1 MiB: offered whole; the one file over it streams
    expect(readWhole === null).toBe(expected.length > 1024 * 1024);
    if (!readWhole) continue;
    offered++;
    // the first read (ahead, on a file worker thread: worker-reads) asks for one algorithm that was not hashed ahead
    for (const algorithms of [['sha1', 'sha256'], ['md5', 'sha256']]) {
      const whole = await readWhole(algorithms);
      expect(whole.bytes.equals(expected)).toBe(true);
      expect(whole.hashes).toMatchObject(Object.fromEntries(algorithms.map((algorithm) => [algorithm, createHash(algorithm).update(expected).digest('hex')])));
    }
    // and the stream after a whole read is the file's too
    expect((await bytesOf(await entry.open())).equals(expected)).toBe(true);
  }
  expect(offered).toBe(files.size - 1);
  });
});

it('a second whole read of a file changed meanwhile gives its new bytes (the read-ahead copy is used once)', async () => {
  const { readWholeOf } = await import('../../jobs/whole-entry.js');
  const target = new LocalTarget({ root });
  const read = await target.read(ctx(), encodeLocalId('Data'));
  for await (const entry of read.entries) {
    if (entry.path !== 'Data/d1/f01.bin') continue;
    const absolute = path.join(root, entry.path);
    const original = await readFile(absolute);
    const first = await readWholeOf(entry)!([]);
    expect(first.bytes.equals(original)).toBe(true);
    const changed = Buffer.from(original).fill(7);
    await writeFile(absolute, changed);
    try {
      expect((await readWholeOf(entry)!([])).bytes.equals(changed)).toBe(true);
    } finally {
      await writeFile(absolute, original);
    }
  }
});

it('reads ahead of what the consumer takes, not of how far it iterates (a planner holds every entry first)', async () => {
  const target = new LocalTarget({ root });
  const read = await target.read(ctx(), encodeLocalId('Data'));
  const entries = [];
  for await (const entry of read.entries) if (entry.kind === 'file') entries.push(entry);
  // nothing taken yet: only the first few files may have been read; the last one is read when taken
  const last = entries.at(-1)!;
  const absolute = path.join(root, last.path);
  const original = await readFile(absolute);
  const changed = Buffer.from(original).fill(9);
  await writeFile(absolute, changed);
  try {
    expect((await bytesOf(await last.open())).equals(changed)).toBe(true);
  } finally {
    await writeFile(absolute, original);
  }
  // the rest still give their files' bytes, taken in order
  for (const entry of entries.slice(0, -1)) expect((await bytesOf(await entry.open())).equals(files.get(entry.path)!)).toBe(true);
});

describe('ReadAhead: which reads start, and when', () => {
  /** n files of `bytes` each (small unless said), registered in order; which have started */
  function window(sizes: number[], large: ReadonlySet<number> = new Set()) {
    const ahead = new ReadAhead();
    const started: number[] = [];
    const indexes = sizes.map((bytes, i) => ahead.add(bytes, () => started.push(i), !large.has(i)));
    return { ahead, started, indexes };
  }

  it('starts the first READ_AHEAD_FILES at once, then one more for each file taken', () => {
    const count = READ_AHEAD_FILES + 24;
    const { ahead, started, indexes } = window(Array.from({ length: count }, () => 1000));
    expect(indexes).toEqual(Array.from({ length: count }, (_, i) => i));
    expect(started).toEqual(Array.from({ length: READ_AHEAD_FILES }, (_, i) => i));
    ahead.taken(0);
    expect(started.length).toBe(READ_AHEAD_FILES + 1);
    ahead.taken(0); // again: nothing more
    expect(started.length).toBe(READ_AHEAD_FILES + 1);
  });

  it('never starts a file passed without being taken, nor a large one, and keeps within READ_AHEAD_BYTES', () => {
    const n = READ_AHEAD_FILES;
    // a large file and one small file as big as the byte budget, both among those passed
    const { ahead, started } = window(Array.from({ length: 3 * n }, (_, i) => (i === n + 9 ? READ_AHEAD_BYTES : 1000)), new Set([n + 4]));
    expect(started).toEqual(Array.from({ length: n }, (_, i) => i));
    ahead.taken(2 * n - 2); // n … 2n−2 passed: only those started before stay started
    expect(started.filter((i) => i >= n && i <= 2 * n - 2)).toEqual([]);
    expect(started.slice(-n)).toEqual(Array.from({ length: n }, (_, i) => 2 * n - 1 + i));
    // a file that fills the byte budget stops the window before it
    const budget = window([1000, READ_AHEAD_BYTES, 1000]);
    expect(budget.started).toEqual([0]);
    budget.ahead.taken(0);
    expect(budget.started).toEqual([0, 1]);
    budget.ahead.taken(1);
    expect(budget.started).toEqual([0, 1, 2]);
    expect(window([1, 2, 3], new Set([1])).started).toEqual([0, 2]);
  });

  it('keeps its window right in a long read while the files passed are let go from its front', () => {
    const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);
    const count = 5000;
    const { ahead, started } = window(Array.from({ length: count }, () => 10));
    for (let i = 0; i < 3000; i += 3) ahead.taken(i); // the furthest taken 2997; the front let go at 2499
    expect(started).toEqual(range(0, 2997 + READ_AHEAD_FILES + 1));
    ahead.taken(4000); // a jump: 3014–4000 passed without being read, the front let go again
    expect(started.slice(-READ_AHEAD_FILES)).toEqual(range(4001, 4001 + READ_AHEAD_FILES));
    for (let i = 4001; i < count; i++) ahead.taken(i);
    expect(started).toEqual([...range(0, 2997 + READ_AHEAD_FILES + 1), ...range(4001, count)]);
  });
});
