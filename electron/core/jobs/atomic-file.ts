import { randomBytes } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import path from 'node:path';

/** Temp files this module leaves behind only when the process dies mid-write. */
export const TEMP_SUFFIX = '.tmp';

/**
 * Writes `content` to `filePath` so a reader sees the old file or the new one, never a
 * half-written one: temp file in the same directory (same filesystem, so rename is
 * atomic), fsync, rename over, then fsync the directory so the rename itself survives a
 * power cut.
 */
export async function writeFileAtomic(filePath: string, content: string, mode = 0o600): Promise<void> {
  const dir = path.dirname(filePath);
  const temp = path.join(dir, `.${path.basename(filePath)}.${randomBytes(6).toString('hex')}${TEMP_SUFFIX}`);
  const handle = await open(temp, 'wx', mode);
  try {
    await handle.writeFile(content, 'utf8');
    await handle.sync();
  } catch (error) {
    await handle.close().catch(() => undefined);
    await rm(temp, { force: true });
    throw error;
  }
  await handle.close();
  try {
    await rename(temp, filePath);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  await syncDirectory(dir);
}

/** fsync of a folder, so the names just put in it survive a power cut; best effort where a folder cannot be opened (Windows). */
export async function syncDirectory(dir: string): Promise<void> {
  // Not every platform lets a directory be opened for fsync (Windows); the rename is
  // still atomic there, only its durability across a power cut is weaker.
  try {
    const handle = await open(dir, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    /* best effort */
  }
}
