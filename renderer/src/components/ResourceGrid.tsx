// The resource list: an ARIA grid, virtualised so 100,000 rows stay smooth (only the rows
// in view, plus a few, are in the DOM). Size and date come from the listing when it carries
// them (a sort by size or date asks for that), else from details fetched lazily for the rows
// on screen — for display only, never for the order. Arriving at a location shows the top
// of the list with the cursor on its first row. Keyboard: arrows/Home/End/PageUp/PageDown move, Shift extends,
// Enter opens, Backspace or Alt+Up goes up, Alt+Left/Right go back and forward, typed letters
// jump to a name (type-ahead), Tab jumps to the other pane, F5 copies across, F3/Space
// shows details, Ctrl/Cmd+A selects all; F2, Delete, F6, F7 and Ctrl+F run the pane's commands
// (pane-commands.ts), and Shift+F10 or the Menu key opens the context menu at the cursor.
import { useEffect, useLayoutEffect, useMemo, useRef, type DragEvent, type KeyboardEvent, type MouseEvent } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';
import { useStore } from 'zustand';
import type { ResourceSummary } from '../../../shared/api.js';
import type { DetailCache } from '../stores/details.js';
import { arrangeRows, instantOf, needsSizes, sizeOf, type SortKey } from '../stores/arrange.js';
import type { PaneStore } from '../stores/pane.js';
import { formatBytes, formatDate } from '../format.js';
import { createTypeAhead } from './type-ahead.js';
import type { MenuPosition } from './ContextMenu.js';
import { commandForKey, type PaneCommandId } from './pane-commands.js';

export const ROW_HEIGHT = 28;
export const INTERNAL_DRAG_TYPE = 'application/x-ferry-resources';

export interface InternalDragPayload {
  side: string;
  target: string;
  ids: string[];
}

export interface GridCommands {
  openItem(item: ResourceSummary): void;
  up(): void;
  back(): void;
  forward(): void;
  switchPane(): void;
  copyAcross(): void;
  toggleDetail(): void;
  /** a drop on a folder row */
  dropOnFolder(folder: ResourceSummary, event: DragEvent): void;
  /** one of the pane's commands, by its key */
  command(id: PaneCommandId): void;
  /** opens the rows' context menu there */
  contextMenu(at: MenuPosition): void;
}

const COLUMNS: { key: SortKey; label: string }[] = [
  { key: 'title', label: 'Name' },
  { key: 'kind', label: 'Kind' },
  { key: 'size', label: 'Size' },
  { key: 'modified', label: 'Modified' },
];

export function rowDomId(side: string, id: string): string {
  return `row-${side}-${id.replace(/[^A-Za-z0-9_-]/g, '_')}`;
}

