// Issue #22, "Truth first": the UI never says something happened that didn't. Each journey
// runs the built renderer against a real `ferry serve` in Chromium and failed before its
// fix. Screenshots at 1400×860 and 1024×700 go to playwright-report/truth-screenshots/
// (outside test-results/, which Playwright empties on every run, so before and after both stay).
import { randomBytes } from 'node:crypto';
import { open, readdir, readFile, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { expect, type Locator, type Page } from '@playwright/test';
import type { RunningServer } from '../support/ferry-server.js';
import { ferryTest } from '../support/fixture.js';
import { choosePlace, grid, jobs, openFolder, pane, row, withoutSavePicker } from '../support/ui.js';

const pad = (n: number) => String(n).padStart(3, '0');

/**
 * "big": 80 files whose listing order (code units: "Z…" before "s…") differs from the
 * display order (names, case-insensitive: "sample_…" first). "sizes": 300 files whose size
 * and date do not follow their names; the largest and the two newest sort last by name, so
 * they are never on screen unless the whole folder is sorted.
 */
function workspace(): Record<string, string | Buffer> {
  const files: Record<string, string | Buffer> = { 'project/data.csv': 'a,b\n1,2\n', 'project/notes/readme.md': '# Notes\n', 'dest/': '' };
  files['big/Z_summary.txt'] = 'summary\n';
  for (let i = 1; i < 80; i++) files[`big/sample_${pad(i)}.txt`] = `sample ${i}\n`;
  for (let i = 1; i <= 300; i++) files[`sizes/file_${pad(i)}.dat`] = Buffer.alloc(((i * 37) % 300) * 10 + 1, 'x');
  files['sizes/zz_largest.bin'] = Buffer.alloc(50_000, 'y');
  files['sizes/zz_dec27.txt'] = 'late on the 27th\n';
  files['sizes/zz_dec28.txt'] = 'early on the 28th\n';
  for (let i = 1; i <= 120; i++) files[`many/part_${pad(i)}.csv`] = `part,${i}\n`;
  return files;
}

// a seeded `ferry serve` per test, and a page that fails on any Content Security Policy violation
const test = ferryTest({ workspaceFiles: workspace() });

const SIZES = [
  { width: 1400, height: 860 },
  { width: 1024, height: 700 },
];

/**
 * The page at both sizes, into playwright-report/truth-screenshots/<name>-<w>x<h>.png, taken before the
 * journey's checks so a failing run shows what it saw. FERRY_SHOTS=before names a run on the
 * unfixed code (<name>-before-…).
 */
async function shots(page: Page, name: string): Promise<void> {
  const phase = process.env.FERRY_SHOTS === 'before' ? '-before' : '';
  for (const size of [...SIZES].reverse()) {
    await page.setViewportSize(size);
    await page.waitForTimeout(150); // the virtual list measures itself after a resize
    await page.screenshot({ path: `playwright-report/truth-screenshots/${name}${phase}-${size.width}x${size.height}.png` });
  }
}

async function apiGet(page: Page, ferry: RunningServer, route: string): Promise<unknown> {
  const response = await page.request.get(new URL(route, ferry.url).href, { headers: { Authorization: `Bearer ${ferry.accessKey}` } });
  expect(response.status(), await response.text()).toBe(200);
  return response.json();
}

async function openApp(page: Page, ferry: RunningServer): Promise<void> {
  await page.setViewportSize(SIZES[0]!);
  await page.goto(ferry.appUrl);
  await expect(row(pane(page, 'Left'), 'project')).toBeVisible();
}

/** Titles of the rows in display order, as far as they are rendered. */
async function shownTitles(p: Locator): Promise<string[]> {
  return grid(p)
    .locator('.grid-body [role="row"]')
    .evaluateAll((rows) =>
      rows
        .map((r) => ({ index: Number(r.getAttribute('aria-rowindex')), title: r.querySelector('.title-text')?.textContent ?? '' }))
        .sort((a, b) => a.index - b.index)
        .map((r) => r.title),
    );
}

async function cursorTitle(p: Locator): Promise<string | null> {
  return grid(p).locator('.grid-row.cursor .title-text').textContent({ timeout: 2000 }).catch(() => null);
}

async function scrollTopOf(p: Locator): Promise<number> {
  return grid(p).locator('.grid-body').evaluate((body) => body.scrollTop);
}

test('opening a folder shows its top, with the cursor on the first row; Enter acts on that row', async ({ page, ferry }) => {
  await openApp(page, ferry);
  const left = pane(page, 'Left');
  await openFolder(left, 'big');
  await expect(left.locator('.pane-foot')).toContainText('80 items');
  await page.waitForTimeout(300);
  await shots(page, '4-open-folder-lands-on-top');
  await expect.poll(() => cursorTitle(left)).toBe('sample_001.txt');
  expect(await scrollTopOf(left)).toBe(0);
  expect((await shownTitles(left))[0]).toBe('sample_001.txt');

  // Enter opens the row under the cursor (a file: its details), the first one
  await grid(left).focus();
  await grid(left).press('Enter');
  await expect(page.getByRole('complementary', { name: 'Details' }).getByRole('heading', { name: 'sample_001.txt' })).toBeVisible();

  // scrolled far down in one folder, another opens at its top all the same
  await grid(left).press('End');
  await expect.poll(() => cursorTitle(left)).toBe('Z_summary.txt');
  expect(await scrollTopOf(left)).toBeGreaterThan(0);
  await left.getByRole('navigation', { name: 'Location' }).getByRole('button', { name: 'Local folders' }).click();
  await openFolder(left, 'sizes');
  await expect.poll(() => cursorTitle(left)).toBe('file_001.dat');
  expect(await scrollTopOf(left)).toBe(0);
});

test('sorting by size or date sorts the whole folder, newest first by instant, and rows stay put while scrolling', async ({ page, ferry }) => {
  const folder = path.join(ferry.workspace, 'sizes');
  const old = new Date('2025-06-01T12:00:00Z');
  for (const name of await readdir(folder)) await utimes(path.join(folder, name), old, old);
  await utimes(path.join(folder, 'zz_dec27.txt'), old, new Date('2025-12-27T23:30:00Z'));
  await utimes(path.join(folder, 'zz_dec28.txt'), old, new Date('2025-12-28T00:10:00Z'));
  await openApp(page, ferry);
  const left = pane(page, 'Left');
  await openFolder(left, 'sizes');
  await expect(row(left, 'file_001.dat')).toBeVisible();

  const header = (name: string) => grid(left).getByRole('columnheader', { name: new RegExp(name) }).getByRole('button');
  await header('Size').click(); // ascending
  await header('Size').click(); // descending
  await page.waitForTimeout(1500);
  await shots(page, '3-sorted-by-size-desc');
  await expect.poll(async () => (await shownTitles(left))[0]).toBe('zz_largest.bin');
  const bySize = await shownTitles(left);

  await header('Modified').click(); // ascending
  await header('Modified').click(); // descending: newest first
  await page.waitForTimeout(1500);
  await shots(page, '3-sorted-by-date-newest-first');
  await expect.poll(async () => (await shownTitles(left)).slice(0, 2)).toEqual(['zz_dec28.txt', 'zz_dec27.txt']);
  const top = (await shownTitles(left)).slice(0, 20);

  // scroll through the whole folder and back: no row moved
  const body = grid(left).locator('.grid-body');
  for (let i = 0; i < 12; i++) {
    await body.hover();
    await page.mouse.wheel(0, 1200);
    await page.waitForTimeout(60);
  }
  await body.evaluate((element) => (element.scrollTop = 0));
  await page.waitForTimeout(200);
  expect((await shownTitles(left)).slice(0, 20)).toEqual(top);
  expect(bySize.length).toBeGreaterThan(10);
});

test('cancelling the save dialog saves nothing and says so', async ({ page, ferry }) => {
  // the browser's own save dialog, answered with Cancel (Playwright cannot click a native dialog)
  await page.addInitScript(() => {
    (window as unknown as { showSaveFilePicker: () => Promise<never> }).showSaveFilePicker = () =>
      Promise.reject(new DOMException('The user aborted a request.', 'AbortError'));
  });
  await openApp(page, ferry);
  const left = pane(page, 'Left');
  await row(left, 'project').click();
  await left.getByRole('checkbox', { name: 'Keep offline' }).check();
  await left.getByRole('button', { name: 'Download' }).click();
  await expect(left.getByRole('status')).toBeVisible();
  await shots(page, '2-save-dialog-cancelled');
  await expect(left.getByRole('status')).toContainText('Download cancelled: nothing was saved');
  await expect(left.getByText(/saved\.|A copy is kept/)).toHaveCount(0);
  // and the library holds no copy either
  expect(await apiGet(page, ferry, '/api_v1/targets/offline/resources/?container=None')).toEqual([]);
});

test('select all then Transfer is one job for the whole selection', async ({ page, ferry }) => {
  await openApp(page, ferry);
  const left = pane(page, 'Left');
  const right = pane(page, 'Right');
  await openFolder(left, 'many');
  await choosePlace(right, 'Local folders');
  await openFolder(right, 'dest');
  await grid(left).focus();
  await grid(left).press('Control+a');
  await expect(left.locator('.pane-foot')).toContainText('120 selected');
  await left.getByRole('button', { name: 'Transfer' }).click();
  await expect(jobs(page).getByRole('listitem').first()).toContainText('Done', { timeout: 30_000 });
  await expect.poll(async () => (await readdir(path.join(ferry.workspace, 'dest'))).length, { timeout: 30_000 }).toBe(120);
  await shots(page, '5-selection-is-one-job');
  const all = (await apiGet(page, ferry, '/api_v1/jobs/')) as { kind: string }[];
  expect(all.filter((j) => j.kind === 'transfer')).toHaveLength(1);
  await expect(row(right, 'part_001.csv')).toBeVisible();
});

test('a download shows how far it got, with a bar that says when the total is unknown', async ({ page, ferry }) => {
  // incompressible, so the bag is as big as the file; the network is slowed so it takes a few seconds
  await writeFile(path.join(ferry.workspace, 'project/raw.bin'), randomBytes(24 * 1024 * 1024));
  await withoutSavePicker(page);
  await openApp(page, ferry);
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: 6 * 1024 * 1024, uploadThroughput: -1 });
  const left = pane(page, 'Left');
  await row(left, 'project').click();
  const downloading = page.waitForEvent('download', { timeout: 60_000 });
  await left.getByRole('button', { name: 'Download' }).click();
  await page.waitForTimeout(1500);
  await shots(page, '6-download-progress');
  await expect(left.getByRole('progressbar', { name: /Download progress/ })).toBeVisible();
  await expect(left.getByRole('status')).toContainText(/Downloading project\.zip: [\d.]+ [KM]B so far/);
  const download = await downloading;
  expect(download.suggestedFilename()).toBe('project.zip');
  await expect(left.getByRole('status')).toContainText("project.zip was handed to the browser: find it in the browser's downloads");
  await expect(left.getByRole('progressbar')).toHaveCount(0);
});

