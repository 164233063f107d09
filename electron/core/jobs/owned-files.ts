import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';

/**
 * Removes what a killed Ferry left in a folder of job-owned files (the upload spool): a body
 * cut off mid-receipt, or a ZIP spooled whole whose job was never submitted. Anything a
 * known job owns stays (a resumed upload reads it). Run at start, before requests arrive.
 * Returns how many files were removed.
 */
export async function removeUnownedFiles(dir: string, owned: Set<string>): Promise<number> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    const file = path.resolve(dir, name);
    if (owned.has(file)) continue;
    await rm(file, { recursive: true, force: true });
    removed += 1;
  }
  return removed;
}
