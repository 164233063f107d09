// The `read-ahead` fast path's window (docs/performance.md): which small files of a local read
// are read whole before the consumer takes them.

/** Files up to this size are read whole, ahead of the consumer (see folderEntries). */
export const READ_AHEAD_FILE_BYTES = 256 * 1024;
/** At most this many entries, and bytes of small files, are held ahead of the consumer. */
export const READ_AHEAD_FILES = 16;
export const READ_AHEAD_BYTES = 4 * 1024 * 1024;

/**
 * When the small files of one read are read ahead: a file's bytes once the consumer has taken
 * (opened, or read whole) a file at most READ_AHEAD_FILES files before it, within
 * READ_AHEAD_BYTES of small files from there; the first files at once. So what is held ahead
 * follows what the consumer takes, not how far it iterates: a write's planner iterates every
 * entry of the read before the first is written (plan/write-plan.ts), and the bytes of every
 * small file would otherwise wait in memory for their turn.
 */
export class ReadAhead {
  /** files not yet passed by the furthest taken, by index: their size and how to start their read (null: started, or large) */
  private readonly waiting = new Map<number, { bytes: number; start: (() => void) | null }>();
  private count = 0;
  private furthest = -1;

  /** Registers the next file of the read (its index is returned) and starts its read if it is near enough. */
  add(bytes: number, start: () => void, small: boolean): number {
    const index = this.count++;
    this.waiting.set(index, { bytes, start: small ? start : null });
    this.fill();
    return index;
  }

  /** The file at `index` was taken: the files after it may be read. */
  taken(index: number): void {
    if (index <= this.furthest) return;
    this.furthest = index;
    for (const key of this.waiting.keys()) {
      if (key > index) break;
      this.waiting.delete(key);
    }
    this.fill();
  }

  private fill(): void {
    let bytes = 0;
    for (const [key, file] of this.waiting) {
      bytes += file.bytes;
      if (key > this.furthest + READ_AHEAD_FILES || bytes > READ_AHEAD_BYTES) return;
      file.start?.();
      file.start = null;
    }
  }
}
