import { describe, expect, it } from 'vitest';
import { INDETERMINATE, NO_PROGRESS } from '../../shared/queue-progress.js';
import { taskbarProgress, type ProgressWindow } from './taskbar-progress.js';

function fakeWindow(destroyed = false) {
  const shown: number[] = [];
  const win: ProgressWindow = { isDestroyed: () => destroyed, setProgressBar: (value) => void shown.push(value) };
  return { win, shown };
}

describe('taskbarProgress', () => {
  it("hands the renderer's value to the window's progress bar", () => {
    const { win, shown } = fakeWindow();
    const set = taskbarProgress(() => win);
    set(0.25);
    set(INDETERMINATE);
    set(NO_PROGRESS);
    expect(shown).toEqual([0.25, INDETERMINATE, NO_PROGRESS]);
  });

  it('removes the bar for anything that is not a finite number', () => {
    const { win, shown } = fakeWindow();
    const set = taskbarProgress(() => win);
    for (const value of ['0.5', Number.NaN, Infinity, null, { progress: 1 }]) set(value);
    expect(shown).toEqual(Array(5).fill(NO_PROGRESS));
  });

  it('does nothing without a window, or once it is gone', () => {
    const { win, shown } = fakeWindow(true);
    taskbarProgress(() => win)(0.5);
    taskbarProgress(() => null)(0.5);
    expect(shown).toEqual([]);
  });
});
