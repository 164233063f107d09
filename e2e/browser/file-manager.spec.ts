// The file manager people trust (#22), end to end against a real `ferry serve`: the icon
// toolbar and its keys, the rows' context menu, rename/delete/new folder with Undo, search,
// Compare, the provenance toggle, dialogs that keep focus, and an axe-core pass with no
// serious or critical violation on every screen, light and dark. Screenshots (1400×860,
// 1024×700, dark) go to playwright-report/ui2-screenshots/ through ui2Shots.
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { expect, type Page } from '@playwright/test';
import { expectAccessible } from '../support/a11y.js';
import type { RunningServer } from '../support/ferry-server.js';
import { ferryTest } from '../support/fixture.js';
import { choosePlace, grid, jobs, openFolder, pane, row, ui2Shots } from '../support/ui.js';

const WORKSPACE = {
  'project/data.csv': 'site,depth_m,temp_c\nA,10,4.2\nB,25,3.9\n',
  'project/notes/readme.md': '# Notes\n',
  'project/notes/field-log.txt': 'day 1: calm\n',
  'dest/': '',
};

// a seeded `ferry serve` per test, and a page that fails on any Content Security Policy violation
const test = ferryTest({ workspaceFiles: WORKSPACE });

async function openApp(page: Page, ferry: RunningServer) {
  await page.goto(ferry.appUrl);
  await expect(row(pane(page, 'Left'), 'project')).toBeVisible();
}

test('toolbar and context menu: rename (F2), new folder and delete (Del), each with Undo', async ({ page, ferry }) => {
  await openApp(page, ferry);
  const left = pane(page, 'Left');
  const toolbar = left.getByRole('toolbar', { name: 'Left pane actions' });
  await expect(toolbar.getByRole('button', { name: 'Rename' })).toHaveAttribute('aria-keyshortcuts', 'F2');
  await expect(toolbar.getByRole('button', { name: 'Delete' })).toHaveAttribute('title', /Del\)/);
  await expectAccessible(page, 'main view');
  await openFolder(left, 'project');

  // the context menu, by mouse: it offers what the local workspace supports
  await row(left, 'data.csv').click({ button: 'right' });
  const menu = page.getByRole('menu', { name: 'Left pane items' });
  await expect(menu.getByRole('menuitem').first()).toBeFocused();
  await expect(menu.getByRole('menuitem', { name: /Rename/ })).toBeEnabled();
  await expect(menu.getByRole('menuitem', { name: /Delete/ })).toBeEnabled();
  await ui2Shots(page, 'context-menu', { dark: true });
  await expectAccessible(page, 'context menu');
  await page.keyboard.press('Escape');
  await expect(menu).toHaveCount(0);
  await expect(grid(left)).toBeFocused();

  // Shift+F10 opens it from the keyboard too; Rename from it
  await grid(left).press('Shift+F10');
  await menu.getByRole('menuitem', { name: /Rename/ }).press('Enter');
  const renameDialog = page.getByRole('dialog', { name: 'Rename' });
  await expect(renameDialog).toBeVisible();
  await expectAccessible(page, 'rename dialog');
  // focus stays inside the dialog, both ways round
  for (let i = 0; i < 5; i++) await page.keyboard.press('Tab');
  expect(await renameDialog.evaluate((d) => d.contains(document.activeElement))).toBe(true);
  for (let i = 0; i < 5; i++) await page.keyboard.press('Shift+Tab');
  expect(await renameDialog.evaluate((d) => d.contains(document.activeElement))).toBe(true);
  await page.keyboard.press('Escape');
  await expect(renameDialog).toHaveCount(0);

  // F2 renames; the file on disk has the new name; Undo puts the old one back
  await grid(left).press('F2');
  await renameDialog.getByRole('textbox').fill('survey.csv');
  await renameDialog.getByRole('textbox').press('Enter');
  await expect(row(left, 'survey.csv')).toBeVisible();
  await expect(left.getByRole('status')).toContainText("'data.csv' was renamed to 'survey.csv'");
  await stat(path.join(ferry.workspace, 'project/survey.csv'));
  await left.getByRole('button', { name: 'Undo' }).click();
  await expect(row(left, 'data.csv')).toBeVisible();
  await expect(row(left, 'survey.csv')).toHaveCount(0);
  expect(await readFile(path.join(ferry.workspace, 'project/data.csv'), 'utf8')).toContain('site,depth_m');

  // New folder through the folder operation (F7), with Undo
  await grid(left).press('F7');
  const newFolder = page.getByRole('dialog', { name: 'New folder' });
  await newFolder.getByRole('textbox').fill('raw');
  await newFolder.getByRole('textbox').press('Enter');
  await expect(row(left, 'raw')).toBeVisible();
  await left.getByRole('button', { name: 'Undo' }).click();
  await expect(row(left, 'raw')).toHaveCount(0);

  // Del on this machine: to Ferry's trash at once (no question), and Undo restores it
  await row(left, 'data.csv').click();
  await grid(left).press('Delete');
  await expect(row(left, 'data.csv')).toHaveCount(0);
  await expect(left.getByRole('status')).toContainText("moved to Ferry's trash");
  await ui2Shots(page, 'deleted-with-undo', { dark: true });
  await left.getByRole('button', { name: 'Undo' }).click();
  await expect(row(left, 'data.csv')).toBeVisible();
  expect(await readFile(path.join(ferry.workspace, 'project/data.csv'), 'utf8')).toContain('site,depth_m');
});

