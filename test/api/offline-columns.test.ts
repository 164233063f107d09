import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../electron/core/limits.js';
import type { ResourceNode, TargetContext } from '../../electron/core/target.js';
import { rawZip } from '../../electron/core/zip/testing/raw-zip.js';
import { jsonArrayStream } from '../../electron/server/stream-json.js';
import { summaryWriter, toSummary } from '../../electron/server/routes/resources.js';
import { NodeColumns } from '../../electron/core/node-columns.js';
import { OfflineTarget } from '../../electron/core/targets/offline/offline-target.js';

// The columnar listing (rows written from the index's bytes) against the listing of nodes:
// the same rows, and the same bytes as JSON.stringify of every row.

const ctx = (): TargetContext => ({ token: 'checked-by-the-http-layer', signal: new AbortController().signal });
const BASE = 'http://127.0.0.1:8765';

// plain ASCII names among names that need escapes or UTF-8, paths of every length mod 3
// (ids are cut from one base64 text of 3-byte-padded paths), an explicit folder record, folders
// only implied, and names made odd that are cleaned up ('a//b', './')
const NAMES = [
  'top/a.txt',
  'top/ab.txt',
  'top/abc.txt',
  'top/say "hi".txt',
  'top/naïve café.csv',
  'top/日本語/ファイル.txt',
  'top/emoji 😀/x',
  'top/two "quoted" words.txt',
  'top/back`tick and spaces  .txt',
  'top/sub/',
  'top/sub/deeper/deepest/leaf.bin',
  'top/sub//doubled.txt',
  'top/./dotted.txt',
  'other/"quoted folder"/inside.txt',
  'other/plain/one',
  'other/plain/two',
  'root-file.txt',
  ...Array.from({ length: 300 }, (_, i) => `many/d${i % 7}/${'x'.repeat(i % 5)}f${i}.txt`),
];

let dir: string;
let offline: OfflineTarget;

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-columns-'));
  const libraryDir = path.join(dir, 'library');
  await mkdir(libraryDir, { recursive: true });
  await writeFile(path.join(libraryDir, 'mixed.zip'), rawZip(NAMES.map((name) => ({ name }))));
  await writeFile(path.join(libraryDir, 'second.zip'), rawZip([{ name: 'b/c.txt' }, { name: 'ä.txt' }]));
  // a bag whose payload is one folder: listed from inside it (paths relative to data/Survey)
  await writeFile(
    path.join(libraryDir, 'bag.zip'),
    rawZip([
      { name: 'Survey_bag/bagit.txt', data: Buffer.from('BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n') },
      { name: 'Survey_bag/manifest-md5.txt', data: Buffer.from('') },
      { name: 'Survey_bag/data/Survey/answers.csv' },
      { name: 'Survey_bag/data/Survey/raw/scan "1".bin' },
      { name: 'Survey_bag/data/Survey/raw/ünï.txt' },
      { name: 'Survey_bag/data/Survey/notes/readme.md' },
    ]),
  );
  offline = new OfflineTarget({ libraryDirs: [libraryDir], stateDir: path.join(dir, 'state'), limits: DEFAULT_LIMITS });
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of iterable) items.push(item);
  return items;
}

describe('columnar offline listing', () => {
  it('gives the same rows as the listing of nodes, in the same order', async () => {
    const columnar = await collect(offline.listColumns(ctx(), undefined));
    expect(columnar.some((batch) => batch instanceof NodeColumns)).toBe(true);
    const asNodes = columnar.flatMap((batch) => (batch instanceof NodeColumns ? Array.from({ length: batch.count }, (_, r) => batch.node(r)) : [...batch]));
    // a second target: its first listing of each index is columnar too, so listBatches is read from a fresh one
    const other = new OfflineTarget({ libraryDirs: [path.join(dir, 'library')], stateDir: path.join(dir, 'state2'), limits: DEFAULT_LIMITS });
    const nodes: ResourceNode[] = (await collect(other.listBatches(ctx(), undefined))).flat();
    expect(asNodes).toEqual(nodes);
    expect(nodes.length).toBeGreaterThan(NAMES.length);
    expect(nodes.map((node) => node.title)).toContain('say "hi".txt');
    expect(nodes.map((node) => node.title)).toContain('two "quoted" words.txt');
    expect(nodes.map((node) => node.title)).toEqual(expect.arrayContaining(['answers.csv', 'scan "1".bin', 'ünï.txt', 'readme.md']));
    expect(nodes.map((node) => node.title)).not.toContain('Survey');
  });

  it('writes exactly JSON.stringify of every row, in small batches and large', async () => {
    const other = new OfflineTarget({ libraryDirs: [path.join(dir, 'library')], stateDir: path.join(dir, 'state2'), limits: DEFAULT_LIMITS });
    const nodes: ResourceNode[] = (await collect(other.listBatches(ctx(), undefined))).flat();
    const expected = Buffer.from(JSON.stringify(nodes.map((node) => toSummary(node, BASE, 'offline'))), 'utf8');
    const body = async (target: OfflineTarget) => {
      const chunks: Buffer[] = [];
      for await (const chunk of await jsonArrayStream(target.listColumns(ctx(), undefined), summaryWriter(BASE, 'offline', true), 'k')) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks);
    };
    const first = await body(offline);
    expect(first.toString('utf8')).toBe(expected.toString('utf8'));
    expect(first.equals(expected)).toBe(true);
    // the second listing of the same index goes as nodes (kept for the next), the third from kept JSON
    expect((await body(offline)).equals(expected)).toBe(true);
    expect((await body(offline)).equals(expected)).toBe(true);
  });
});
