// What a timed run made, moved aside instead of removed before the next run: on ext4 without
// a journal (this development machine's disk) making a file passes over every inode freed in
// the last minute (five more while its block is not written back), so a run right after a
// removal pays ~1 ms a file for it; a journaled disk, as people's are, does not
// (docs/performance.md, "The bench's copies set aside"). A rename frees no inode; the caller
// removes `root` at the end.
import { mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';

/** A function that moves a folder (or file) into `root`/set-aside, numbered; one that is not there is fine. */
export function setAsideIn(root: string): (folder: string) => Promise<void> {
  let count = 0;
  return async (folder) => {
    await mkdir(path.join(root, 'set-aside'), { recursive: true });
    await rename(folder, path.join(root, 'set-aside', String(count++))).catch(async (error: NodeJS.ErrnoException) => {
      // another file system: removed after all
      if (error.code === 'EXDEV') await rm(folder, { recursive: true, force: true });
      else if (error.code !== 'ENOENT') throw error;
    });
  };
}
