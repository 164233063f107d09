// Hashes of workspace files, remembered by what identifies a file's version on disk, so
// a second detail (or an `update` comparison) does not read the bytes again. A download
// also remembers the CRC-32 of the bytes it hashed: a later download reads the file again
// (for the ZIP) and takes the remembered digests only when that CRC-32 still matches.
// Those entries outlive the process (see remembered-digests-file.ts), held to the file's
// ctime as well: any change to the inode (bytes, times, mode, a rename) moves it.

export interface FileVersion {
  /** relative path ('/'-separated) */
  path: string;
  size: bigint;
  mtimeNs: bigint;
  /** the inode: an atomic replace (rename over) always changes it, even with the same size and mtime */
  ino: bigint;
  /** when known: an entry remembered with a ctime answers only for that ctime */
  ctimeNs?: bigint;
}

interface Remembered {
  hashes: Record<string, string>;
  /** of the bytes the hashes were computed from, when known */
  crc32?: number;
  ctimeNs?: bigint;
  /** restored from an earlier run: answers only a lookup that gives the ctime */
  restored?: boolean;
}

/** An entry as saved between runs (see remembered-digests-file.ts). */
export interface SavedDigests {
  path: string;
  size: bigint;
  mtimeNs: bigint;
  ino: bigint;
  ctimeNs: bigint;
  crc32: number;
  hashes: Record<string, string>;
}

export class HashCache {
  private readonly entries = new Map<string, Remembered>();
  private readonly inFlight = new Map<string, Promise<Record<string, string>>>();
  /** how many times a file's bytes were actually read to hash them (tests check cache hits) */
  computations = 0;

  constructor(private readonly capacity = 20_000) {}

  get size(): number {
    return this.entries.size;
  }

  get(version: FileVersion): Record<string, string> | undefined {
    return this.remembered(version)?.hashes;
  }

  /** The hashes with the CRC-32 of the bytes they were computed from, when a download left one. */
  getWithCrc32(version: FileVersion): { hashes: Record<string, string>; crc32: number } | undefined {
    const found = this.remembered(version);
    return found?.crc32 === undefined ? undefined : { hashes: found.hashes, crc32: found.crc32 };
  }

  set(version: FileVersion, hashes: Record<string, string>, crc32?: number): void {
    const key = keyOf(version);
    this.entries.delete(key);
    this.entries.set(key, { hashes, crc32, ctimeNs: version.ctimeNs });
    this.trim();
  }

  private trim(): void {
    while (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
  }

  /** The cached hashes, or `compute()`'s (one computation per version even when asked concurrently). */
  async getOrCompute(version: FileVersion, compute: () => Promise<Record<string, string>>): Promise<Record<string, string>> {
    const cached = this.get(version);
    if (cached) return cached;
    const key = keyOf(version);
    let pending = this.inFlight.get(key);
    if (!pending) {
      this.computations += 1;
      pending = compute().then(
        (hashes) => {
          this.set(version, hashes);
          return hashes;
        },
      ).finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, pending);
    }
    return pending;
  }

  /** The entries a download left (digests with their CRC-32 and ctime), least recently used first. */
  saved(): SavedDigests[] {
    const rows: SavedDigests[] = [];
    for (const [key, { hashes, crc32, ctimeNs }] of this.entries) {
      if (crc32 === undefined || ctimeNs === undefined) continue;
      const [path, size, mtimeNs, ino] = key.split('\0') as [string, string, string, string];
      rows.push({ path, size: BigInt(size), mtimeNs: BigInt(mtimeNs), ino: BigInt(ino), ctimeNs, crc32, hashes });
    }
    return rows;
  }

  /** Takes back what saved() gave in an earlier run (before anything newer is remembered). */
  restore(rows: readonly SavedDigests[]): void {
    for (const { hashes, crc32, ctimeNs, ...version } of rows) {
      const key = keyOf(version);
      if (!this.entries.has(key)) this.entries.set(key, { hashes, crc32, ctimeNs, restored: true });
    }
    this.trim();
  }

  private remembered(version: FileVersion): Remembered | undefined {
    const key = keyOf(version);
    const found = this.entries.get(key);
    if (found && found.ctimeNs !== undefined && (version.ctimeNs === undefined ? found.restored === true : version.ctimeNs !== found.ctimeNs)) {
      // the inode changed since (or the caller cannot tell): these digests may not be its bytes'
      if (version.ctimeNs !== undefined) this.entries.delete(key);
      return undefined;
    }
    if (found) {
      // Least recently used goes first: re-inserting moves the key to the end.
      this.entries.delete(key);
      this.entries.set(key, found);
    }
    return found;
  }

  clear(): void {
    this.entries.clear();
  }
}

function keyOf(version: FileVersion): string {
  return `${version.path}\0${version.size}\0${version.mtimeNs}\0${version.ino}`;
}
