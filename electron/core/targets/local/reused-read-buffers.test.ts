import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { expect, it } from 'vitest';
import { READ_BUFFER_BYTES, readBufferCounts } from '../../read-buffers.js';
import { encodeLocalId } from './ids.js';
import { LocalTarget } from './local-target.js';
import { ctx, tempDirEach, writeOptions } from './test-helpers.js';

// Local → local, a large file's chunks are lent by the read and given back by the writer once
// written (fast path 'reused-read-buffers', read-buffers.ts): a few buffers carry the whole file.

const workspace = tempDirEach('reused-read-buffers');

it('copies a large file byte for byte through a few buffers, each given back once written', async () => {
  const from = path.join(workspace.dir, 'from', 'Run');
  const into = path.join(workspace.dir, 'into');
  await mkdir(from, { recursive: true });
  await mkdir(into);
  const big = randomBytes(24 * READ_BUFFER_BYTES + 5);
  await writeFile(path.join(from, 'big.bin'), big);
  await writeFile(path.join(from, 'small.txt'), 'small');
  const source = new LocalTarget({ root: path.dirname(from) });
  const destination = new LocalTarget({ root: into });
  const before = { ...readBufferCounts };
  const read = await source.read(ctx(), encodeLocalId('Run'));
  await destination.write(ctx(), null, read.entries, writeOptions('update'));
  expect((await readFile(path.join(into, 'Run', 'big.bin'))).equals(big)).toBe(true);
  expect(await readFile(path.join(into, 'Run', 'small.txt'), 'utf8')).toBe('small');
  const made = readBufferCounts.made - before.made;
  const reused = readBufferCounts.reused - before.reused;
  // 25 chunks: kept by the writer, each would be a buffer of its own (all but the 8 kept free)
  expect(made + reused).toBeGreaterThanOrEqual(25);
  expect(made).toBeLessThan(10);
});