export function ResourceGrid(props: {
  pane: PaneStore;
  details: DetailCache;
  commands: GridCommands;
  gridRef?: (element: HTMLDivElement | null) => void;
  emptyMessage: string;
}) {
  const { pane, details, commands } = props;
  const side = useStore(pane, (s) => s.side);
  const target = useStore(pane, (s) => s.target);
  const items = useStore(pane, (s) => s.items);
  const sort = useStore(pane, (s) => s.sort);
  const filter = useStore(pane, (s) => s.filter);
  const selection = useStore(pane, (s) => s.selection);
  const cursor = useStore(pane, (s) => s.cursor);
  const sized = useStore(pane, (s) => s.sized);
  const status = useStore(pane, (s) => s.status);
  const visit = useStore(pane, (s) => s.visit);
  useStore(details.store, (s) => s.version); // re-render as details arrive (display only)

  // until every row's size or date is known, the rows keep their name order (see PaneState.sized)
  const shownSort = needsSizes(sort) && !sized ? ({ key: 'title', dir: 'asc' } as const) : sort;
  const rows = useMemo(() => arrangeRows(items, filter, shownSort), [items, filter, shownSort.key, shownSort.dir]); // eslint-disable-line react-hooks/exhaustive-deps
  const ordered = useMemo(() => rows.map((row) => row.id), [rows]);

  const scrollRef = useRef<HTMLDivElement | null>(null);
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 8,
    getItemKey: (index) => rows[index]?.id ?? index,
  });
  const virtualRows = virtualizer.getVirtualItems();

  // ask for the details of the rows on screen; let go of the ones that scrolled away
  const visibleKey = virtualRows.map((v) => rows[v.index]?.id).join('\u0001');
  useEffect(() => {
    if (!target) return;
    const ids = virtualRows.map((v) => rows[v.index]?.id).filter((id): id is string => !!id);
    for (const id of ids) details.want(target, id);
    return () => {
      for (const id of ids) details.release(target, id);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [target, visibleKey]);

  const cursorIndex = cursor ? ordered.indexOf(cursor) : -1;

  // Arriving at a location: the top of the list, the cursor on its first row (unless the
  // pane already chose one, e.g. the folder just left when going up). Before paint, so the
  // old scroll position is never shown over the new rows.
  const landed = useRef(-1);
  useLayoutEffect(() => {
    if (status !== 'ready' || landed.current === visit) return;
    landed.current = visit;
    const state = pane.getState();
    if (state.cursor === null) {
      virtualizer.scrollToOffset(0);
      if (scrollRef.current) scrollRef.current.scrollTop = 0;
      if (rows[0]) state.setCursor(rows[0].id);
    }
  }, [status, visit, rows, pane, virtualizer]);

  // A new order (a re-sort, or the sizes for one arriving): a chosen selection stays in view;
  // without one, the list shows its new top with the cursor there, as on arrival.
  const shownOrder = `${shownSort.key}:${shownSort.dir}`;
  const lastOrder = useRef(shownOrder);
  useLayoutEffect(() => {
    if (lastOrder.current === shownOrder) return;
    lastOrder.current = shownOrder;
    const state = pane.getState();
    if (state.selection.size > 0 && cursorIndex >= 0) {
      virtualizer.scrollToIndex(cursorIndex, { align: 'auto' });
    } else {
      virtualizer.scrollToOffset(0);
      if (rows[0]) state.setCursor(rows[0].id);
    }
  }, [shownOrder, cursorIndex, rows, pane, virtualizer]);

  // the cursor moved (keys, clicks): keep it in view. Never when rows merely change
  // underneath: that would yank the list while someone scrolls it.
  useEffect(() => {
    if (cursorIndex >= 0) virtualizer.scrollToIndex(cursorIndex, { align: 'auto' });
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [cursor, virtualizer]);

  function moveTo(index: number, extend: boolean): void {
    const clamped = Math.max(0, Math.min(rows.length - 1, index));
    const row = rows[clamped];
    if (!row) return;
    const state = pane.getState();
    state.select(row.id, extend ? 'range' : 'replace', ordered);
  }

  const typeAhead = useMemo(() => createTypeAhead(), []);

  /** moves to the row the typed letters name; false when the key is not a letter to type */
  function typeAheadKey(key: string): boolean {
    if (key.length !== 1 || rows.length === 0) return false;
    const index = typeAhead.next(key, rows.map((row) => row.title), cursorIndex);
    if (index >= 0) moveTo(index, false);
    return true;
  }

  function onKeyDown(event: KeyboardEvent<HTMLDivElement>): void {
    const state = pane.getState();
    const command = commandForKey(event);
    if (command || event.key === 'ContextMenu' || (event.shiftKey && event.key === 'F10')) {
      if (command) commands.command(command);
      else {
        const box = (activeRow && document.getElementById(rowDomId(side, activeRow.id))) || event.currentTarget;
        const rect = box.getBoundingClientRect();
        commands.contextMenu({ x: rect.left + 24, y: rect.bottom });
      }
      event.preventDefault();
      event.stopPropagation();
      return;
    }
    if (event.altKey && !event.ctrlKey && !event.metaKey) {
      const go = { ArrowLeft: commands.back, ArrowRight: commands.forward, ArrowUp: commands.up }[event.key];
      if (!go) return;
      go();
      event.preventDefault();
      event.stopPropagation();
      return;
    }
    const page = Math.max(1, Math.floor((scrollRef.current?.clientHeight ?? 400) / ROW_HEIGHT) - 1);
    const current = cursorIndex;
    const mod = event.ctrlKey || event.metaKey;
    switch (event.key) {
      case 'ArrowDown':
        moveTo(current + 1, event.shiftKey);
        break;
      case 'ArrowUp':
        moveTo(current <= 0 ? 0 : current - 1, event.shiftKey);
        break;
      case 'PageDown':
        moveTo(current + page, event.shiftKey);
        break;
      case 'PageUp':
        moveTo(current - page, event.shiftKey);
        break;
      case 'Home':
        moveTo(0, event.shiftKey);
        break;
      case 'End':
        moveTo(rows.length - 1, event.shiftKey);
        break;
      case 'Enter': {
        const row = rows[current];
        if (row) commands.openItem(row);
        break;
      }
      case 'Backspace':
        commands.up();
        break;
      case 'Tab':
        if (event.shiftKey) return; // Shift+Tab leaves the grid the usual way
        commands.switchPane();
        break;
      case 'F5':
        commands.copyAcross();
        break;
      case 'F3':
      case ' ':
        commands.toggleDetail();
        break;
      case 'Escape':
        if (state.selection.size > 0) state.clearSelection();
        else if (state.filter) state.setFilter('');
        else return;
        break;
      case 'a':
      case 'A':
        if (mod) state.selectAll(ordered);
        else if (!typeAheadKey(event.key)) return;
        break;
      default:
        // a printable character (a space is not one here: Space shows details)
        if (mod || !typeAheadKey(event.key)) return;
        break;
    }
    event.preventDefault();
    event.stopPropagation();
  }

  function onRowClick(event: MouseEvent, row: ResourceSummary): void {
    const mode = event.shiftKey ? 'range' : event.ctrlKey || event.metaKey ? 'toggle' : 'replace';
    pane.getState().select(row.id, mode, ordered);
  }

  function onRowDragStart(event: DragEvent, row: ResourceSummary): void {
    const state = pane.getState();
    if (!target) return;
    let ids = [...state.selection];
    if (!state.selection.has(row.id)) {
      state.select(row.id, 'replace', ordered);
      ids = [row.id];
    }
    const payload: InternalDragPayload = { side, target, ids };
    event.dataTransfer.setData(INTERNAL_DRAG_TYPE, JSON.stringify(payload));
    event.dataTransfer.setData('text/plain', rows.filter((r) => ids.includes(r.id)).map((r) => r.title).join('\n'));
    event.dataTransfer.effectAllowed = 'copy';
  }

  const activeRow = cursorIndex >= 0 ? rows[cursorIndex] : undefined;

  return (
    <div
      className="grid"
      role="grid"
      aria-label="Resources"
      aria-rowcount={rows.length + 1}
      aria-colcount={COLUMNS.length}
      aria-multiselectable="true"
      aria-activedescendant={activeRow ? rowDomId(side, activeRow.id) : undefined}
      tabIndex={0}
      ref={props.gridRef}
      onKeyDown={onKeyDown}
    >
      <div role="rowgroup" className="grid-head">
        <div role="row" aria-rowindex={1} className="grid-row grid-header-row">
          {COLUMNS.map((column) => (
            <div
              key={column.key}
              role="columnheader"
              className={`cell cell-${column.key}`}
              aria-sort={sort.key === column.key ? (sort.dir === 'asc' ? 'ascending' : 'descending') : 'none'}
            >
              <button
                type="button"
                tabIndex={-1}
                className="sort-button"
                onClick={() => pane.getState().setSort(column.key)}
              >
                {column.label}
                {sort.key === column.key ? <span aria-hidden="true">{sort.dir === 'asc' ? ' ▲' : ' ▼'}</span> : null}
              </button>
            </div>
          ))}
        </div>
      </div>
      <div role="rowgroup" className="grid-body" ref={scrollRef}>
        {rows.length === 0 ? (
          <div className="empty-state" role="row">
            <div role="gridcell">{filter && items.length > 0 ? `Nothing here matches “${filter}”.` : props.emptyMessage}</div>
          </div>
        ) : (
          <div style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
            {virtualRows.map((virtual) => {
              const row = rows[virtual.index]!;
              const detailEntry = target ? details.get(target, row.id) : undefined;
              const detail = detailEntry?.state === 'ready' ? detailEntry.detail : undefined;
              const size = row.size !== undefined ? row.size : sizeOf(detail);
              const modified = row.date_modified !== undefined ? row.date_modified : (detail?.date_modified ?? null);
              const selected = selection.has(row.id);
              const isFolder = row.kind === 'container';
              return (
                <div
                  key={virtual.key as string}
                  id={rowDomId(side, row.id)}
                  role="row"
                  aria-rowindex={virtual.index + 2}
                  aria-selected={selected}
                  data-id={row.id}
                  data-kind={row.kind}
                  className={`grid-row${selected ? ' selected' : ''}${row.id === cursor ? ' cursor' : ''}`}
                  style={{ transform: `translateY(${virtual.start}px)`, height: ROW_HEIGHT }}
                  draggable
                  onDragStart={(event) => onRowDragStart(event, row)}
                  onDragOver={
                    isFolder
                      ? (event) => {
                          event.preventDefault();
                          event.currentTarget.classList.add('drop-into');
                        }
                      : undefined
                  }
                  onDragLeave={isFolder ? (event) => event.currentTarget.classList.remove('drop-into') : undefined}
                  onDrop={
                    isFolder
                      ? (event) => {
                          event.currentTarget.classList.remove('drop-into');
                          commands.dropOnFolder(row, event);
                        }
                      : undefined
                  }
                  onClick={(event) => onRowClick(event, row)}
                  onContextMenu={(event) => {
                    event.preventDefault();
                    // a right-click outside the selection acts on that row alone, as in a file manager
                    if (!pane.getState().selection.has(row.id)) pane.getState().select(row.id, 'replace', ordered);
                    commands.contextMenu({ x: event.clientX, y: event.clientY });
                  }}
                  onDoubleClick={() => commands.openItem(row)}
                >
                  <div role="gridcell" className="cell cell-title">
                    <span className={`icon ${isFolder ? 'icon-folder' : 'icon-file'}`} aria-hidden="true" />
                    <span className="title-text">{row.title}</span>
                  </div>
                  <div role="gridcell" className="cell cell-kind">
                    {row.kind_name}
                  </div>
                  <div role="gridcell" className="cell cell-size">
                    {isFolder ? '' : formatBytes(size)}
                  </div>
                  <div role="gridcell" className="cell cell-modified" title={instantOf(modified) === null ? undefined : formatDate(modified)}>
                    {instantOf(modified) === null ? '—' : formatDate(modified)}
                  </div>
                </div>
              );
            })}
          </div>
        )}
      </div>
    </div>
  );
}
