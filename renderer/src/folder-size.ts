// "Calculate size" of a folder: its listing with `fields=size` (docs/api.md "Listing sizes and
// dates"), level by level down the whole tree, a few folders at a time. A file whose size the
// target does not know is counted apart, so the total never claims more certainty than it has.
import type { ResourceSummary } from '../../shared/api.js';

export interface FolderSize {
  bytes: number;
  files: number;
  folders: number;
  /** files whose size the target did not report: the total leaves them out */
  unknown: number;
}

export type ListLevel = (containerId: string, signal: AbortSignal) => Promise<ResourceSummary[]>;

/** Folders listed at once: the listing itself looks at eight rows at a time on the server. */
const PARALLEL_FOLDERS = 4;

export async function folderSize(
  list: ListLevel,
  folderId: string,
  signal: AbortSignal,
  progress: (sofar: FolderSize) => void = () => undefined,
): Promise<FolderSize> {
  const total: FolderSize = { bytes: 0, files: 0, folders: 0, unknown: 0 };
  const pending = [folderId];
  let running = 0;
  let failure: unknown = null;
  await new Promise<void>((resolve) => {
    const pump = () => {
      if (failure !== null || (pending.length === 0 && running === 0)) return resolve();
      while (running < PARALLEL_FOLDERS && pending.length > 0) {
        const id = pending.shift()!;
        running++;
        list(id, signal)
          .then((rows) => {
            for (const row of rows) {
              if (row.kind === 'container') {
                total.folders++;
                pending.push(row.id);
              } else if (typeof row.size === 'number') {
                total.files++;
                total.bytes += row.size;
              } else {
                total.files++;
                total.unknown++;
              }
            }
            progress({ ...total });
          })
          .catch((error: unknown) => {
            failure ??= error;
          })
          .finally(() => {
            running--;
            pump();
          });
      }
    };
    pump();
  });
  if (failure !== null) throw failure;
  return total;
}
