import { createWriteStream, existsSync } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import yazl from 'yazl';

// The Library of Congress BagIt conformance suite (read-only, beside the repository):
// where it is, which bags it holds and how it classifies each, and a bag folder zipped
// the way a person would upload it.

export const SUITE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../shared/reference/bagit-conformance-suite');

/** Why the suite's tests cannot run here, or null when they can. */
export function suiteMissing(): string | null {
  return existsSync(path.join(SUITE, 'README.md')) ? null : `the LoC BagIt conformance suite is not at ${SUITE}`;
}

/**
 * How the suite classifies a bag (its README and test-harness): valid/ must pass, invalid/
 * must fail, warning/ must not pass silently (fail, or pass with a warning). linux-only/
 * and windows-only/ hold invalid bags whose paths only those systems would follow; Ferry
 * reads paths by the same rules on every system, so both count as invalid everywhere.
 */
export type SuiteClass = 'valid' | 'invalid' | 'warning';

export interface SuiteBag {
  /** "v0.97/valid/holey-bag" */
  name: string;
  dir: string;
  expected: SuiteClass;
}

const CATEGORIES: Record<string, SuiteClass> = { valid: 'valid', invalid: 'invalid', warning: 'warning', 'linux-only': 'invalid', 'windows-only': 'invalid' };

export async function suiteBags(): Promise<SuiteBag[]> {
  const bags: SuiteBag[] = [];
  for (const version of (await readdir(SUITE)).filter((name) => /^v[0-9]/.test(name)).sort()) {
    for (const category of (await readdir(path.join(SUITE, version))).sort()) {
      const expected = CATEGORIES[category];
      if (!expected) throw new Error(`The suite has a category Ferry's test does not know: ${version}/${category}`);
      for (const bag of (await readdir(path.join(SUITE, version, category))).sort()) {
        const dir = path.join(SUITE, version, category, bag);
        if ((await stat(dir)).isDirectory()) bags.push({ name: `${version}/${category}/${bag}`, dir, expected });
      }
    }
  }
  return bags;
}

/** Every file under `dir`, '/'-separated and relative to it. */
export async function filesOf(dir: string, prefix = ''): Promise<string[]> {
  const out: string[] = [];
  for (const name of (await readdir(dir)).sort()) {
    const full = path.join(dir, name);
    if ((await stat(full)).isDirectory()) out.push(...(await filesOf(full, `${prefix}${name}/`)));
    else out.push(`${prefix}${name}`);
  }
  return out;
}

/**
 * The bag folder zipped from its parent (RFC 8493, Bag Serialization: the ZIP holds the base directory),
 * with yazl, which marks non-ASCII names as UTF-8.
 */
export async function zipBag(dir: string, zipPath: string): Promise<void> {
  const zip = new yazl.ZipFile();
  const base = path.basename(dir);
  for (const file of await filesOf(dir)) zip.addBuffer(await readFile(path.join(dir, file)), `${base}/${file}`);
  zip.end();
  await pipeline(zip.outputStream, createWriteStream(zipPath));
}
