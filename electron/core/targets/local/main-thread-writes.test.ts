// FERRY_WRITE_WORKERS=0: no file-write worker threads; small files read whole are written on
// the calling thread, with the same results (jobs/file-write-workers.ts, writer.ts).
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { buffer } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Entry } from '../../target.js';
import { fileWriteWorkers } from '../../jobs/file-write-workers.js';
import { withReadWhole } from '../../jobs/whole-entry.js';
import { LocalTarget } from './local-target.js';
import { ctx, entriesOf, tempDir, writeOptions } from './test-helpers.js';

// read once, at the pool's first use: set before anything in this file writes
process.env.FERRY_WRITE_WORKERS = '0';

const mtime = new Date('2024-05-06T07:08:09Z');
const tree = { 'Run/': null, 'Run/a.txt': 'alpha', 'Run/sub/b.txt': 'bravo' };

async function* readWholly(entries: AsyncIterable<Entry>): AsyncGenerator<Entry> {
  for await (const entry of entries) {
    if (entry.kind !== 'file') {
      yield entry;
      continue;
    }
    const bytes = await buffer(await entry.open());
    yield withReadWhole(entry, async (algorithms) => ({ bytes, hashes: Object.fromEntries(algorithms.map((a) => [a, createHash(a).update(bytes).digest('hex')])) }));
  }
}

describe('local writes without file-write worker threads', () => {
  let workspace: { dir: string; cleanup(): Promise<void> };
  beforeAll(async () => (workspace = await tempDir('main-thread-writes')));
  afterAll(async () => {
    delete process.env.FERRY_WRITE_WORKERS;
    await workspace.cleanup();
  });

  it('writes small files read whole on the calling thread, times and all', async () => {
    expect(fileWriteWorkers().available).toBe(false);
    const outcome = await new LocalTarget({ root: workspace.dir }).write(ctx(), null, readWholly(entriesOf(tree, mtime)), writeOptions('ignore'));
    expect(outcome).toMatchObject({ created: ['Run', 'Run/a.txt', 'Run/sub', 'Run/sub/b.txt'], fileErrors: [] });
    expect(await readFile(path.join(workspace.dir, 'Run', 'a.txt'), 'utf8')).toBe('alpha');
    expect(await readFile(path.join(workspace.dir, 'Run', 'sub', 'b.txt'), 'utf8')).toBe('bravo');
    expect((await stat(path.join(workspace.dir, 'Run', 'sub', 'b.txt'))).mtime).toEqual(mtime);
  });
});
