import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { act, cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { summary } from '../test-support.js';
import { createDetailCache } from '../stores/details.js';
import { createPaneStore } from '../stores/pane.js';
import { ResourceGrid, type GridCommands } from './ResourceGrid.js';

// jsdom has no layout: give the scroll area a real viewport so the virtualizer does its job
beforeAll(() => {
  Object.defineProperty(HTMLElement.prototype, 'clientHeight', { configurable: true, get: () => 560 });
  Object.defineProperty(HTMLElement.prototype, 'clientWidth', { configurable: true, get: () => 800 });
});
afterEach(cleanup);

const many = Array.from({ length: 100_000 }, (_, i) => summary(`id${i}`, `file-${String(i).padStart(6, '0')}.dat`));

async function setup(items = many) {
  const detailCalls: string[] = [];
  const pane = createPaneStore('left', { children: async () => items });
  const details = createDetailCache({
    detail: async (_t: string, id: string) => {
      detailCalls.push(id);
      return new Promise<never>(() => undefined); // stays loading
    },
  });
  await pane.getState().setTarget('local');
  const commands: GridCommands = {
    openItem: vi.fn(),
    up: vi.fn(),
    back: vi.fn(),
    forward: vi.fn(),
    switchPane: vi.fn(),
    copyAcross: vi.fn(),
    toggleDetail: vi.fn(),
    dropOnFolder: vi.fn(),
    command: vi.fn(),
    contextMenu: vi.fn(),
  };
  render(<ResourceGrid pane={pane} details={details} commands={commands} emptyMessage="Empty." />);
  return { pane, commands, detailCalls };
}

describe('ResourceGrid', () => {
  it('renders only the visible rows of 100,000, and asks details only for them', async () => {
    const started = performance.now();
    const { detailCalls } = await setup();
    const grid = screen.getByRole('grid', { name: 'Resources' });
    const rows = within(grid).getAllByRole('row');
    // header + 560px / 28px = 20 visible + overscan 8
    expect(rows.length).toBeGreaterThan(10);
    expect(rows.length).toBeLessThan(50);
    expect(grid.getAttribute('aria-rowcount')).toBe('100001');
    expect(within(grid).getByRole('row', { name: /file-000000\.dat/ })).toBeTruthy();
    expect(within(grid).queryByRole('row', { name: /file-099999\.dat/ })).toBeNull();
    expect(detailCalls.length).toBeLessThanOrEqual(4); // bounded concurrency
    expect(performance.now() - started).toBeLessThan(5000);
  });

  it('moves with the keyboard and opens with Enter; Backspace, Tab, F5 and F3 reach their commands', async () => {
    const { pane, commands } = await setup(many.slice(0, 50));
    const grid = screen.getByRole('grid', { name: 'Resources' });
    act(() => pane.getState().select('id0', 'replace', []));
    fireEvent.keyDown(grid, { key: 'ArrowDown' });
    fireEvent.keyDown(grid, { key: 'ArrowDown', shiftKey: true });
    expect(pane.getState().cursor).toBe('id2');
    expect([...pane.getState().selection]).toEqual(['id1', 'id2']);
    expect(grid.getAttribute('aria-activedescendant')).toBe('row-left-id2');
    fireEvent.keyDown(grid, { key: 'End' });
    expect(pane.getState().cursor).toBe('id49');
    fireEvent.keyDown(grid, { key: 'Enter' });
    expect(commands.openItem).toHaveBeenCalledWith(expect.objectContaining({ id: 'id49' }));
    fireEvent.keyDown(grid, { key: 'Backspace' });
    fireEvent.keyDown(grid, { key: 'Tab' });
    fireEvent.keyDown(grid, { key: 'F5' });
    fireEvent.keyDown(grid, { key: 'F3' });
    expect(commands.up).toHaveBeenCalledTimes(1);
    expect(commands.switchPane).toHaveBeenCalledTimes(1);
    expect(commands.copyAcross).toHaveBeenCalledTimes(1);
    expect(commands.toggleDetail).toHaveBeenCalledTimes(1);
    fireEvent.keyDown(grid, { key: 'a', ctrlKey: true });
    expect(pane.getState().selection.size).toBe(50);
  });

  it('sorts when a column header is clicked and filters through the store', async () => {
    const { pane } = await setup(many.slice(0, 30));
    fireEvent.click(screen.getByRole('button', { name: /Name/ }));
    expect(pane.getState().sort.dir).toBe('desc');
    const grid = screen.getByRole('grid', { name: 'Resources' });
    expect(within(grid).getAllByRole('row')[1]!.textContent).toContain('file-000029.dat');
    act(() => pane.getState().setFilter('-00001?.dat'));
    expect(within(grid).getAllByRole('row')).toHaveLength(11);
  });
});
