// The desktop app's trash port: what a local delete removes goes to the system's trash
// (Finder's Bin, the Recycle Bin, the freedesktop trash) through Electron's shell, where the
// person can put it back with the system's own tools; Ferry cannot, so it offers no undo.
import path from 'node:path';
import { FerryError } from '../core/errors.js';
import type { Trash } from '../core/target.js';

/** The one part of Electron's `shell` this needs (so a test can hand in a fake). */
export interface ShellTrash {
  trashItem(path: string): Promise<void>;
}

export function systemTrash(shell: ShellTrash): Trash {
  return {
    async put(absolutePath, origin) {
      try {
        await shell.trashItem(absolutePath);
      } catch {
        // Electron's reason names the absolute path; the answer names the workspace path only
        throw new FerryError(
          500,
          'internal_error',
          `The system's trash did not take '${origin.path || path.basename(absolutePath)}', so nothing was deleted. Check that the disk has a trash (removable and network disks often have none), or delete it outside Ferry.`,
        );
      }
      return { kind: 'system_trash' };
    },
  };
}
