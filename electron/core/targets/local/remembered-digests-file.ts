// The digests downloads remembered (see hash-cache.ts), kept in the data folder between
// runs: a download after a restart takes them too, each still held to its file's ctime
// and checked by the CRC-32 of the bytes read. It is a cache: a missing, damaged or
// foreign file means starting with nothing remembered, never an error.

import { readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { TEMP_SUFFIX, writeFileAtomic } from '../../jobs/atomic-file.js';
import type { SavedDigests } from './hash-cache.js';

const FORMAT = 1;

/** One entry on disk: path, size, mtime ns, inode, ctime ns (decimal text), CRC-32, digests. */
type Row = [string, string, string, string, string, number, Record<string, string>];

interface DigestsFile {
  format: number;
  /** the workspace folder the paths are relative to: another one's entries are not taken */
  workspace: string;
  entries: Row[];
}

/** What an earlier run saved for this workspace; [] when there is nothing usable. Also removes a write a crash left half done. */
export function readRememberedDigests(file: string, workspace: string): SavedDigests[] {
  removeLeftovers(file);
  let parsed: Partial<DigestsFile>;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<DigestsFile>;
  } catch {
    return [];
  }
  if (parsed?.format !== FORMAT || parsed.workspace !== workspace || !Array.isArray(parsed.entries)) return [];
  const rows: SavedDigests[] = [];
  for (const row of parsed.entries) {
    const saved = savedOf(row);
    if (saved) rows.push(saved);
  }
  return rows;
}

export async function writeRememberedDigests(file: string, workspace: string, rows: readonly SavedDigests[]): Promise<void> {
  const content: DigestsFile = {
    format: FORMAT,
    workspace,
    entries: rows.map((row) => [row.path, String(row.size), String(row.mtimeNs), String(row.ino), String(row.ctimeNs), row.crc32, row.hashes]),
  };
  await writeFileAtomic(file, JSON.stringify(content));
}

const DECIMAL = /^\d{1,30}$/;
const HEX = /^[0-9a-f]{8,128}$/;

function savedOf(row: unknown): SavedDigests | null {
  if (!Array.isArray(row) || row.length !== 7) return null;
  const [filePath, size, mtimeNs, ino, ctimeNs, crc32, hashes] = row as unknown[];
  if (typeof filePath !== 'string' || filePath === '') return null;
  if (![size, mtimeNs, ino, ctimeNs].every((value) => typeof value === 'string' && DECIMAL.test(value))) return null;
  if (typeof crc32 !== 'number' || !Number.isInteger(crc32) || crc32 < 0 || crc32 > 0xffffffff) return null;
  if (typeof hashes !== 'object' || hashes === null || Array.isArray(hashes)) return null;
  const digests = Object.entries(hashes as Record<string, unknown>);
  if (digests.length === 0 || !digests.every(([, hex]) => typeof hex === 'string' && HEX.test(hex))) return null;
  return {
    path: filePath,
    size: BigInt(size as string),
    mtimeNs: BigInt(mtimeNs as string),
    ino: BigInt(ino as string),
    ctimeNs: BigInt(ctimeNs as string),
    crc32,
    hashes: Object.fromEntries(digests) as Record<string, string>,
  };
}

/** writeFileAtomic's temporaries of this file (`.<name>.<random>.tmp`), left by a crash mid-write. */
function removeLeftovers(file: string): void {
  const dir = path.dirname(file);
  const prefix = `.${path.basename(file)}.`;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (name.startsWith(prefix) && name.endsWith(TEMP_SUFFIX)) rmSync(path.join(dir, name), { force: true });
  }
}
