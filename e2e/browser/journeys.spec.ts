// Browser mode, end to end: the built renderer served by a real `ferry serve`, driven in
// Chromium by role and accessible name. Each test gets fresh data and workspace folders.
import { createHash } from 'node:crypto';
import { open, readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { expect } from '@playwright/test';
import type { RunningServer } from '../support/ferry-server.js';
import { ferryTest } from '../support/fixture.js';
import { choosePlace, grid, jobs, openFolder, pane, placeOf, row, shot } from '../support/ui.js';

const CSV = 'site,depth_m,temp_c\nA,10,4.2\nB,25,3.9\n';
const WORKSPACE = {
  'project/data.csv': CSV,
  'project/notes/readme.md': '# Notes\n',
  'dest/': '',
};

// a seeded `ferry serve` per test, and a page that fails on any Content Security Policy violation
const test = ferryTest({ workspaceFiles: WORKSPACE });

async function openApp(page: import('@playwright/test').Page, ferry: RunningServer) {
  await page.goto(ferry.appUrl);
  await expect(row(pane(page, 'Left'), 'project')).toBeVisible();
}

test('browse into a folder and back; the key leaves the address bar and survives a reload', async ({ page, ferry }) => {
  await openApp(page, ferry);
  expect(page.url()).not.toContain(ferry.accessKey);
  const left = pane(page, 'Left');
  await expect(placeOf(left)).toHaveText('Local folders');
  await openFolder(left, 'project');
  await expect(row(left, 'data.csv')).toBeVisible();
  await expect(row(left, 'notes')).toBeVisible();
  await shot(page, '01-browse-into-folder');
  await grid(left).focus();
  await grid(left).press('Backspace');
  await expect(row(left, 'dest')).toBeVisible();
  await expect(left.getByRole('navigation', { name: 'Location' }).getByRole('button', { name: 'project' })).toHaveCount(0);
  await page.reload();
  await expect(row(pane(page, 'Left'), 'project')).toBeVisible();
  await shot(page, '02-back-and-reloaded');
});

test('detail shows the real hashes of a file', async ({ page, ferry }) => {
  await openApp(page, ferry);
  const left = pane(page, 'Left');
  await openFolder(left, 'project');
  await row(left, 'data.csv').click();
  await grid(left).press('F3');
  const details = page.getByRole('complementary', { name: 'Details' });
  await expect(details.getByRole('heading', { name: 'data.csv' })).toBeVisible();
  const bytes = await readFile(path.join(ferry.workspace, 'project/data.csv'));
  const shown = details.locator('code[data-hash]');
  await expect(shown.first()).toBeVisible();
  const algorithms = await shown.evaluateAll((codes) => codes.map((c) => c.getAttribute('data-hash')!));
  expect(algorithms.length).toBeGreaterThan(0);
  for (const algorithm of algorithms) {
    const expected = createHash(algorithm).update(bytes).digest('hex');
    await expect(details.locator(`code[data-hash="${algorithm}"]`)).toHaveText(expected);
  }
  await expect(details).toContainText(`${bytes.length} B`);
  await shot(page, '03-detail-hashes');
});

test('files dropped from the desktop onto a pane are uploaded and listed', async ({ page, ferry }) => {
  await openApp(page, ferry);
  const right = pane(page, 'Right');
  await choosePlace(right, 'Local folders');
  await openFolder(right, 'dest');
  await expect(right.getByText(/This folder is empty/)).toBeVisible();
  await right.locator('.pane-foot').drop({
    files: [
      { name: 'hello.txt', mimeType: 'text/plain', buffer: Buffer.from('hello, ferry\n') },
      { name: 'table.csv', mimeType: 'text/csv', buffer: Buffer.from(CSV) },
    ],
  });
  await expect(jobs(page).getByRole('listitem').filter({ hasText: 'Done' }).first()).toBeVisible();
  await expect(row(right, 'hello.txt')).toBeVisible();
  await expect(row(right, 'table.csv')).toBeVisible();
  expect(await readFile(path.join(ferry.workspace, 'dest/hello.txt'), 'utf8')).toBe('hello, ferry\n');
  await shot(page, '04-upload-by-drop');
});

test('dragging an item to the other pane runs a transfer job', async ({ page, ferry }) => {
  await openApp(page, ferry);
  const left = pane(page, 'Left');
  const right = pane(page, 'Right');
  await openFolder(left, 'project');
  await choosePlace(right, 'Local folders');
  await openFolder(right, 'dest');
  await row(left, 'data.csv').dragTo(grid(right));
  const job = jobs(page).getByRole('listitem').filter({ hasText: 'data.csv' });
  await expect(job).toContainText('Done');
  await expect(job).toContainText('1 created');
  await expect(row(right, 'data.csv')).toBeVisible();
  expect(await readFile(path.join(ferry.workspace, 'dest/data.csv'), 'utf8')).toBe(CSV);
  await shot(page, '05-transfer-between-panes');

  // F5 copies the selection too; the destination now holds the file, so Ferry asks once
  await row(left, 'data.csv').click();
  await grid(left).press('F5');
  const dialog = page.getByRole('dialog', { name: /already be there/ });
  await expect(dialog).toBeVisible();
  await shot(page, '06-duplicate-prompt');
  await dialog.getByRole('button', { name: 'Skip', exact: true }).click();
  await expect(jobs(page).getByRole('listitem').filter({ hasText: 'skipped' })).toBeVisible();
});

test('a running job can be cancelled, leaving nothing half-written', async ({ page, ferry }) => {
  // a big sparse file keeps the transfer busy long enough to cancel
  const handle = await open(path.join(ferry.workspace, 'project/big.bin'), 'w');
  await handle.truncate(512 * 1024 * 1024);
  await handle.close();
  await openApp(page, ferry);
  const left = pane(page, 'Left');
  const right = pane(page, 'Right');
  await openFolder(left, 'project');
  await choosePlace(right, 'Local folders');
  await openFolder(right, 'dest');
  await row(left, 'big.bin').click();
  await left.getByRole('button', { name: 'Transfer' }).click();
  const job = jobs(page).getByRole('listitem').filter({ hasText: 'big.bin' });
  await job.getByRole('button', { name: 'Cancel' }).click();
  await expect(job).toContainText('Cancelled');
  await expect(job.getByRole('button', { name: 'Resume' })).toBeVisible();
  await shot(page, '07-cancelled-job');
  const left_over = (await readdir(path.join(ferry.workspace, 'dest'))).filter((name) => name.includes('big'));
  expect(left_over).toEqual([]);
});
