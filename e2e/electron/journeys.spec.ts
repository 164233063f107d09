// The same journeys in the real Electron app, where an Electron binary exists. On machines
// without one (no download possible), the tests are skipped with the reason printed.
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { _electron as electron, expect, test, type ElectronApplication, type Page } from '@playwright/test';
import { ROOT, seed } from '../support/ferry-server.js';
import { choosePlace, grid, jobs, openFolder, pane, row, shot } from '../support/ui.js';

const binaryPath = path.join(ROOT, 'node_modules/electron/path.txt');
const hasElectron = existsSync(binaryPath) || !!process.env.ELECTRON_EXEC_PATH;
const built = existsSync(path.join(ROOT, 'out/main/index.js'));
const reason = !hasElectron
  ? 'No Electron binary on this machine (node_modules/electron/path.txt is missing and ELECTRON_EXEC_PATH is unset); browser-mode e2e covers the same journeys.'
  : !built
    ? 'Ferry is not built: run `npm run build` first.'
    : null;
if (reason) console.log(`[e2e/electron] skipped: ${reason}`);

test.describe('Electron app', () => {
  test.skip(reason !== null, reason ?? '');

  let app: ElectronApplication;
  let window: Page;
  let base: string;

  test.beforeEach(async () => {
    base = await mkdtemp(path.join(os.tmpdir(), 'ferry-electron-'));
    await seed(path.join(base, 'workspace'), { 'project/data.csv': 'a,b\n1,2\n', 'dest/': '' });
    app = await electron.launch({
      args: [ROOT],
      cwd: ROOT,
      executablePath: process.env.ELECTRON_EXEC_PATH,
      env: {
        ...process.env,
        FERRY_USER_DATA: path.join(base, 'user-data'),
        FERRY_WORKSPACE: path.join(base, 'workspace'),
      },
    });
    window = await app.firstWindow();
  });

  test.afterEach(async () => {
    await app?.close();
    await rm(base, { recursive: true, force: true });
  });

  test('hardened window: sandboxed, no Node in the page, bridge present', async () => {
    expect(await window.evaluate(() => typeof (globalThis as { require?: unknown }).require)).toBe('undefined');
    expect(await window.evaluate(() => typeof (globalThis as { ferry?: unknown }).ferry)).toBe('object');
    const prefs = await app.evaluate(({ BrowserWindow }) => {
      const w = BrowserWindow.getAllWindows()[0]!;
      // not in the public typings, but present at run time
      return (w.webContents as unknown as { getLastWebPreferences(): Record<string, unknown> | null }).getLastWebPreferences();
    });
    expect(prefs).toMatchObject({ sandbox: true, contextIsolation: true, nodeIntegration: false, webSecurity: true });
    expect(new URL(window.url()).protocol).toBe('http:');
  });

  test('browse, detail and transfer between panes', async () => {
    const left = pane(window, 'Left');
    const right = pane(window, 'Right');
    await expect(row(left, 'project')).toBeVisible();
    await openFolder(left, 'project');
    await choosePlace(right, 'Local folders');
    await openFolder(right, 'dest');
    await row(left, 'data.csv').dragTo(grid(right));
    await expect(jobs(window).getByRole('listitem').filter({ hasText: 'data.csv' })).toContainText('Done');
    await expect(row(right, 'data.csv')).toBeVisible();
    expect(await readFile(path.join(base, 'workspace/dest/data.csv'), 'utf8')).toBe('a,b\n1,2\n');
    await shot(window, 'electron-01-transfer');
  });
});
