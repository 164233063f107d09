// The Electron shell, kept thin: start the core + local server (electron/host.ts), open one
// hardened window on the app's loopback origin, and answer the preload's few requests.
import { app, BrowserWindow, Menu, session, shell, type WebContents } from 'electron';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFerry } from '../host.js';
import { registerIpc } from './ipc.js';
import { systemTrash } from './system-trash.js';
import { buildMenu } from './menu.js';
import {
  buildWindowOptions,
  CONTENT_SECURITY_POLICY,
  isAppUrl,
  isPermissionAllowed,
  isSafeExternalUrl,
} from './window-options.js';
import { createWindowStateWriter, readWindowState, windowStateFile } from './window-state.js';

const here = path.dirname(fileURLToPath(import.meta.url));
// out/main/index.js → out/preload/index.cjs, out/renderer/
const preloadPath = path.join(here, '../preload/index.cjs');
const rendererDir = path.join(here, '../renderer');

let mainWindow: BrowserWindow | null = null;

// A test or a second profile may point userData elsewhere (fresh app data per e2e run).
if (process.env.FERRY_USER_DATA) app.setPath('userData', path.resolve(process.env.FERRY_USER_DATA));

// Every renderer sandboxed, including any a future feature opens without buildWindowOptions.
app.enableSandbox();

if (!app.requestSingleInstanceLock()) {
  app.quit();
} else {
  app.on('second-instance', () => {
    if (!mainWindow) return;
    if (mainWindow.isMinimized()) mainWindow.restore();
    mainWindow.show();
    mainWindow.focus();
  });
  void app.whenReady().then(start).catch((error: unknown) => {
    console.error(`Ferry could not start: ${(error as Error).message}`);
    app.exit(1);
  });
}

/** Checklist 13, 14, 15, 12: no navigation away, no new windows, links to the browser only if safe. */
function hardenContents(contents: WebContents, appOrigin: string): void {
  contents.on('will-navigate', (event, url) => {
    if (!isAppUrl(url, appOrigin)) event.preventDefault();
  });
  contents.on('will-redirect', (event, url) => {
    if (!isAppUrl(url, appOrigin)) event.preventDefault();
  });
  contents.on('will-attach-webview', (event) => event.preventDefault());
  contents.setWindowOpenHandler(({ url }) => {
    if (isSafeExternalUrl(url) && !isAppUrl(url, appOrigin)) void shell.openExternal(url);
    return { action: 'deny' };
  });
}

async function start(): Promise<void> {
  const userData = app.getPath('userData');
  const dataDir = path.join(userData, 'data');
  const running = await startFerry({
    dataDir,
    workspace: process.env.FERRY_WORKSPACE ? path.resolve(process.env.FERRY_WORKSPACE) : path.join(app.getPath('home'), 'Ferry'),
    rendererDir,
    host: '127.0.0.1',
    port: 0,
    trash: systemTrash(shell),
  });
  if (running.keychainWarning) console.warn(`Tokens are kept for this run only: ${running.keychainWarning}`);
  const appOrigin = new URL(running.url).origin;

  const ses = session.defaultSession;
  ses.setPermissionRequestHandler((contents, permission, callback) =>
    callback(isPermissionAllowed(permission, contents.getURL(), appOrigin)),
  );
  ses.setPermissionCheckHandler((_contents, permission, requestingOrigin) =>
    isPermissionAllowed(permission, requestingOrigin, appOrigin),
  );
  ses.webRequest.onHeadersReceived((details, callback) => {
    if (!isAppUrl(details.url, appOrigin)) return callback({ cancel: false });
    callback({ responseHeaders: { ...details.responseHeaders, 'Content-Security-Policy': [CONTENT_SECURITY_POLICY] } });
  });
  app.on('web-contents-created', (_event, contents) => hardenContents(contents, appOrigin));

  const stateFile = windowStateFile(userData);
  const state = createWindowStateWriter(stateFile);
  state.set(await readWindowState(stateFile));

  const stopIpc = registerIpc({
    connection: { url: running.url, accessKey: running.accessKey },
    appOrigin,
    window: () => mainWindow,
    state,
  });

  const saved = state.get();
  mainWindow = new BrowserWindow(buildWindowOptions(preloadPath, saved.bounds, !app.isPackaged));
  hardenContents(mainWindow.webContents, appOrigin);
  if (saved.maximized) mainWindow.maximize();
  mainWindow.once('ready-to-show', () => mainWindow?.show());
  const remember = () => {
    if (!mainWindow || mainWindow.isDestroyed()) return;
    void state.update({ bounds: mainWindow.getNormalBounds(), maximized: mainWindow.isMaximized() });
  };
  mainWindow.on('resized', remember);
  mainWindow.on('moved', remember);
  mainWindow.on('close', remember);
  mainWindow.on('closed', () => {
    mainWindow = null;
  });

  Menu.setApplicationMenu(buildMenu(() => mainWindow));

  await mainWindow.loadURL(running.url);

  let closing = false;
  app.on('window-all-closed', () => app.quit());
  app.on('before-quit', (event) => {
    if (closing) return;
    event.preventDefault();
    closing = true;
    stopIpc();
    // let running jobs stop cleanly so they resume next time
    void running.close().finally(() => app.quit());
  });
}
