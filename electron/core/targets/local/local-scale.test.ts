import { closeSync, linkSync, mkdirSync, openSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalTarget } from './local-target.js';
import { ctx, tempDir } from './test-helpers.js';

const FOLDERS = 100;
const FILES_PER_FOLDER = 1000;

describe('LocalTarget at scale', () => {
  let root: string;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    ({ dir: root, cleanup } = await tempDir('scale'));
    // Empty files, each folder's as hard links to its first: a link is a directory entry only,
    // where a new file is an inode too (on this machine 1 ms a file under load, so the tree took
    // the hook's whole minute). The lister reads directory entries, so both list alike.
    for (let folder = 0; folder < FOLDERS; folder += 1) {
      const dir = path.join(root, 'Big', `f${String(folder).padStart(3, '0')}`);
      mkdirSync(dir, { recursive: true });
      const first = path.join(dir, '0.dat');
      closeSync(openSync(first, 'w'));
      for (let file = 1; file < FILES_PER_FOLDER; file += 1) linkSync(first, path.join(dir, `${file}.dat`));
    }
  });

  afterAll(async () => {
    await cleanup();
  });

  it('lists 100,000 files flat, without a stat per file', async () => {
    const target = new LocalTarget({ root });
    let files = 0;
    let folders = 0;
    const ids = new Set<string>();
    const started = performance.now();
    for await (const node of target.list(ctx())) {
      if (node.kind === 'item') files += 1;
      else folders += 1;
      ids.add(node.id);
    }
    const seconds = (performance.now() - started) / 1000;
    console.info(`listed ${files} files in ${folders} folders in ${seconds.toFixed(2)} s`);
    expect(files).toBe(FOLDERS * FILES_PER_FOLDER);
    expect(folders).toBe(FOLDERS + 1);
    expect(ids.size).toBe(files + folders);
  });
});
