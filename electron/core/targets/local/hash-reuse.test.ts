import { createHash, randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { expect, it } from 'vitest';
import { HashingPassThrough } from '../../hashing.js';
import type { Entry } from '../../target.js';
import { encodeLocalId } from './ids.js';
import { LocalTarget } from './local-target.js';
import { ctx, tempDirEach, writeOptions } from './test-helpers.js';

// When the bytes arrive through a stream that already hashes (the job runner's fixity
// check), the writer asks it for its own algorithms instead of hashing a second time.

const workspace = tempDirEach('hash-reuse');

const digest = (algorithm: string, bytes: Buffer) => createHash(algorithm).update(bytes).digest('hex');

it('takes md5 and sha256 from an upstream HashingPassThrough, and they are right', async () => {
  const bytes = randomBytes(3 * 1024 * 1024 + 11);
  const upstreams: HashingPassThrough[] = [];
  async function* entries(): AsyncGenerator<Entry> {
    yield { path: 'Top', kind: 'folder', size: null, mtime: null, hashes: {}, open: () => Promise.reject(new Error('folder')) };
    yield {
      path: 'Top/big.bin',
      kind: 'file',
      size: bytes.length,
      mtime: null,
      hashes: {},
      open: async () => {
        const watched = new HashingPassThrough(['sha1']);
        upstreams.push(watched);
        return Readable.from([bytes.subarray(0, 1000), bytes.subarray(1000)]).pipe(watched);
      },
    };
  }
  const target = new LocalTarget({ root: workspace.dir });
  await target.write(ctx(), null, entries(), writeOptions('update'));
  expect((await readFile(path.join(workspace.dir, 'Top', 'big.bin'))).equals(bytes)).toBe(true);
  // the upstream stream computed the writer's algorithms besides its own
  expect(upstreams[0]!.digests).toEqual({ sha1: digest('sha1', bytes), md5: digest('md5', bytes), sha256: digest('sha256', bytes) });
  // and the cache holds them: detail needs no second read
  const before = target.hashCache.computations;
  const detail = await target.detail(ctx(), encodeLocalId('Top/big.bin'));
  expect(detail.hashes).toEqual({ md5: digest('md5', bytes), sha256: digest('sha256', bytes) });
  expect(target.hashCache.computations).toBe(before);
});

it('the same path twice in one write is refused whole under either policy (plan/write-plan.ts), and nothing is made', async () => {
  const target = new LocalTarget({ root: workspace.dir });
  async function* twice(): AsyncGenerator<Entry> {
    for (const content of ['first', 'second']) {
      const bytes = Buffer.from(content);
      yield { path: 'Fresh/same.txt', kind: 'file', size: bytes.length, mtime: null, hashes: {}, open: async () => Readable.from([bytes]) };
    }
  }
  for (const action of ['ignore', 'update'] as const) {
    await expect(target.write(ctx(), null, twice(), writeOptions(action))).rejects.toMatchObject({ status: 400, message: expect.stringContaining('"Fresh/same.txt" twice') });
  }
  expect(await readdir(workspace.dir)).toEqual([]);
});
