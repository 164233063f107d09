// The window's size and the panes' last locations, in a small JSON file in userData.
// Written atomically (temp + rename); a broken file is ignored, never fatal.
import { readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { UiState } from '../../shared/ipc.js';

export interface SavedWindowState {
  bounds?: { x?: number; y?: number; width: number; height: number };
  maximized?: boolean;
  ui?: UiState;
}

export function windowStateFile(userData: string): string {
  return path.join(userData, 'window-state.json');
}

export async function readWindowState(file: string): Promise<SavedWindowState> {
  try {
    const parsed = JSON.parse(await readFile(file, 'utf8')) as SavedWindowState;
    return typeof parsed === 'object' && parsed !== null ? sanitize(parsed) : {};
  } catch {
    return {};
  }
}

function sanitize(state: SavedWindowState): SavedWindowState {
  const out: SavedWindowState = {};
  const b = state.bounds;
  if (b && Number.isFinite(b.width) && Number.isFinite(b.height) && b.width >= 400 && b.height >= 300) {
    out.bounds = {
      width: Math.round(b.width),
      height: Math.round(b.height),
      ...(Number.isFinite(b.x) && Number.isFinite(b.y) ? { x: Math.round(b.x!), y: Math.round(b.y!) } : {}),
    };
  }
  if (typeof state.maximized === 'boolean') out.maximized = state.maximized;
  if (state.ui && typeof state.ui === 'object' && state.ui.panes) out.ui = state.ui;
  return out;
}

/** Serialises writes so a burst of changes never interleaves two temp files. */
export function createWindowStateWriter(file: string) {
  let chain: Promise<void> = Promise.resolve();
  let current: SavedWindowState = {};
  return {
    set(initial: SavedWindowState) {
      current = initial;
    },
    get: () => current,
    update(patch: Partial<SavedWindowState>): Promise<void> {
      current = { ...current, ...patch };
      const snapshot = JSON.stringify(current, null, 2);
      chain = chain.then(async () => {
        const temporary = `${file}.${process.pid}.tmp`;
        try {
          await writeFile(temporary, snapshot, { mode: 0o600 });
          await rename(temporary, file);
        } catch {
          /* losing the window size is not worth an error dialog */
        }
      });
      return chain;
    },
  };
}
