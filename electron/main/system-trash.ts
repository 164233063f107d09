// The desktop app's trash port: what a local delete removes goes to the system's trash
// (Finder's Bin, the Recycle Bin, the freedesktop trash) through Electron's shell, where the
// person can put it back with the system's own tools; Ferry cannot, so it offers no undo.
import type { Trash } from '../core/target.js';

/** The one part of Electron's `shell` this needs (so a test can hand in a fake). */
export interface ShellTrash {
  trashItem(path: string): Promise<void>;
}

export function systemTrash(shell: ShellTrash): Trash {
  return {
    async put(absolutePath) {
      await shell.trashItem(absolutePath);
      return { kind: 'system_trash' };
    },
  };
}