test('search a place: results with the folder they are in, paging; a place without search says so', async ({ page, ferry }) => {
  await openApp(page, ferry);
  const left = pane(page, 'Left');
  await grid(left).press('Control+f');
  const box = left.getByRole('searchbox', { name: 'Search all of Local folders' });
  await expect(box).toBeFocused();
  await box.fill('log');
  await box.press('Enter');
  const results = left.getByRole('region', { name: 'Search results' });
  await expect(results.getByRole('status')).toContainText('1 result for “log”, page 1');
  const hit = results.getByRole('button', { name: /field-log\.txt, file in/ });
  await expect(hit).toContainText('/project/notes');
  await expect(results.getByRole('button', { name: 'Next page' })).toBeDisabled();
  await ui2Shots(page, 'search-results', { dark: true });
  await expectAccessible(page, 'search results');
  // a result opens its folder with it selected
  await hit.click();
  await expect(row(left, 'field-log.txt')).toHaveAttribute('aria-selected', 'true');

  // GitHub offers no search: the pane says so and sends nothing
  await choosePlace(left, 'GitHub');
  await left.getByRole('button', { name: 'Search' }).click();
  await expect(left.getByRole('search')).toContainText("This service can't search");
});

test('Compare after a transfer, and two selected folders that differ', async ({ page, ferry }) => {
  await openApp(page, ferry);
  const left = pane(page, 'Left');
  const right = pane(page, 'Right');
  await choosePlace(right, 'Local folders');
  await openFolder(right, 'dest');
  await row(left, 'project').click();
  await left.getByRole('button', { name: 'Transfer' }).click();
  const job = jobs(page).getByRole('listitem').filter({ hasText: 'project →' });
  await expect(job).toContainText('Done');
  await job.getByRole('button', { name: 'Compare' }).click();
  const findings = page.getByRole('dialog', { name: 'Comparison' });
  await expect(findings).toContainText('Both sides hold the same files.');
  await expect(findings).toContainText('3 matched');
  await expectAccessible(page, 'comparison dialog');
  await page.keyboard.press('Escape');
  await expect(findings).toHaveCount(0);

  // one changed file and one more in the copy: different and extra, named
  const copy = path.join(ferry.workspace, 'dest/project');
  await import('node:fs/promises').then(async (fs) => {
    await fs.writeFile(path.join(copy, 'data.csv'), 'site,depth_m,temp_c\nA,10,4.2\n');
    await fs.writeFile(path.join(copy, 'extra.txt'), 'not in the source\n');
  });
  await right.getByRole('button', { name: 'Refresh' }).click();
  await row(right, 'project').click();
  await row(left, 'project').click();
  await left.getByRole('button', { name: 'Compare' }).click();
  await expect(findings).toContainText('The two sides differ.');
  await expect(findings.getByRole('region', { name: 'Different' })).toContainText('project/data.csv');
  await expect(findings.getByRole('region', { name: 'Extra' })).toContainText('project/extra.txt');
  await ui2Shots(page, 'comparison', { dark: true });
  await expectAccessible(page, 'comparison with differences');
  await findings.getByRole('button', { name: 'Close' }).click();
});

test('"Don\'t add a provenance file" sends ferry-provenance: off, and no record is written', async ({ page, ferry }) => {
  await openApp(page, ferry);
  const left = pane(page, 'Left');
  const right = pane(page, 'Right');
  await choosePlace(right, 'Local folders');
  await openFolder(right, 'dest');
  await page.getByRole('checkbox', { name: "Don't add a provenance file" }).check();
  const sent = page.waitForRequest((r) => r.method() === 'POST' && r.url().includes('/resources/'));
  await row(left, 'project').click();
  await grid(left).press('F5');
  expect((await sent).headers()['ferry-provenance']).toBe('off');
  await expect(jobs(page).getByRole('listitem').filter({ hasText: 'project →' })).toContainText('Done');
  await expect(stat(path.join(ferry.workspace, 'dest/project/ferry-provenance.json'))).rejects.toThrow();
  await stat(path.join(ferry.workspace, 'dest/project/data.csv'));
});

test('every dialog passes axe and closes with Escape: Accounts, local folders', async ({ page, ferry }) => {
  await openApp(page, ferry);
  await page.getByRole('button', { name: 'Accounts' }).click();
  const accounts = page.getByRole('dialog', { name: 'Accounts' });
  await expect(accounts).toBeVisible();
  await ui2Shots(page, 'accounts', { dark: true });
  await expectAccessible(page, 'accounts dialog');
  await page.keyboard.press('Escape');
  await expect(accounts).toHaveCount(0);
  await page.getByRole('button', { name: 'Add or manage folders…' }).click();
  const folders = page.getByRole('dialog').first();
  await expect(folders).toBeVisible();
  await expectAccessible(page, 'local folders dialog');
  await page.keyboard.press('Escape');
  await expect(page.getByRole('dialog')).toHaveCount(0);
  await ui2Shots(page, 'main', { dark: true });

  // 1024×700 with Details open: the Name column keeps its room (Kind and Modified give way)
  await page.setViewportSize({ width: 1024, height: 700 });
  await page.getByRole('button', { name: 'Details' }).click();
  await expect(page.getByRole('complementary', { name: 'Details' })).toBeVisible();
  const name = pane(page, 'Left').getByRole('columnheader', { name: /Name/ });
  expect((await name.boundingBox())!.width).toBeGreaterThan(150);
  await expectAccessible(page, 'main view with details');
  await ui2Shots(page, 'main-with-details', { dark: true });
});
