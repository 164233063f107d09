import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { link, mkdir, readdir, rename, rm, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { DownloadLibrary, KeptCopy } from '../../download-library.js';
import { processIsAlive } from '../../process-alive.js';

// The folders of ZIPs the `offline` target serves. Scanned at every listing, so an archive
// dropped in or removed while Ferry runs shows up or disappears without a restart.

export interface LibraryArchive {
  /** opaque id: a digest of the archive's absolute path (no machine path leaks) */
  id: string;
  file: string;
  name: string;
}

const ARCHIVE_PREFIX = 'zip_';

export function archiveIdFor(file: string): string {
  return ARCHIVE_PREFIX + createHash('sha256').update(path.resolve(file)).digest('hex').slice(0, 24);
}

export function isArchiveId(id: string): boolean {
  return /^zip_[0-9a-f]{24}$/.test(id);
}

export class Library implements DownloadLibrary {
  constructor(readonly dirs: string[]) {}

  /** The folder downloads are kept in. */
  get primary(): string {
    return this.dirs[0] as string;
  }

  async archives(): Promise<LibraryArchive[]> {
    const found: LibraryArchive[] = [];
    const seen = new Set<string>();
    for (const dir of this.dirs) {
      let names: string[];
      try {
        names = await readdir(dir);
      } catch {
        continue;
      }
      for (const name of names.sort((a, b) => a.localeCompare(b))) {
        if (name.startsWith('.') || !/\.zip$/i.test(name)) continue;
        const file = path.join(dir, name);
        if (seen.has(file)) continue;
        seen.add(file);
        try {
          if (!(await stat(file)).isFile()) continue;
        } catch {
          continue;
        }
        found.push({ id: archiveIdFor(file), file, name });
      }
    }
    return found;
  }

  /**
   * Removes hidden partial copies whose writing process is gone (killed mid-download); those
   * of a live process (this one, or another Ferry on the same library) stay. Returns how
   * many were removed. Run at start.
   */
  async sweep(): Promise<number> {
    let names: string[];
    try {
      names = await readdir(this.primary);
    } catch {
      return 0;
    }
    let removed = 0;
    for (const name of names) {
      const match = PARTIAL.exec(name);
      if (!match) continue;
      const pid = Number(match[1]);
      if (pid === process.pid || processIsAlive(pid)) continue;
      await rm(path.join(this.primary, name), { force: true });
      removed += 1;
    }
    return removed;
  }

  async find(id: string): Promise<LibraryArchive | null> {
    return (await this.archives()).find((archive) => archive.id === id) ?? null;
  }

  /** See DownloadLibrary.keep. */
  async keep(baseName: string): Promise<KeptCopy> {
    await mkdir(this.primary, { recursive: true });
    const safeBase = baseName.replace(/[/\\\0]/g, '_').replace(/^\.+/, '') || 'download';
    const temporary = path.join(this.primary, `.${safeBase}.${process.pid}.${Date.now()}.partial`);
    const stream = new PassThrough();
    // flush: the bytes are on disk before the rename makes the archive appear
    const written = pipeline(stream, createWriteStream(temporary, { flags: 'wx', flush: true }));
    written.catch(() => undefined);
    const primary = this.primary;
    return {
      stream,
      async commit() {
        await written;
        for (let n = 1; ; n++) {
          const candidate = path.join(primary, n === 1 ? `${safeBase}.zip` : `${safeBase} (${n}).zip`);
          if (await placeWithoutReplacing(temporary, candidate)) return path.basename(candidate);
        }
      },
      async abort(error?: Error) {
        stream.destroy(error);
        await written.catch(() => undefined);
        await rm(temporary, { force: true });
      },
    };
  }
}

/** `.<base>.<pid>.<ms>.partial`, as keep() names its temporary files */
const PARTIAL = /^\..+\.(\d+)\.\d+\.partial$/;

/**
 * Gives `temporary` the name `candidate` unless that name is taken, atomically: a hard link
 * fails when the name exists, where a rename would silently replace an archive kept a moment
 * earlier. Disks without hard links (FAT, some network shares) fall back to check-then-rename.
 */
async function placeWithoutReplacing(temporary: string, candidate: string): Promise<boolean> {
  try {
    await link(temporary, candidate);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS') throw error;
    try {
      await stat(candidate);
      return false;
    } catch {
      await rename(temporary, candidate);
      return true;
    }
  }
  await unlink(temporary);
  return true;
}
