// Which file-write worker thread makes a folder's new files (fast path 'folder-lanes').
//
// Making a file holds its folder's lock in the kernel for the whole inode allocation, and on
// ext4 without a journal that allocation scans past every inode deleted in the last minute
// (`recently_deleted` in fs/ext4/ialloc.c): after a folder of a thousand files was removed,
// each new file costs ~0.5–1 ms of kernel time. Two threads making files in one folder then
// take turns on that lock, spinning while they wait; two threads making files in two folders
// work at once. So a folder's files go to one thread while any of them is under way, and a
// folder with none under way to the least busy thread (docs/performance.md, "Folder lanes").

/** The worker each folder with new files under way is assigned, counted per file. */
export class FolderLanes<W> {
  private readonly lanes = new Map<string, { worker: W; underWay: number }>();

  /**
   * The worker for one more new file in `folder`: the folder's own while any of its files is
   * under way, else `leastBusy()`'s. Each call is matched by one `done(folder)`.
   */
  take(folder: string, leastBusy: () => W): W {
    const lane = this.lanes.get(folder);
    if (lane) {
      lane.underWay++;
      return lane.worker;
    }
    const worker = leastBusy();
    this.lanes.set(folder, { worker, underWay: 1 });
    return worker;
  }

  /** One file taken for `folder` is answered (written or failed). */
  done(folder: string): void {
    const lane = this.lanes.get(folder);
    if (lane && --lane.underWay === 0) this.lanes.delete(folder);
  }

  /** Folders with files under way (for tests). */
  get size(): number {
    return this.lanes.size;
  }
}
