// The application menu: the usual roles plus Ferry's commands, sent to the renderer.
// Keys the grid handles itself (F5, Backspace, arrows) are shown but not registered, so the
// menu does not swallow them before the page sees them.
import { app, Menu, type BrowserWindow, type MenuItemConstructorOptions } from 'electron';
import { IPC, type MenuCommand } from '../../shared/ipc.js';

export function buildMenu(window: () => BrowserWindow | null): Menu {
  const send = (command: MenuCommand) => () => window()?.webContents.send(IPC.menu, command);
  const isMac = process.platform === 'darwin';
  const template: MenuItemConstructorOptions[] = [
    ...(isMac ? [{ role: 'appMenu' as const }] : []),
    {
      label: 'File',
      submenu: [
        { label: 'Upload…', accelerator: 'CmdOrCtrl+U', click: send('upload') },
        { label: 'New Folder…', accelerator: 'CmdOrCtrl+Shift+N', click: send('new-folder') },
        { label: 'Download', accelerator: 'CmdOrCtrl+D', click: send('download') },
        { label: 'Copy to Other Pane', accelerator: 'F5', registerAccelerator: false, click: send('transfer') },
        { label: 'Verify Archive', accelerator: 'CmdOrCtrl+Shift+V', click: send('verify') },
        { type: 'separator' },
        { label: 'Accounts…', accelerator: 'CmdOrCtrl+,', click: send('accounts') },
        { type: 'separator' },
        isMac ? { role: 'close' } : { role: 'quit' },
      ],
    },
    { role: 'editMenu' },
    {
      label: 'View',
      submenu: [
        { label: 'Refresh', accelerator: 'CmdOrCtrl+R', click: send('refresh') },
        { label: 'Show Jobs', accelerator: 'CmdOrCtrl+J', click: send('toggle-jobs') },
        { type: 'separator' },
        { role: 'resetZoom' },
        { role: 'zoomIn' },
        { role: 'zoomOut' },
        { type: 'separator' },
        { role: 'togglefullscreen' },
        ...(app.isPackaged ? [] : [{ role: 'toggleDevTools' as const }]),
      ],
    },
    { role: 'windowMenu' },
  ];
  return Menu.buildFromTemplate(template);
}
