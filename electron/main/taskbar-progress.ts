// The desktop app's queue progress on the taskbar (Windows), dock (macOS) or launcher
// (Unity): the renderer computes the value (shared/queue-progress.ts); this only checks it
// and hands it to the window. Anything that is not a finite number removes the bar.
import { NO_PROGRESS } from '../../shared/queue-progress.js';

/** The one part of BrowserWindow this needs (so a test can hand in a fake). */
export interface ProgressWindow {
  isDestroyed(): boolean;
  setProgressBar(progress: number): void;
}

export function taskbarProgress(window: () => ProgressWindow | null): (value: unknown) => void {
  return (value) => {
    const win = window();
    if (!win || win.isDestroyed()) return;
    win.setProgressBar(typeof value === 'number' && Number.isFinite(value) ? value : NO_PROGRESS);
  };
}
