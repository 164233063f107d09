/**
 * Which folders of a write are finished while the write goes on (fast path `early-listings`):
 * every file the write started in the folder has ended, and the entries have moved on past it,
 * so a listing of it taken now shows each of those files as the write left it. A remote write
 * verifies its files against such a listing (WriteOutcome.stored); taken folder by folder while
 * later files are still under way, those listings share the write's pipeline instead of
 * waiting, all of them, for its last file.
 *
 * Invariants:
 * - a file is handed out (takeFinished) only after its write ended, in a batch made after that:
 *   the listing started for the batch cannot predate it;
 * - each file is handed out at most once; a file never handed out (its folder still had files
 *   under way when the write ended, or the entries came back to its folder) is the caller's to
 *   list at the end, as without this fast path;
 * - a folder the entries come back to after leaving it is scattered (a ZIP in no particular
 *   order): never handed out again, so an order that alternates between folders costs no
 *   listing a file.
 */
export class FinishedFolders<F> {
  /** each folder a file started in: its files under way, those ended written and not handed out, whether the entries left it, and came back */
  private readonly folders = new Map<string, { underWay: number; ended: F[]; left: boolean; scattered: boolean }>();
  private current: string | null = null;
  private readonly finished: { folder: string; files: F[] }[] = [];

  /** A file of the write, in entry order, is about to start in `folder`. */
  starting(folder: string): void {
    if (folder !== this.current) {
      if (this.current !== null) this.leave(this.current);
      this.current = folder;
    }
    let state = this.folders.get(folder);
    if (!state) this.folders.set(folder, (state = { underWay: 0, ended: [], left: false, scattered: false }));
    else if (state.left) state.scattered = true;
    state.left = false;
    state.underWay++;
  }

  /** The file started in `folder` has ended: `file` when it was written, null when it was not. */
  ended(folder: string, file: F | null): void {
    const state = this.folders.get(folder);
    if (!state) return;
    state.underWay--;
    if (file !== null) state.ended.push(file);
    this.settle(folder);
  }

  /** The folders finished since the last call, each with its written files (handed out once). */
  takeFinished(): { folder: string; files: F[] }[] {
    return this.finished.splice(0);
  }

  private leave(folder: string): void {
    this.folders.get(folder)!.left = true;
    this.settle(folder);
  }

  private settle(folder: string): void {
    const state = this.folders.get(folder)!;
    if (state.scattered || state.underWay > 0 || state.ended.length === 0 || !state.left) return;
    this.finished.push({ folder, files: state.ended.splice(0) });
  }
}
