// The preload: the renderer's only door to the main process, one method per message
// (never a raw ipcRenderer). Channels are checked against the list in shared/ipc.ts, and
// anything else is refused. Built as CommonJS so the window can stay sandboxed.
import { contextBridge, ipcRenderer, webUtils, type IpcRendererEvent } from 'electron';
import {
  EVENT_CHANNELS,
  INVOKE_CHANNELS,
  IPC,
  MENU_COMMANDS,
  type FerryBridge,
  type IpcChannel,
  type MenuCommand,
  type TransferProgress,
} from '../../shared/ipc.js';

function invoke<T>(channel: IpcChannel, ...args: unknown[]): Promise<T> {
  if (!INVOKE_CHANNELS.includes(channel)) return Promise.reject(new Error(`Refused: undeclared channel ${channel}.`));
  return ipcRenderer.invoke(channel, ...args) as Promise<T>;
}

function listen<T>(channel: IpcChannel, accept: (value: unknown) => value is T, listener: (value: T) => void): () => void {
  if (!EVENT_CHANNELS.includes(channel)) throw new Error(`Refused: undeclared channel ${channel}.`);
  // the Electron event object (with its sender) never reaches the page
  const wrapped = (_event: IpcRendererEvent, value: unknown) => {
    if (accept(value)) listener(value);
  };
  ipcRenderer.on(channel, wrapped);
  return () => ipcRenderer.removeListener(channel, wrapped);
}

const isMenuCommand = (value: unknown): value is MenuCommand => MENU_COMMANDS.includes(value as MenuCommand);
const isProgress = (value: unknown): value is TransferProgress =>
  typeof value === 'object' && value !== null && typeof (value as TransferProgress).id === 'string';

const bridge: FerryBridge = {
  isElectron: true,
  connection: () => invoke(IPC.connection),
  getUiState: () => invoke(IPC.getUiState),
  setUiState: (state) => invoke(IPC.setUiState, state),
  openDialog: (request) => invoke(IPC.openDialog, request),
  download: (request) => invoke(IPC.download, request),
  dragOut: (request) => invoke(IPC.dragOut, request),
  reveal: (path) => invoke(IPC.reveal, path),
  setTaskbarProgress: (value) => invoke(IPC.taskbarProgress, value),
  pathForFile: (file) => webUtils.getPathForFile(file),
  onProgress: (listener) => listen(IPC.progress, isProgress, listener),
  onMenu: (listener) => listen(IPC.menu, isMenuCommand, listener),
};

contextBridge.exposeInMainWorld('ferry', bridge);
