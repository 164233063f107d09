// What a pane can do, in one list: the toolbar draws it as icon buttons, the context menu as
// menu items, and the grid's keys call the same entries, so a command's name, shortcut and
// whether it is offered are decided once. A command the place cannot do is not offered at
// all where the place never could (no delete on Zenodo), and disabled where it just cannot
// right now (nothing selected).
import type { IconName } from './icons.js';

export type PaneCommandId =
  | 'upload'
  | 'upload-folder'
  | 'download'
  | 'transfer'
  | 'new-folder'
  | 'rename'
  | 'move'
  | 'delete'
  | 'compare'
  | 'size'
  | 'verify'
  | 'search'
  | 'refresh';

export interface PaneCommand {
  id: PaneCommandId;
  label: string;
  icon: IconName;
  /** what the tooltip adds after the label */
  explain: string;
  /** as aria-keyshortcuts writes it ("F2", "Shift+F10"), shown in the tooltip and the menu */
  shortcut?: string;
  /** false: shown, but cannot run now */
  enabled: boolean;
  /** the context menu offers it for rows (not only the toolbar) */
  onRows: boolean;
}

export interface PaneFacts {
  hasTarget: boolean;
  canUpload: boolean;
  canDownload: boolean;
  selected: number;
  /** folders among the selected rows */
  selectedFolders: number;
  offers: { delete: boolean; rename: boolean; move: boolean; create_folder: boolean };
  searches: boolean;
  verifies: boolean;
  /** the pane shows the place's top level (Verify checks whole archives, found there) */
  atTop: boolean;
  /** the other pane shows the same place (a move is possible) */
  sameTargetAcross: boolean;
  /** the other pane has exactly one row selected (Compare needs one each side) */
  otherHasOne: boolean;
  otherSideName: string;
}

/** The pane's commands in toolbar order, those the place offers at all. */
export function paneCommands(f: PaneFacts): PaneCommand[] {
  const none = f.selected === 0;
  const all: (PaneCommand & { offered: boolean })[] = [
    { id: 'upload', label: 'Upload', icon: 'upload', explain: 'files from this computer', offered: f.canUpload, enabled: f.hasTarget, onRows: false },
    { id: 'upload-folder', label: 'Pick folder', icon: 'upload-folder', explain: 'upload a whole folder', offered: f.canUpload, enabled: f.hasTarget, onRows: false },
    { id: 'download', label: 'Download', icon: 'download', explain: 'the selection as one ZIP', offered: f.hasTarget, enabled: f.canDownload && !none, onRows: true },
    { id: 'transfer', label: 'Transfer', icon: 'transfer', explain: `copy the selection to the ${f.otherSideName} pane`, shortcut: 'F5', offered: f.hasTarget, enabled: !none, onRows: true },
    { id: 'new-folder', label: 'New folder', icon: 'new-folder', explain: 'here', shortcut: 'F7', offered: f.canUpload || f.offers.create_folder, enabled: f.hasTarget, onRows: false },
    { id: 'rename', label: 'Rename', icon: 'rename', explain: 'the selected item', shortcut: 'F2', offered: f.offers.rename, enabled: f.selected === 1, onRows: true },
    { id: 'move', label: 'Move', icon: 'transfer', explain: `the selection into the folder the ${f.otherSideName} pane shows`, shortcut: 'F6', offered: f.offers.move, enabled: !none && f.sameTargetAcross, onRows: true },
    { id: 'delete', label: 'Delete', icon: 'delete', explain: 'the selection', shortcut: 'Delete', offered: f.offers.delete, enabled: !none, onRows: true },
    { id: 'compare', label: 'Compare', icon: 'compare', explain: `the selected item with the one selected in the ${f.otherSideName} pane`, offered: f.hasTarget, enabled: f.selected === 1 && f.otherHasOne, onRows: true },
    { id: 'size', label: 'Calculate size', icon: 'folder', explain: 'of the selected folders, all the way down', offered: f.hasTarget, enabled: f.selectedFolders > 0, onRows: true },
    { id: 'verify', label: 'Verify', icon: 'verify', explain: f.atTop ? 're-read the archive and check every file against its recorded checksums' : 'go to the top of the library and select an archive to verify it', offered: f.verifies, enabled: !none && f.atTop, onRows: true },
    { id: 'search', label: 'Search', icon: 'search', explain: 'this place', shortcut: 'Control+F', offered: f.hasTarget, enabled: true, onRows: false },
    { id: 'refresh', label: 'Refresh', icon: 'refresh', explain: 'list this folder again', offered: f.hasTarget, enabled: true, onRows: false },
  ];
  return all.filter((command) => command.offered).map(({ offered: _offered, ...command }) => command);
}

/** "Rename (F2)": what a tooltip or a menu shows of the shortcut. */
export function shortcutText(shortcut: string | undefined): string {
  return shortcut ? shortcut.replace('Control+', 'Ctrl+').replace('Delete', 'Del') : '';
}

/** The command a key press in the grid stands for, if any (Shift+F10 and the Menu key open the menu instead). */
export function commandForKey(event: { key: string; ctrlKey: boolean; metaKey: boolean; shiftKey: boolean; altKey: boolean }): PaneCommandId | null {
  const mod = event.ctrlKey || event.metaKey;
  if (event.altKey) return null;
  if (!mod && !event.shiftKey) {
    const plain: Partial<Record<string, PaneCommandId>> = { F2: 'rename', Delete: 'delete', F6: 'move', F7: 'new-folder' };
    return plain[event.key] ?? null;
  }
  if (mod && !event.shiftKey && (event.key === 'f' || event.key === 'F')) return 'search';
  return null;
}
