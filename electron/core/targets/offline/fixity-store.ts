import { createHash, randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';

// What Ferry learnt about an archive's files: hashes computed on request, and the outcome
// of the last verification. Kept per archive path in the data directory, so a plain ZIP
// verified once has its hashes on record and later corruption is caught.

export type FixityState = 'verified' | 'failed' | 'unverified';

export interface FixityFailureRecord {
  algorithm: string;
  /** what the bytes should hash to, and where that value came from */
  expected: string;
  actual: string;
  against: 'manifest' | 'provenance' | 'recorded' | 'zip';
}

export interface FileFixity {
  /** hex digests of the file's bytes as last read (after a failed check: the changed bytes) */
  hashes: Record<string, string>;
  /** a plain ZIP's hashes as first verified, which later verifications compare against */
  baseline?: Record<string, string>;
  state: FixityState;
  failures: FixityFailureRecord[];
  checked_at: string | null;
}

export interface ArchiveFixity {
  files: Record<string, FileFixity>;
  verified_at: string | null;
}

export class FixityStore {
  private readonly cache = new Map<string, ArchiveFixity>();

  constructor(private readonly dir: string) {}

  private fileFor(archivePath: string): string {
    return path.join(this.dir, `${createHash('sha256').update(archivePath).digest('hex').slice(0, 32)}.json`);
  }

  async load(archivePath: string): Promise<ArchiveFixity> {
    const cached = this.cache.get(archivePath);
    if (cached) return cached;
    let record: ArchiveFixity = { files: {}, verified_at: null };
    try {
      record = JSON.parse(await readFile(this.fileFor(archivePath), 'utf8')) as ArchiveFixity;
    } catch {
      // nothing recorded yet
    }
    this.cache.set(archivePath, record);
    return record;
  }

  async save(archivePath: string, record: ArchiveFixity): Promise<void> {
    this.cache.set(archivePath, record);
    await mkdir(this.dir, { recursive: true });
    const file = this.fileFor(archivePath);
    // unique per save: two verify jobs on one archive may save at once
    const temporary = `${file}.${process.pid}.${randomUUID()}.tmp`;
    await writeFile(temporary, JSON.stringify(record));
    await rename(temporary, file);
  }
}