test('downloading a selection is one bag with every selected item, and one save', async ({ page, ferry }, testInfo) => {
  await withoutSavePicker(page);
  await openApp(page, ferry);
  const left = pane(page, 'Left');
  await row(left, 'project').click();
  await row(left, 'many').click({ modifiers: ['Control'] });
  await expect(left.locator('.pane-foot')).toContainText('2 selected');
  const downloads: string[] = [];
  page.on('download', (d) => downloads.push(d.suggestedFilename()));
  const downloading = page.waitForEvent('download');
  await left.getByRole('button', { name: 'Download' }).click();
  const download = await downloading;
  await expect(left.getByRole('status')).toContainText('was handed to the browser');
  await shots(page, '5-selection-is-one-download');
  await page.waitForTimeout(500);
  expect(downloads).toEqual(['Local folders (2 items).zip']);
  const saved = testInfo.outputPath('selection.zip');
  await download.saveAs(saved);
  const names = (await readFile(saved)).toString('latin1');
  expect(names).toContain('/data/project/data.csv');
  expect(names).toContain('/data/many/part_120.csv');
});

test('Cancel all stops every unfinished job in one click and says how many', async ({ page, ferry }) => {
  // big sparse files keep the transfers busy long enough to cancel
  for (const name of ['one.bin', 'two.bin', 'three.bin']) {
    const handle = await open(path.join(ferry.workspace, 'project', name), 'w');
    await handle.truncate(768 * 1024 * 1024);
    await handle.close();
  }
  await openApp(page, ferry);
  const left = pane(page, 'Left');
  const right = pane(page, 'Right');
  await openFolder(left, 'project');
  await choosePlace(right, 'Local folders');
  await openFolder(right, 'dest');
  for (const name of ['one.bin', 'two.bin', 'three.bin']) {
    await row(left, name).click();
    await left.getByRole('button', { name: 'Transfer' }).click();
    await expect(jobs(page).getByRole('listitem').filter({ hasText: name })).toBeVisible();
  }
  await shots(page, '5-cancel-all');
  const cancelAll = jobs(page).getByRole('button', { name: /^Cancel all/ });
  await expect(cancelAll).toBeVisible({ timeout: 5000 });
  await cancelAll.click();
  await expect(jobs(page).getByRole('status')).toContainText(/^\d+ jobs? cancelled\.$/);
  for (const name of ['one.bin', 'two.bin', 'three.bin']) {
    await expect(jobs(page).getByRole('listitem').filter({ hasText: name })).not.toContainText(/Running|Waiting/);
  }
  await expect(jobs(page).getByRole('listitem').filter({ hasText: 'Cancelled' }).first()).toBeVisible();
  await expect(cancelAll).toHaveCount(0);
  await shots(page, '5-cancel-all-done');
});

