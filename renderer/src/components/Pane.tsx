// One side of the browser (what it shows is chosen in Places): breadcrumbs, toolbar, filter, the grid, and the
// drop zone (files from the desktop → upload; items from the other pane → transfer).
import { useRef, useState, type DragEvent, type KeyboardEvent } from 'react';
import { useStore } from 'zustand';
import type { ResourceSummary } from '../../../shared/api.js';
import { LIBRARY_TARGET, otherSide } from '../actions.js';
import { useServices } from '../services.js';
import type { PaneSide } from '../stores/pane.js';
import { fromDataTransfer, fromFileList } from '../upload/collect.js';
import { ContextMenu, type MenuPosition } from './ContextMenu.js';
import { Icon } from './icons.js';
import { paneCommands, shortcutText, type PaneCommandId } from './pane-commands.js';
import { PathBar } from './PathBar.js';
import { SearchBar, SearchResults } from './Search.js';
import { INTERNAL_DRAG_TYPE, ResourceGrid, type InternalDragPayload } from './ResourceGrid.js';

export const gridElements: Partial<Record<PaneSide, HTMLDivElement | null>> = {};

export function focusPane(side: PaneSide): void {
  gridElements[side]?.focus();
}

function readInternal(event: DragEvent): InternalDragPayload | null {
  const raw = event.dataTransfer.getData(INTERNAL_DRAG_TYPE);
  if (!raw) return null;
  try {
    return JSON.parse(raw) as InternalDragPayload;
  } catch {
    return null;
  }
}

/** Left and right move between a toolbar's buttons (the ARIA toolbar pattern); Tab leaves it. */
function rovingArrows(event: KeyboardEvent<HTMLDivElement>): void {
  if (event.key !== 'ArrowLeft' && event.key !== 'ArrowRight') return;
  const buttons = Array.from(event.currentTarget.querySelectorAll<HTMLButtonElement>('button:not(:disabled)'));
  const index = buttons.indexOf(document.activeElement as HTMLButtonElement);
  if (index < 0) return;
  buttons[(index + (event.key === 'ArrowRight' ? 1 : buttons.length - 1)) % buttons.length]?.focus();
  event.preventDefault();
}

const hasFiles = (event: DragEvent) => Array.from(event.dataTransfer.types).includes('Files');
const hasInternal = (event: DragEvent) => Array.from(event.dataTransfer.types).includes(INTERNAL_DRAG_TYPE);

