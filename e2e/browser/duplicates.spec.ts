// Duplicates, end to end in browser mode: a transfer into a folder that already holds some of
// the files, decided per file in the duplicate dialog over both sides side by side, then the
// files on disk as chosen. axe-core checks the per-file view.
import { readFile, readdir, utimes } from 'node:fs/promises';
import path from 'node:path';
import { expect } from '@playwright/test';
import { expectAccessible } from '../support/a11y.js';
import { ferryTest } from '../support/fixture.js';
import { choosePlace, jobs, openFolder, pane, row } from '../support/ui.js';

const NEW = 'site,depth_m\nA,10\n';
const OLD = 'old\n';

const test = ferryTest({
  workspaceFiles: {
    'project/data.csv': NEW,
    'project/notes.txt': NEW,
    'project/fresh.txt': NEW,
    'dest/project/data.csv': OLD,
    'dest/project/notes.txt': OLD,
  },
});

test('a transfer onto files already there: "Choose per file…" shows both sides, and each file goes as chosen', async ({ page, ferry }) => {
  // what is there was changed earlier than the copies: "(newer)" marks the copy
  const earlier = new Date('2024-01-01T00:00:00Z');
  for (const file of ['data.csv', 'notes.txt']) await utimes(path.join(ferry.workspace, 'dest/project', file), earlier, earlier);
  await page.goto(ferry.appUrl);
  const left = pane(page, 'Left');
  const right = pane(page, 'Right');
  await expect(row(left, 'project')).toBeVisible();
  await choosePlace(right, 'Local folders');
  await openFolder(right, 'dest');
  await row(left, 'project').click();
  await left.getByRole('button', { name: 'Transfer' }).click();

  const ask = page.getByRole('dialog', { name: /already be there/ });
  await expect(ask.getByRole('group', { name: 'For all files' }).getByRole('button')).toHaveText(['Skip', 'Replace if different', 'Replace if newer', 'Keep both']);
  await ask.getByRole('button', { name: 'Choose per file…' }).click();

  const perFile = page.getByRole('dialog', { name: 'Choose per file' });
  const table = perFile.getByRole('table', { name: '2 files are already there' });
  await expect(table).toBeVisible();
  const data = table.getByRole('row', { name: /project\/data\.csv/ });
  await expect(data).toContainText(`${NEW.length} B`);
  await expect(data).toContainText(`${OLD.length} B`);
  await expect(data).toContainText('(newer)');
  await expectAccessible(page, 'duplicates per file');

  await perFile.getByRole('combobox', { name: 'Action for project/data.csv' }).selectOption({ label: 'Keep both' });
  await perFile.getByRole('combobox', { name: 'Action for project/notes.txt' }).selectOption({ label: 'Skip' });
  await perFile.getByRole('button', { name: 'Copy with these choices' }).click();
  await expect(perFile).toBeHidden();

  const job = jobs(page).getByRole('listitem').filter({ hasText: 'project' });
  await expect(job).toContainText('Done');
  const there = path.join(ferry.workspace, 'dest/project');
  expect((await readdir(there)).filter((name) => name !== 'ferry-provenance.json').sort()).toEqual(['data (2).csv', 'data.csv', 'fresh.txt', 'notes.txt']);
  expect(await readFile(path.join(there, 'data.csv'), 'utf8')).toBe(OLD);
  expect(await readFile(path.join(there, 'data (2).csv'), 'utf8')).toBe(NEW);
  expect(await readFile(path.join(there, 'notes.txt'), 'utf8')).toBe(OLD);
});