test('Back, Forward and Up move as in a browser; a typed path goes there or says which part is missing', async ({ page, ferry }) => {
  await openApp(page, ferry);
  const left = pane(page, 'Left');
  const crumbs = left.getByRole('navigation', { name: 'Location' });
  const here = () => crumbs.locator('[aria-current="location"]').textContent({ timeout: 1000 }).catch(() => null);
  await openFolder(left, 'project');
  await openFolder(left, 'notes');
  await shots(page, '7-history-buttons');
  await left.getByRole('button', { name: 'Up', exact: true }).click();
  await expect.poll(here).toBe('project');
  await expect.poll(() => cursorTitle(left)).toBe('notes'); // landed on the folder just left
  await left.getByRole('button', { name: 'Back', exact: true }).click();
  await expect.poll(here).toBe('notes');
  await left.getByRole('button', { name: 'Back', exact: true }).click();
  await expect.poll(here).toBe('project');
  await left.getByRole('button', { name: 'Forward', exact: true }).click();
  await expect.poll(here).toBe('notes');
  await grid(left).focus();
  await grid(left).press('Alt+ArrowLeft');
  await expect.poll(here).toBe('project');
  await grid(left).press('Alt+ArrowUp');
  await expect(row(left, 'big')).toBeVisible();
  await shots(page, '7-back-forward-up');

  // the path bar: Ctrl+L, a path, Enter
  await grid(left).press('Control+l');
  const field = left.getByRole('textbox', { name: /^Path in / });
  await expect(field).toHaveValue('/');
  await field.fill('/project/nope');
  await field.press('Enter');
  await expect(left.getByRole('alert')).toHaveText('There is no “nope” in project.');
  await shots(page, '7-path-bar-missing-part');
  await field.fill('/Project/notes/');
  await field.press('Enter');
  await expect.poll(here).toBe('notes');
  await expect(row(left, 'readme.md')).toBeVisible();
  await left.getByRole('button', { name: 'Edit path' }).click();
  await expect(field).toHaveValue('/project/notes');
  await field.press('Escape');
  await expect(field).toHaveCount(0);
});

