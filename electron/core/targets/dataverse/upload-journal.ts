import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * What a direct upload has done so far, kept on disk so that a job resumed after Ferry was
 * stopped or killed sends only the parts storage does not have yet — the presigned URLs
 * Dataverse handed out, and the ETag of every part sent — and registers a whole upload that
 * Dataverse had not registered yet without sending it again (a single PUT is recorded only
 * once storage acknowledged it, as `completed`, with no URLs). One small JSON file per upload,
 * named by a digest of (installation, dataset, path, size, MD5) — never the token — written
 * whole and renamed into place after each part, so a kill leaves the last complete state.
 * The URLs are short-lived write grants for that one object; the files are readable by the
 * user only and removed once Dataverse has registered the file.
 */
export interface JournalRecord {
  storageIdentifier: string;
  partSize: number;
  urls: Record<string, string>;
  abort: string;
  complete: string;
  /** part number → ETag, for parts storage has acknowledged */
  done: Record<string, string>;
  /** set once `complete` succeeded: only the registration is left */
  completed: boolean;
}

export class UploadJournal {
  constructor(private readonly dir: string) {}

  static key(parts: { installation: string; datasetId: number; path: string; size: number; md5: string }): string {
    return createHash('sha256').update(JSON.stringify([parts.installation, parts.datasetId, parts.path, parts.size, parts.md5])).digest('hex');
  }

  async load(key: string): Promise<JournalRecord | null> {
    try {
      return JSON.parse(await readFile(this.file(key), 'utf8')) as JournalRecord;
    } catch {
      return null; // none, or unreadable: start the upload afresh
    }
  }

  async save(key: string, record: JournalRecord): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const temp = `${this.file(key)}.${randomBytes(4).toString('hex')}.tmp`;
    await writeFile(temp, JSON.stringify(record), { mode: 0o600 });
    await rename(temp, this.file(key));
  }

  /** The record, and any half-written copy a kill left beside it. */
  async remove(key: string): Promise<void> {
    const names = await readdir(this.dir).catch(() => [] as string[]);
    await Promise.all(names.filter((name) => name.startsWith(`${key}.`)).map((name) => rm(path.join(this.dir, name), { force: true })));
  }

  private file(key: string): string {
    return path.join(this.dir, `${key}.json`);
  }
}
