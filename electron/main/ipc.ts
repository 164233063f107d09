// The few things only a desktop can do, answered for the app's own page only: every
// handler first checks that the sending frame's origin is the app's (checklist item 17).
import { app, dialog, ipcMain, nativeImage, shell, type BrowserWindow, type IpcMainInvokeEvent } from 'electron';
import path from 'node:path';
import {
  IPC,
  type Connection,
  type DownloadRequest,
  type DownloadResult,
  type DragOutRequest,
  type DragOutResult,
  type OpenDialogRequest,
  type UiState,
} from '../../shared/ipc.js';
import { downloadToFile, isApiDownloadPath, safeFileName, stageForDrag } from './downloads.js';
import { taskbarProgress } from './taskbar-progress.js';
import { isAppUrl } from './window-options.js';
import type { createWindowStateWriter } from './window-state.js';

// a 16×16 neutral "document" icon for the drag image (startDrag needs one on macOS)
const DRAG_ICON =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAYAAAAf8/9hAAAAM0lEQVR4nGNggIKolIr/DEQCFLUgDiUYxaCv338RhbG6dtSAUQOGuAFUzUwYzsIBkNUCAE14V+PxAFZvAAAAAElFTkSuQmCC';

export interface IpcContext {
  connection: Connection;
  appOrigin: string;
  window: () => BrowserWindow | null;
  state: ReturnType<typeof createWindowStateWriter>;
}

export class UntrustedSenderError extends Error {
  constructor() {
    super('Refused: this request did not come from the Ferry window.');
  }
}

export function registerIpc(context: IpcContext): () => void {
  /** files this run saved: the only paths "reveal" will show */
  const saved = new Set<string>();

  function handle<A extends unknown[], R>(channel: string, fn: (event: IpcMainInvokeEvent, ...args: A) => Promise<R> | R) {
    ipcMain.handle(channel, (event, ...args) => {
      if (!isAppUrl(event.senderFrame?.url, context.appOrigin)) throw new UntrustedSenderError();
      return fn(event, ...(args as A));
    });
  }

  const progress = (event: IpcMainInvokeEvent, id: string, bytes: number, total: number | null, done: boolean) => {
    if (!event.sender.isDestroyed()) event.sender.send(IPC.progress, { id, bytes, total, done });
  };

  handle(IPC.connection, () => context.connection);
  handle(IPC.getUiState, () => context.state.get().ui ?? null);
  handle(IPC.setUiState, async (_event, ui: UiState) => {
    if (!ui || typeof ui !== 'object' || !ui.panes) return;
    await context.state.update({ ui });
  });

  handle(IPC.openDialog, async (_event, request: OpenDialogRequest) => {
    const win = context.window();
    const options = {
      properties: request?.mode === 'folder' ? (['openDirectory'] as const) : (['openFile', 'multiSelections'] as const),
    };
    const result = win
      ? await dialog.showOpenDialog(win, { properties: [...options.properties] })
      : await dialog.showOpenDialog({ properties: [...options.properties] });
    return result.canceled ? [] : result.filePaths;
  });

  handle(IPC.download, async (event, request: DownloadRequest): Promise<DownloadResult> => {
    if (!request || typeof request.path !== 'string' || !isApiDownloadPath(request.path)) {
      return { status: 'failed', error: 'That is not a Ferry download.' };
    }
    const win = context.window();
    const defaultPath = path.join(app.getPath('downloads'), safeFileName(String(request.suggestedName ?? 'download.zip')));
    const choice = win
      ? await dialog.showSaveDialog(win, { defaultPath, filters: [{ name: 'ZIP', extensions: ['zip'] }] })
      : await dialog.showSaveDialog({ defaultPath });
    if (choice.canceled || !choice.filePath) return { status: 'cancelled' };
    const id = `download:${choice.filePath}`;
    try {
      const bytes = await downloadToFile(context.connection, request.path, choice.filePath, (p) =>
        progress(event, id, p.bytes, p.total, false),
      );
      progress(event, id, bytes, bytes, true);
      saved.add(choice.filePath);
      return { status: 'saved', savedPath: choice.filePath, bytes };
    } catch (error) {
      return { status: 'failed', error: (error as Error).message };
    }
  });

  handle(IPC.dragOut, async (event, request: DragOutRequest): Promise<DragOutResult> => {
    const items = Array.isArray(request?.items) ? request.items.slice(0, 50) : [];
    if (items.length === 0) return { status: 'failed', error: 'Nothing to drag.' };
    try {
      const staged = await stageForDrag(context.connection, items, (p) => progress(event, 'drag-out', p.bytes, p.total, false));
      progress(event, 'drag-out', 0, null, true);
      event.sender.startDrag({ file: staged.files[0]!, files: staged.files, icon: nativeImage.createFromDataURL(DRAG_ICON) });
      return { status: 'started', files: staged.files.length };
    } catch (error) {
      return { status: 'failed', error: (error as Error).message };
    }
  });

  handle(IPC.reveal, (_event, filePath: string) => {
    if (typeof filePath === 'string' && saved.has(filePath)) shell.showItemInFolder(filePath);
  });

  const showProgress = taskbarProgress(context.window);
  handle(IPC.taskbarProgress, (_event, value: unknown) => showProgress(value));

  return () => {
    for (const channel of [IPC.connection, IPC.getUiState, IPC.setUiState, IPC.openDialog, IPC.download, IPC.dragOut, IPC.reveal, IPC.taskbarProgress]) {
      ipcMain.removeHandler(channel);
    }
  };
}