test('typing letters in the list jumps to the first name that starts with them', async ({ page, ferry }) => {
  await openApp(page, ferry);
  const left = pane(page, 'Left');
  await openFolder(left, 'big');
  await expect.poll(() => cursorTitle(left)).toBe('sample_001.txt');
  await grid(left).focus();
  await page.keyboard.type('z');
  await page.waitForTimeout(300);
  await shots(page, '7-type-ahead-z');
  await expect.poll(() => cursorTitle(left)).toBe('Z_summary.txt');
  await page.waitForTimeout(1100); // a pause starts a new name
  await page.keyboard.type('sample_042');
  await expect.poll(() => cursorTitle(left)).toBe('sample_042.txt');
  await shots(page, '7-type-ahead');
  await grid(left).press('Enter');
  await expect(page.getByRole('complementary', { name: 'Details' }).getByRole('heading', { name: 'sample_042.txt' })).toBeVisible();
});

test('a download under way can be cancelled, and then nothing is saved or kept', async ({ page, ferry }) => {
  await writeFile(path.join(ferry.workspace, 'project/raw.bin'), randomBytes(24 * 1024 * 1024));
  await withoutSavePicker(page);
  await openApp(page, ferry);
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: 4 * 1024 * 1024, uploadThroughput: -1 });
  const left = pane(page, 'Left');
  const downloads: string[] = [];
  page.on('download', (d) => downloads.push(d.suggestedFilename()));
  await row(left, 'project').click();
  await left.getByRole('checkbox', { name: 'Keep offline' }).check();
  await left.getByRole('button', { name: 'Download' }).click();
  await expect(left.getByRole('status')).toContainText(/so far|Downloading/);
  await shots(page, '6-download-cancel-offered');
  await left.getByRole('status').getByRole('button', { name: 'Cancel' }).click();
  await expect(left.getByRole('status')).toHaveText(/^Download cancelled: nothing was saved or kept\./);
  await shots(page, '6-download-cancelled');
  await page.waitForTimeout(1500);
  expect(downloads).toEqual([]);
  expect(await apiGet(page, ferry, '/api_v1/targets/offline/resources/?container=None')).toEqual([]);
});
