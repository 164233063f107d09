// The crash test's world: seeded randomness, file contents made from the seed, hash
// snapshots of a folder, ZIPs built with the system `zip`, and what "visible" means.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
export { seededRandom } from '../../support/seeded-random.js';


export const pick = <T>(random: () => number, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
export const between = (random: () => number, low: number, high: number): number => low + Math.floor(random() * (high - low + 1));

/** `size` bytes from the random stream (xorshift32 seeded from it): incompressible, reproducible. */
export function bytesFrom(random: () => number, size: number): Buffer {
  const buffer = Buffer.allocUnsafe(size + 3);
  let x = (Math.floor(random() * 0xffffffff) | 1) >>> 0;
  for (let offset = 0; offset < size; offset += 4) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    buffer.writeUInt32LE(x >>> 0, offset);
  }
  return buffer.subarray(0, size);
}

export const sha256 = (bytes: Buffer | string): string => createHash('sha256').update(bytes).digest('hex');

/** relative '/'-joined path → sha256 of every regular file below `root` (hidden ones too). */
export type Snapshot = Map<string, string>;

export async function snapshot(root: string): Promise<Snapshot> {
  const result: Snapshot = new Map();
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const full = path.join(entry.parentPath, entry.name);
    result.set(path.relative(root, full).split(path.sep).join('/'), sha256(await readFile(full)));
  }
  return result;
}

/**
 * What a person sees in a file manager: names not starting with a dot, below folders not
 * starting with a dot. Anything else (Ferry's `.ferry-*.part`, the library's `.*.partial`)
 * is hidden and must also never be listed by the API.
 */
export const isVisiblePath = (relative: string): boolean => relative.split('/').every((segment) => !segment.startsWith('.'));

export const visibleOnly = (all: Snapshot): Snapshot => new Map([...all].filter(([file]) => isVisiblePath(file)));
export const hiddenOnly = (all: Snapshot): string[] => [...all.keys()].filter((file) => !isVisiblePath(file));

/** Every visible folder below `root` (relative paths), for comparing with the API's listing. */
export async function visibleTree(root: string): Promise<{ files: Set<string>; folders: Set<string> }> {
  const files = new Set<string>();
  const folders = new Set<string>();
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    const relative = path.relative(root, path.join(entry.parentPath, entry.name)).split(path.sep).join('/');
    if (!isVisiblePath(relative)) continue;
    if (entry.isFile()) files.add(relative);
    else if (entry.isDirectory()) folders.add(relative);
  }
  return { files, folders };
}

/** Writes `files` (relative path → bytes) under `dir`, then zips dir's contents (stored: fast, and sizes stay honest). */
export async function buildZip(stageDir: string, zipPath: string, files: Map<string, Buffer>): Promise<void> {
  await rm(stageDir, { recursive: true, force: true });
  await rm(zipPath, { force: true });
  for (const [relative, bytes] of files) {
    const full = path.join(stageDir, relative);
    await mkdir(path.dirname(full), { recursive: true });
    await writeFile(full, bytes);
  }
  const zipped = spawnSync('zip', ['-q', '-0', '-r', zipPath, '.'], { cwd: stageDir });
  if (zipped.status !== 0) throw new Error(`zip failed: ${zipped.stderr.toString()}`);
  await rm(stageDir, { recursive: true, force: true });
}

/** `unzip -tq`: every entry's CRC checks out, the central directory is whole. */
export function zipIsWhole(file: string): boolean {
  return spawnSync('unzip', ['-tq', file]).status === 0;
}

/** The `sha256  data/...` lines of a kept bag's manifest (payload path → hash). */
export function bagManifest(file: string): Map<string, string> | null {
  const listed = spawnSync('unzip', ['-Z1', file]);
  if (listed.status !== 0) return null;
  const name = listed.stdout.toString().split('\n').find((line) => /(^|\/)manifest-sha256\.txt$/.test(line));
  if (!name) return null;
  const text = spawnSync('unzip', ['-p', file, name]).stdout.toString();
  const manifest = new Map<string, string>();
  for (const line of text.split('\n')) {
    const match = /^([0-9a-f]{64})\s+(.+)$/.exec(line.trim());
    if (match) manifest.set(match[2]!, match[1]!);
  }
  return manifest;
}
