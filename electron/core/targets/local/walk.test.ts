import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { tempDir } from './test-helpers.js';
import { walkFolders, walkTree } from './walk.js';

// walkFolders (what reads use) must give exactly walkTree's nodes in walkTree's order.

let root: string;
let cleanup: () => Promise<void>;

beforeAll(async () => {
  ({ dir: root, cleanup } = await tempDir('walk'));
  const files = ['a.txt', 'b/c.txt', 'b/d/e.txt', 'b/d/f/g.txt', 'b/h.txt', 'i/j.txt', 'k.txt', 'l/m/n/o.txt', 'z.txt', 'b/.ferry-1-0123456789abcdef.part'];
  for (const file of files) {
    await mkdir(path.dirname(path.join(root, file)), { recursive: true });
    await writeFile(path.join(root, file), file);
  }
  await mkdir(path.join(root, 'empty', 'deeper'), { recursive: true });
  await mkdir(path.join(root, 'x-empty'), { recursive: true });
});

afterAll(async () => {
  await cleanup();
});

it('gives walkTree\'s nodes, in its order, a folder\'s run of children at a time', async () => {
  const tree: string[] = [];
  for await (const node of walkTree(root, '')) tree.push(`${node.relativePath}|${node.parentPath}|${node.isFolder}|${node.absolutePath}`);
  const folders: string[] = [];
  for await (const { parentPath, nodes } of walkFolders(root, '')) {
    for (const node of nodes) {
      expect(node.parentPath).toBe(parentPath);
      folders.push(`${node.relativePath}|${node.parentPath}|${node.isFolder}|${node.absolutePath}`);
    }
  }
  expect(folders).toEqual(tree);
  expect(tree.map((line) => line.split('|')[0])).toEqual([
    'a.txt', 'b', 'b/c.txt', 'b/d', 'b/d/e.txt', 'b/d/f', 'b/d/f/g.txt', 'b/h.txt', 'empty', 'empty/deeper', 'i', 'i/j.txt', 'k.txt',
    'l', 'l/m', 'l/m/n', 'l/m/n/o.txt', 'x-empty', 'z.txt',
  ]);
  expect(tree[0]!.split('|')[3]).toBe(path.join(root, 'a.txt'));
});
