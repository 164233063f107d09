// The preload bridge between the renderer and the Electron main process: channel names
// and the typed surface the renderer sees as `window.ferry`. Pure declarations so the
// main process, the preload and the renderer agree on one list. The preload refuses any
// channel that is not listed here.

export const IPC = {
  /** invoke → Connection: where the local API listens and the access key for it */
  connection: 'ferry:connection',
  /** invoke → UiState | null: the panes' last locations, remembered in userData */
  getUiState: 'ferry:ui-state:get',
  /** invoke(UiState) → void */
  setUiState: 'ferry:ui-state:set',
  /** invoke(OpenDialogRequest) → string[] (absolute paths chosen, empty when cancelled) */
  openDialog: 'ferry:dialog:open',
  /** invoke(DownloadRequest) → DownloadResult: save dialog + download in the main process */
  download: 'ferry:download',
  /** invoke(DragOutRequest) → DragOutResult: stage items to temp files, then a native drag */
  dragOut: 'ferry:drag-out',
  /** invoke(path) → void: show a downloaded file in the system file manager */
  reveal: 'ferry:reveal',
  /** invoke(number) → void: the jobs' progress on the taskbar/dock (shared/queue-progress.ts) */
  taskbarProgress: 'ferry:taskbar-progress',
  /** main → renderer: DownloadProgress for a download or a drag-out staging */
  progress: 'ferry:progress',
  /** main → renderer: MenuCommand chosen in the application menu */
  menu: 'ferry:menu',
} as const;

export type IpcChannel = (typeof IPC)[keyof typeof IPC];

/** Channels the renderer may invoke (request/response). */
export const INVOKE_CHANNELS: readonly IpcChannel[] = [
  IPC.connection,
  IPC.getUiState,
  IPC.setUiState,
  IPC.openDialog,
  IPC.download,
  IPC.dragOut,
  IPC.reveal,
  IPC.taskbarProgress,
];

/** Channels the renderer may listen on (main → renderer). */
export const EVENT_CHANNELS: readonly IpcChannel[] = [IPC.progress, IPC.menu];

export interface Connection {
  /** e.g. http://127.0.0.1:53211/ */
  url: string;
  accessKey: string;
}

export interface PaneLocation {
  target: string | null;
  trail: { id: string; title: string }[];
}

export interface UiState {
  panes: { left: PaneLocation; right: PaneLocation };
}

export interface OpenDialogRequest {
  /** files, or folders */
  mode: 'files' | 'folder';
}

export interface DownloadRequest {
  /** app-relative path of the `.zip/` download, e.g. /api_v1/targets/local/resources/<id>.zip/?keep=1 */
  path: string;
  suggestedName: string;
}

export type DownloadResult =
  | { status: 'saved'; savedPath: string; bytes: number }
  | { status: 'cancelled' }
  | { status: 'failed'; error: string };

export interface DragOutItem {
  target: string;
  id: string;
  title: string;
}

export interface DragOutRequest {
  items: DragOutItem[];
}

export type DragOutResult = { status: 'started'; files: number } | { status: 'failed'; error: string };

export interface TransferProgress {
  /** a download id or "drag-out" */
  id: string;
  bytes: number;
  /** null when the size is not known in advance */
  total: number | null;
  done: boolean;
}

export type MenuCommand =
  | 'upload'
  | 'new-folder'
  | 'refresh'
  | 'download'
  | 'transfer'
  | 'verify'
  | 'accounts'
  | 'toggle-jobs';

/** What the preload exposes as `window.ferry`. */
export interface FerryBridge {
  readonly isElectron: true;
  connection(): Promise<Connection>;
  getUiState(): Promise<UiState | null>;
  setUiState(state: UiState): Promise<void>;
  openDialog(request: OpenDialogRequest): Promise<string[]>;
  download(request: DownloadRequest): Promise<DownloadResult>;
  dragOut(request: DragOutRequest): Promise<DragOutResult>;
  reveal(path: string): Promise<void>;
  /** the jobs' progress on the taskbar or dock: 0–1, above 1 indeterminate, below 0 none */
  setTaskbarProgress(value: number): Promise<void>;
  /** the absolute path behind a dropped File ("" for files made in JavaScript) */
  pathForFile(file: File): string;
  onProgress(listener: (progress: TransferProgress) => void): () => void;
  onMenu(listener: (command: MenuCommand) => void): () => void;
}

export const MENU_COMMANDS: readonly MenuCommand[] = [
  'upload',
  'new-folder',
  'refresh',
  'download',
  'transfer',
  'verify',
  'accounts',
  'toggle-jobs',
];
