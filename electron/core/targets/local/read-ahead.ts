// The `read-ahead` fast path's window (docs/performance.md): which small files of a local read
// are read whole before the consumer takes them.

/** Files up to this size are read whole, ahead of the consumer (see folderEntries). */
export const READ_AHEAD_FILE_BYTES = 256 * 1024;
/** At most this many entries, and bytes of small files, are held ahead of the consumer. */
export const READ_AHEAD_FILES = 64;
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
  // Files by index - base: their size, and how to start their read (null: started, large, or
  // passed by the furthest taken). Arrays, not a map: fill runs twice a file and looks at the
  // next READ_AHEAD_FILES, which a map's iterator paid for with an entry array each.
  private sizes: number[] = [];
  private starts: ((() => void) | null)[] = [];
  /** the index of sizes[0] and starts[0], never past furthest + 1: files passed long ago are dropped from the front */
  private base = 0;
  private furthest = -1;

  /** Registers the next file of the read (its index is returned) and starts its read if it is near enough. */
  add(bytes: number, start: () => void, small: boolean): number {
    const index = this.base + this.sizes.length;
    this.sizes.push(bytes);
    this.starts.push(small ? start : null);
    this.fill();
    return index;
  }

  /** The file at `index` was taken: the files after it may be read. */
  taken(index: number): void {
    if (index <= this.furthest) return;
    // files passed without being taken are never read ahead
    for (let i = this.furthest + 1; i <= index; i++) this.starts[i - this.base] = null;
    this.furthest = index;
    const passed = this.furthest + 1 - this.base;
    if (passed >= 1024 && passed * 2 >= this.sizes.length) {
      this.sizes = this.sizes.slice(passed);
      this.starts = this.starts.slice(passed);
      this.base += passed;
    }
    this.fill();
  }

  private fill(): void {
    let bytes = 0;
    const last = Math.min(this.base + this.sizes.length - 1, this.furthest + READ_AHEAD_FILES);
    for (let i = this.furthest + 1; i <= last; i++) {
      bytes += this.sizes[i - this.base]!;
      if (bytes > READ_AHEAD_BYTES) return;
      const start = this.starts[i - this.base];
      if (start) {
        this.starts[i - this.base] = null;
        start();
      }
    }
  }
}
