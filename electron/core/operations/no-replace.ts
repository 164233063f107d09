// Renaming on this machine without ever replacing what is at the destination. rename(2)
// silently replaces a file (and an empty folder), so a file is linked to its new name (link
// fails if the name is taken) and then unlinked from the old one, and a folder's new name is
// first claimed with mkdir (which fails if taken) and then renamed over that empty claim.
// Where a disk cannot do either (no hard links: FAT, some network mounts; Windows folders),
// the name is checked just before the rename: a race there is the only gap, and it is said.
import { link, lstat, mkdir, rename, rmdir, unlink } from 'node:fs/promises';

/** The destination is taken (by something other than the source itself). */
export class DestinationTaken extends Error {
  constructor() {
    super('The destination name is taken.');
    this.name = 'DestinationTaken';
  }
}

const NO_LINKS = ['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EMLINK', 'EXDEV'];

function codeOf(error: unknown): string {
  return (error as NodeJS.ErrnoException | null)?.code ?? '';
}

export async function renameNoReplace(from: string, to: string): Promise<void> {
  const source = await lstat(from);
  const existing = await lstatOrNull(to);
  if (existing) {
    // a case-only rename on a case-insensitive disk: `to` is `from` itself
    if (existing.ino === source.ino && existing.dev === source.dev) return rename(from, to);
    throw new DestinationTaken();
  }
  if (source.isDirectory()) {
    if (process.platform === 'win32') return checkedRename(from, to); // Windows never renames over a folder
    try {
      await mkdir(to);
    } catch (error) {
      if (codeOf(error) === 'EEXIST') throw new DestinationTaken();
      throw error;
    }
    try {
      await rename(from, to);
    } catch (error) {
      await rmdir(to).catch(() => undefined);
      throw error;
    }
    return;
  }
  try {
    await link(from, to);
  } catch (error) {
    if (codeOf(error) === 'EEXIST') throw new DestinationTaken();
    if (NO_LINKS.includes(codeOf(error))) return checkedRename(from, to);
    throw error;
  }
  try {
    await unlink(from);
  } catch (error) {
    await unlink(to).catch(() => undefined); // back to one name, the old one
    throw error;
  }
}

async function checkedRename(from: string, to: string): Promise<void> {
  if (await lstatOrNull(to)) throw new DestinationTaken();
  await rename(from, to);
}

async function lstatOrNull(target: string) {
  try {
    return await lstat(target);
  } catch (error) {
    if (codeOf(error) === 'ENOENT') return null;
    throw error;
  }
}
