// Places: one sidebar for both panes (local folders, Downloaded ZIPs, each service), and
// local folders of the person's choosing added, named and removed from the UI with their
// real path shown. Against a real `ferry serve`; the chosen folder is a real folder outside
// the workspace, and what the core keeps (local-roots.json, 0600) is checked on disk.
import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect, test as base } from '@playwright/test';
import { startServer, type RunningServer } from '../support/ferry-server.js';
import { choosePlace, grid, pane, placeOf, places, row, ui2Shots } from '../support/ui.js';

const test = base.extend<{ ferry: RunningServer; chosen: string }>({
  ferry: async ({}, use) => {
    const server = await startServer({ workspaceFiles: { 'project/a.txt': 'a' } });
    try {
      await use(server);
    } finally {
      await server.stop();
    }
  },
  chosen: async ({}, use) => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-place-'));
    const folder = path.join(dir, 'Field Data');
    await mkdir(path.join(folder, 'raw'), { recursive: true });
    await writeFile(path.join(folder, 'survey.csv'), 'a,b\n1,2\n');
    try {
      await use(folder);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
});

test('places replace the target picker: each is an icon and a name, opens in the active pane, and is reachable by keyboard', async ({ page, ferry }) => {
  await page.goto(ferry.appUrl);
  const left = pane(page, 'Left');
  const right = pane(page, 'Right');
  await expect(row(left, 'project')).toBeVisible();
  const sidebar = places(page);
  for (const name of ['Local folders', 'Downloaded ZIPs', 'OSF', 'GitHub', 'WebDAV', 'Dataverse']) {
    await expect(sidebar.getByRole('button', { name, exact: true })).toBeVisible();
  }
  await expect(sidebar.getByRole('button', { name: 'Local folders', exact: true }).locator('svg')).toHaveCount(1);
  await expect(page.getByRole('combobox', { name: 'Target' })).toHaveCount(0);
  await expect(sidebar.getByRole('button', { name: 'Local folders', exact: true })).toHaveAttribute('aria-current', 'location');

  // keyboard: Tab from the header lands on the active pane's place (one Tab stop), arrows
  // move between places, Enter opens one in the active pane, and Tab leaves the sidebar
  await grid(right).focus();
  await expect(sidebar).toContainText('Opens in the right pane');
  await page.getByRole('button', { name: 'Accounts', exact: true }).focus();
  await page.keyboard.press('Tab');
  await expect(sidebar.getByRole('button', { name: 'Downloaded ZIPs', exact: true })).toBeFocused();
  await page.keyboard.press('ArrowDown');
  await expect(sidebar.getByRole('button', { name: 'OSF', exact: true })).toBeFocused();
  await page.keyboard.press('Home');
  await expect(sidebar.getByRole('button', { name: 'Local folders', exact: true })).toBeFocused();
  await page.keyboard.press('ArrowDown');
  await expect(sidebar.getByRole('button', { name: 'Add or manage folders…' })).toBeFocused();
  await page.keyboard.press('End');
  await expect(sidebar.getByRole('button', { name: 'InvenioRDM', exact: true })).toBeFocused();
  await page.keyboard.press('Home');
  await page.keyboard.press('Enter');
  await expect(placeOf(right)).toHaveText('Local folders');
  await expect(row(right, 'project')).toBeVisible();
  await expect(grid(right)).toBeFocused();
  await ui2Shots(page, 'places', { dark: true });

  // at 1024×700 the sidebar and both panes still fit side by side
  await page.setViewportSize({ width: 1024, height: 700 });
  const [nav, l, r] = await Promise.all([sidebar.boundingBox(), left.boundingBox(), right.boundingBox()]);
  expect(nav!.x + nav!.width).toBeLessThanOrEqual(l!.x);
  expect(l!.x + l!.width).toBeLessThanOrEqual(r!.x);
  expect(r!.x + r!.width).toBeLessThanOrEqual(1024);
  expect(l!.width).toBeGreaterThan(320);
  await expect(row(right, 'project')).toBeVisible();
});

test('a local folder of my choosing: refused with a sentence when wrong, added with its real path, named, browsed, removed', async ({ page, ferry, chosen }) => {
  await page.goto(ferry.appUrl);
  const left = pane(page, 'Left');
  await expect(row(left, 'project')).toBeVisible();
  await places(page).getByRole('button', { name: 'Add or manage folders…' }).click();
  const dialog = page.getByRole('dialog', { name: 'Local folders' });
  await expect(dialog.getByRole('list', { name: 'Chosen folders' })).toContainText(ferry.workspace);
  const form = dialog.getByRole('form', { name: 'Add a folder' });
  const folderField = form.getByLabel('Folder path');

  for (const [given, sentence] of [
    ['Field Data', /whole path/],
    [path.join(chosen, 'missing'), /no folder at that path/],
    [path.join(chosen, 'survey.csv'), /is a file/],
    [ferry.dataDir, /Ferry's own data folder/],
    [ferry.workspace, /already shows/],
  ] as const) {
    await folderField.fill(given);
    await form.getByRole('button', { name: 'Add folder' }).click();
    await expect(dialog.getByRole('alert')).toContainText(sentence);
  }
  await ui2Shots(page, 'local-folder-refused');
  await expect(places(page).getByRole('button', { name: 'Field Data' })).toHaveCount(0);

  await folderField.fill(chosen);
  await form.getByLabel('Name (optional)').fill('Survey 2026');
  await form.getByRole('button', { name: 'Add folder' }).click();
  await expect(dialog.getByRole('status')).toContainText('Added “Survey 2026”');
  await expect(dialog.getByRole('list', { name: 'Chosen folders' })).toContainText(chosen);
  await ui2Shots(page, 'local-folder-added', { dark: true });
  const file = path.join(ferry.dataDir, 'local-roots.json');
  expect((await stat(file)).mode & 0o777).toBe(0o600);

  // named again: the place follows
  await dialog.getByLabel('Name of Survey 2026').fill('Field survey');
  await dialog.getByRole('button', { name: 'Rename' }).click();
  await expect(dialog.getByRole('status')).toContainText('Renamed to “Field survey”');
  await dialog.getByRole('button', { name: 'Close' }).click();

  await choosePlace(left, 'Field survey');
  await expect(row(left, 'survey.csv')).toBeVisible();
  await expect(row(left, 'raw')).toBeVisible();
  await expect(places(page).getByRole('button', { name: 'Field survey' })).toHaveAttribute('title', `Field survey — ${chosen}`);
  await ui2Shots(page, 'local-folder-browsed');

  // removed: gone from Places, the pane goes back to the workspace, the files stay
  await places(page).getByRole('button', { name: 'Add or manage folders…' }).click();
  await dialog.getByRole('button', { name: 'Remove Field survey' }).click();
  await expect(dialog.getByRole('status')).toContainText('Its files are untouched');
  await dialog.getByRole('button', { name: 'Close' }).click();
  await expect(places(page).getByRole('button', { name: 'Field survey' })).toHaveCount(0);
  await expect(placeOf(left)).toHaveText('Local folders');
  expect((await stat(path.join(chosen, 'survey.csv'))).isFile()).toBe(true);
});