export function Pane({ side }: { side: PaneSide }) {
  const services = useServices();
  const { actions, ui, details, session } = services;
  const pane = services.panes[side];
  const target = useStore(pane, (s) => s.target);
  const trail = useStore(pane, (s) => s.trail);
  const status = useStore(pane, (s) => s.status);
  const error = useStore(pane, (s) => s.error);
  const errorCode = useStore(pane, (s) => s.errorCode);
  const filter = useStore(pane, (s) => s.filter);
  const selectionSize = useStore(pane, (s) => s.selection.size);
  const itemCount = useStore(pane, (s) => s.items.length);
  const sizing = useStore(pane, (s) => s.sizing);
  const sizingError = useStore(pane, (s) => s.sizingError);
  const targets = useStore(session.store, (s) => s.targets);
  const placeName = targets.find((t) => t.name === target)?.readable_name;
  const verifies = useStore(session.store, (s) => s.session?.targets.find((t) => t.name === target)?.can_verify === true);
  const hasCursor = useStore(pane, (s) => s.cursor !== null);
  const active = useStore(ui, (s) => s.active === side);
  const notice = useStore(ui, (s) => s.notices[side]);
  const [keepOffline, setKeepOffline] = useState(false);
  const [dropping, setDropping] = useState(false);
  const [editRequests, setEditRequests] = useState(0);
  const fileInput = useRef<HTMLInputElement>(null);
  const folderInput = useRef<HTMLInputElement>(null);
  const label = side === 'left' ? 'Left pane' : 'Right pane';
  const search = services.searches[side];
  const searchOpen = useStore(search.store, (s) => s.open);
  const [menu, setMenu] = useState<MenuPosition | null>(null);
  const other = services.panes[otherSide(side)];
  const otherTarget = useStore(other, (s) => s.target);
  const otherHasOne = useStore(other, (s) => (s.selection.size === 0 ? s.cursor !== null : s.selection.size === 1));
  const selectedFolders = useStore(pane, (s) => s.items.filter((item) => item.kind === 'container' && (s.selection.size ? s.selection.has(item.id) : s.cursor === item.id)).length);
  const selected = selectionSize || (hasCursor ? 1 : 0);

  const openItem = (item: ResourceSummary) => {
    if (item.kind === 'container') void pane.getState().open({ id: item.id, title: item.title });
    else ui.setState({ detailOpen: true });
  };

  function acceptDrag(event: DragEvent): void {
    if (hasFiles(event) || hasInternal(event)) {
      event.preventDefault();
      event.dataTransfer.dropEffect = 'copy';
      setDropping(true);
    }
  }

  function handleDrop(event: DragEvent, folder?: ResourceSummary): void {
    event.preventDefault();
    event.stopPropagation();
    setDropping(false);
    ui.setState({ active: side });
    const crumb = folder ? { id: folder.id, title: folder.title } : undefined;
    const internal = readInternal(event);
    if (internal) {
      if (internal.side === side) {
        if (!crumb) return; // dropped back where it came from
        void actions.transferSelection(internal.side as PaneSide, side, crumb, internal.ids);
        return;
      }
      void actions.transferSelection(internal.side as PaneSide, side, crumb, internal.ids);
      return;
    }
    if (hasFiles(event)) {
      const picked = fromDataTransfer(event.dataTransfer); // must start inside the handler
      void picked.then((p) => actions.uploadPicked(side, p, crumb));
    }
  }

  const targetInfo = targets.find((t) => t.name === target);
  const canUpload = targetInfo ? targetInfo.supported_actions.resource_upload : false;
  const canDownload = targetInfo ? targetInfo.supported_actions.resource_download : false;
  const commands = paneCommands({
    hasTarget: !!target,
    canUpload,
    canDownload,
    selected,
    selectedFolders,
    offers: {
      delete: session.offers(target, 'delete'),
      rename: session.offers(target, 'rename'),
      move: session.offers(target, 'move'),
      create_folder: session.offers(target, 'create_folder'),
    },
    searches: session.searches(target),
    verifies,
    atTop: trail.length === 0,
    sameTargetAcross: !!target && otherTarget === target,
    otherHasOne,
    otherSideName: side === 'left' ? 'right' : 'left',
  });

  function run(id: PaneCommandId): void {
    const across = otherSide(side);
    const jobs: Record<PaneCommandId, () => unknown> = {
      upload: () => fileInput.current?.click(),
      'upload-folder': () => folderInput.current?.click(),
      download: () => actions.download(side, keepOffline && target !== LIBRARY_TARGET),
      transfer: () => actions.transferSelection(side, across),
      'new-folder': () => actions.newFolder(side),
      rename: () => actions.renameCursor(side),
      move: () => actions.moveAcross(side, across),
      delete: () => actions.deleteSelection(side),
      compare: () => actions.compareSelected(side),
      size: () => actions.calculateSize(side),
      verify: () => actions.verify(side),
      search: () => (searchOpen ? search.close() : search.show()),
      refresh: () => actions.refresh(side),
    };
    void jobs[id]();
  }
  const emptyMessage = !target
    ? 'Choose a place on the left to browse it.'
    : status === 'loading'
      ? 'Loading…'
      : status === 'error'
        ? 'This location could not be listed.'
        : canUpload
          ? 'This folder is empty. Drop files or folders here, or use Upload.'
          : target === LIBRARY_TARGET && trail.length === 0
            ? 'No downloaded ZIPs yet. Download something with "Keep offline" checked and it appears here, to browse and verify without a network.'
          : 'This folder is empty.';

  return (
    <section
      className={`pane${active ? ' active' : ''}${dropping ? ' dropping' : ''}`}
      aria-label={label}
      onFocusCapture={() => ui.getState().active !== side && ui.setState({ active: side })}
      onPointerDownCapture={() => ui.getState().active !== side && ui.setState({ active: side })}
      onKeyDownCapture={() => ui.getState().active !== side && ui.setState({ active: side })}
      onKeyDown={(event) => {
        if ((event.ctrlKey || event.metaKey) && (event.key === 'l' || event.key === 'L')) {
          event.preventDefault();
          setEditRequests((n) => n + 1);
        }
      }}
      onDragOver={acceptDrag}
      onDragEnter={acceptDrag}
      onDragLeave={(event) => {
        if (!event.currentTarget.contains(event.relatedTarget as Node | null)) setDropping(false);
      }}
      onDrop={(event) => handleDrop(event)}
    >
      <div className="pane-head">
        <h2 className="pane-place" title={placeName}>
          {placeName ?? 'No place chosen'}
        </h2>
        <input
          type="search"
          className="filter"
          aria-label="Filter"
          placeholder="Filter (* and ? work)"
          value={filter}
          onChange={(event) => pane.getState().setFilter(event.target.value)}
        />
      </div>
      <PathBar side={side} editRequests={editRequests} done={() => focusPane(side)} />
      <div className="toolbar" role="toolbar" aria-label={`${label} actions`} onKeyDown={rovingArrows}>
        {commands.map((command) => (
          <button
            key={command.id}
            type="button"
            className="tool"
            aria-label={command.label}
            aria-keyshortcuts={command.shortcut}
            title={`${command.label}: ${command.explain}${command.shortcut ? ` (${shortcutText(command.shortcut)})` : ''}`}
            disabled={!command.enabled}
            aria-pressed={command.id === 'search' ? searchOpen : undefined}
            onClick={() => run(command.id)}
          >
            <Icon name={command.icon} />
          </button>
        ))}
        <span className="toolbar-gap" />
        {target === LIBRARY_TARGET || !canDownload ? null : (
          <label className="keep-offline" title="Also keep a copy in the offline library">
            <input type="checkbox" checked={keepOffline} onChange={(event) => setKeepOffline(event.target.checked)} />
            Keep offline
          </label>
        )}
        <input
          ref={fileInput}
          type="file"
          multiple
          hidden
          data-testid={`${side}-file-input`}
          onChange={(event) => {
            if (event.target.files?.length) void actions.uploadPicked(side, fromFileList(event.target.files));
            event.target.value = '';
          }}
        />
        <input
          ref={(element) => {
            folderInput.current = element;
            element?.setAttribute('webkitdirectory', '');
          }}
          type="file"
          multiple
          hidden
          data-testid={`${side}-folder-input`}
          onChange={(event) => {
            if (event.target.files?.length) void actions.uploadPicked(side, fromFileList(event.target.files));
            event.target.value = '';
          }}
        />
      </div>
      {searchOpen ? <SearchBar side={side} /> : null}
      {status === 'error' && error ? (
        <div className="message error" role="alert">
          <span>{error}</span>
          <button type="button" onClick={() => void actions.refresh(side)}>
            Try again
          </button>
          {errorCode === 'unauthorized' || errorCode === 'forbidden' ? (
            <button type="button" onClick={() => ui.setState({ accountsOpen: true, accountsTarget: target })}>
              Open Accounts
            </button>
          ) : null}
        </div>
      ) : null}
      {notice ? (
        <div className={`message ${notice.kind}`} role={notice.kind === 'error' ? 'alert' : 'status'}>
          <span>{notice.text}</span>
          {notice.progress ? (
            notice.progress.total ? (
              <progress aria-label="Download progress" max={notice.progress.total} value={notice.progress.done} />
            ) : (
              // no value: the browser draws an indeterminate bar; the text says the size is unknown
              <progress aria-label="Download progress, total size not known yet" />
            )
          ) : null}
          {notice.cancel ? (
            <button type="button" onClick={notice.cancel}>
              Cancel
            </button>
          ) : null}
          {notice.undo ? (
            <button type="button" onClick={notice.undo}>
              Undo
            </button>
          ) : null}
          {notice.retry ? (
            <button type="button" onClick={notice.retry}>
              Retry
            </button>
          ) : null}
          <button type="button" aria-label="Dismiss" onClick={() => ui.setState((s) => ({ notices: { ...s.notices, [side]: null } }))}>
            ×
          </button>
        </div>
      ) : null}
      {sizingError ? (
        <div className="message error" role="alert">
          <span>{sizingError}</span>
          <button type="button" onClick={() => void actions.refresh(side)}>
            Try again
          </button>
        </div>
      ) : null}
      {searchOpen ? <SearchResults side={side} /> : (
      <ResourceGrid
        pane={pane}
        details={details}
        emptyMessage={emptyMessage}
        gridRef={(element) => {
          gridElements[side] = element;
        }}
        commands={{
          openItem,
          up: () => void pane.getState().up(),
          back: () => void pane.getState().goBack(),
          forward: () => void pane.getState().goForward(),
          switchPane: () => {
            ui.setState({ active: otherSide(side) });
            focusPane(otherSide(side));
          },
          copyAcross: () => void actions.transferSelection(side, otherSide(side)),
          toggleDetail: () => ui.setState((s) => ({ detailOpen: !s.detailOpen })),
          dropOnFolder: (folder, event) => handleDrop(event, folder),
          command: run,
          contextMenu: setMenu,
        }}
      />
      )}
      {menu ? (
        <ContextMenu label={`${label} items`} at={menu} commands={commands.filter((c) => c.onRows)} run={run} close={() => setMenu(null)} />
      ) : null}
      <div className="pane-foot" aria-live="polite">
        {status === 'ready' ? `${itemCount} item${itemCount === 1 ? '' : 's'}${selectionSize ? `, ${selectionSize} selected` : ''}` : ''}
        {sizing ? ` · Reading the size and date of all ${itemCount} items to sort them; the rows stay in name order until then…` : ''}
      </div>
    </section>
  );
}
