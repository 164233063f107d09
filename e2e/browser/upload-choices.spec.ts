// Uploads decided like transfers, end to end in browser mode against a real `ferry serve`:
// files picked from the OS into a folder that already holds some of them, chosen per file in
// the duplicate dialog over both sides side by side (the upload's files described to POST
// …/conflicts/, the choices sent in its duplicate_choices field), then the files on disk as
// chosen; and, for a repository that keeps no folders (the Zenodo emulator of test/emulators),
// "Keep folders as" for an upload and a transfer, with the record's stored files as chosen.
import { createHash } from 'node:crypto';
import { mkdir, readFile, readdir, stat, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { expect, test as base } from '@playwright/test';
import { startZenodoEmulator, type ZenodoEmulator } from '../../test/emulators/zenodo/emulator.js';
import { expectAccessible } from '../support/a11y.js';
import { startServer, type RunningServer } from '../support/ferry-server.js';
import { choosePlace, grid, jobs, openFolder, pane, row, ui2Shots, watchCsp } from '../support/ui.js';

const NEW = 'site,depth_m\nA,10\n';
const OLD = 'old\n';
const STORED = new Date('2024-01-01T00:00:00Z');
const LATER = new Date('2026-06-01T00:00:00Z');

const test = base.extend<{ zenodo: ZenodoEmulator; ferry: RunningServer; outside: string }>({
  page: async ({ page }, use) => {
    const cspViolations = await watchCsp(page);
    await use(page);
    expect(cspViolations()).toEqual([]);
  },
  zenodo: async ({}, use) => {
    const emulator = await startZenodoEmulator();
    try {
      await use(emulator);
    } finally {
      await emulator.close();
    }
  },
  ferry: async ({ zenodo }, use) => {
    const server = await startServer({
      workspaceFiles: {
        'dest/data.csv': OLD,
        'dest/notes.txt': OLD,
        'dest/later.txt': OLD,
        'dest/same.txt': NEW,
        'Survey/readme.txt': 'Coastal survey.\n',
        'Survey/raw/run1.csv': NEW,
        'Survey/raw/deep/levels.csv': NEW,
      },
      extraArgs: ['--zenodo-url', zenodo.url],
    });
    try {
      const response = await fetch(`${server.url.replace(/\/?$/, '/')}app/tokens/zenodo`, {
        method: 'PUT',
        headers: { Authorization: `Bearer ${server.accessKey}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ token: 'zenodo-token' }),
      });
      expect(response.status).toBe(204);
      await use(server);
    } finally {
      await server.stop();
    }
  },
  // files "on the desktop": outside every place Ferry shows, picked as a person picks them
  outside: async ({ ferry }, use) => {
    const dir = path.join(path.dirname(ferry.workspace), 'desktop');
    await mkdir(path.join(dir, 'Survey upload/raw/deep'), { recursive: true });
    for (const [file, content] of Object.entries({ 'data.csv': NEW, 'notes.txt': NEW, 'later.txt': NEW, 'same.txt': NEW, 'fresh.txt': NEW })) {
      await writeFile(path.join(dir, file), content);
      await utimes(path.join(dir, file), LATER, LATER);
    }
    for (const [file, content] of Object.entries({ 'readme.txt': 'Uploaded survey.\n', 'raw/run1.csv': NEW, 'raw/deep/levels.csv': NEW })) {
      await writeFile(path.join(dir, 'Survey upload', file), content);
    }
    await use(dir);
  },
});

test('an upload onto files already there: "Choose per file…" shows both sides, and each file goes as chosen', async ({ page, ferry, outside }) => {
  // what is there was changed before the copies being uploaded: "(newer)" marks the copy
  for (const file of ['data.csv', 'notes.txt', 'later.txt', 'same.txt']) await utimes(path.join(ferry.workspace, 'dest', file), STORED, STORED);
  await page.goto(ferry.appUrl);
  // the app has loaded (the left pane lists the workspace) before a pane is made active
  await expect(row(pane(page, 'Left'), 'dest')).toBeVisible();
  const right = pane(page, 'Right');
  await choosePlace(right, 'Local folders');
  await openFolder(right, 'dest');
  await expect(row(right, 'data.csv')).toBeVisible();

  const described = page.waitForRequest((request) => request.method() === 'POST' && request.url().endsWith('/conflicts/'));
  await page.getByTestId('right-file-input').setInputFiles(['data.csv', 'notes.txt', 'later.txt', 'same.txt', 'fresh.txt'].map((file) => path.join(outside, file)));
  const ask = page.getByRole('dialog', { name: /already be there/ });
  await expect(ask.getByRole('group', { name: 'For all files' }).getByRole('button')).toHaveText(['Skip', 'Replace if different', 'Replace if newer', 'Keep both']);
  await ask.getByRole('button', { name: 'Choose per file…' }).click();
  // the upload's files described as the ZIP will hold them, no bytes sent
  const body = JSON.parse((await described).postData()!) as { files: { path: string; size: number; date_modified: string }[] };
  expect(body.files.map((file) => file.path).sort()).toEqual(['data.csv', 'fresh.txt', 'later.txt', 'notes.txt', 'same.txt']);
  const sha256 = createHash('sha256').update(NEW).digest('hex');
  expect(body.files.find((file) => file.path === 'data.csv')).toEqual({ path: 'data.csv', size: NEW.length, date_modified: LATER.toISOString(), hashes: { sha256 } });

  const perFile = page.getByRole('dialog', { name: 'Choose per file' });
  const table = perFile.getByRole('table', { name: '4 files are already there' });
  await expect(table).toBeVisible();
  const data = table.getByRole('row', { name: /data\.csv/ });
  await expect(data).toContainText(`${NEW.length} B`);
  await expect(data).toContainText(`${OLD.length} B`);
  await expect(data).toContainText('(newer)');
  // both sides' SHA-256 side by side: the file with the same bytes says so
  await expect(table.getByRole('row', { name: /same\.txt/ })).toContainText(`sha256 ${sha256.slice(0, 12)}…`);
  await expect(table.getByRole('row', { name: /same\.txt/ })).toContainText('(same content)');
  await expect(data).not.toContainText('(same content)');
  await expectAccessible(page, 'upload duplicates per file');
  await ui2Shots(page, 'upload-duplicates-per-file', { dark: true });

  await perFile.getByRole('combobox', { name: 'Action for data.csv' }).selectOption({ label: 'Keep both' });
  await perFile.getByRole('combobox', { name: 'Action for notes.txt' }).selectOption({ label: 'Skip' });
  await perFile.getByRole('combobox', { name: 'Action for later.txt' }).selectOption({ label: 'Replace if newer' });
  await perFile.getByRole('combobox', { name: 'Action for same.txt' }).selectOption({ label: 'Replace if different' });
  await perFile.getByRole('button', { name: 'Copy with these choices' }).click();
  await expect(perFile).toBeHidden();

  const job = jobs(page).getByRole('listitem').filter({ hasText: '5 files' });
  await expect(job).toContainText('Done');
  const there = path.join(ferry.workspace, 'dest');
  expect((await readdir(there)).filter((name) => name !== 'ferry-provenance.json').sort()).toEqual(['data (2).csv', 'data.csv', 'fresh.txt', 'later.txt', 'notes.txt', 'same.txt']);
  expect(await readFile(path.join(there, 'data.csv'), 'utf8')).toBe(OLD);
  expect(await readFile(path.join(there, 'data (2).csv'), 'utf8')).toBe(NEW);
  expect(await readFile(path.join(there, 'notes.txt'), 'utf8')).toBe(OLD);
  expect(await readFile(path.join(there, 'later.txt'), 'utf8')).toBe(NEW);
  expect(await readFile(path.join(there, 'fresh.txt'), 'utf8')).toBe(NEW);
  // the same bytes: "Replace if different" left it (its time stays the one it had)
  expect((await stat(path.join(there, 'same.txt'))).mtime.toISOString()).toBe(STORED.toISOString());
});

test('a flat repository: "Keep folders as" for an upload and a transfer with subfolders, remembered for the destination, reaches the record', async ({ page, ferry, zenodo, outside }) => {
  // two writes to the emulated Zenodo, each paced as the service paces them
  test.setTimeout(150_000);
  await page.goto(ferry.appUrl);
  const left = pane(page, 'Left');
  const right = pane(page, 'Right');
  await expect(row(left, 'Survey')).toBeVisible();
  await choosePlace(right, 'Zenodo');
  const stored = () => [...zenodo.state.records.values()].map((record) => record.files.map((file) => file.key).sort());

  // an upload of a folder with subfolders, at the top level: a new record
  await page.getByTestId('right-folder-input').setInputFiles(path.join(outside, 'Survey upload'));
  const ask = page.getByRole('dialog', { name: 'Keep folders as' });
  const modes = ask.getByRole('group', { name: 'Keep folders as' });
  await expect(modes.getByRole('radio', { name: /Flattened names/ })).toBeChecked();
  await expectAccessible(page, 'keep folders as');
  await ui2Shots(page, 'keep-folders-as', { dark: true });
  await modes.getByRole('radio', { name: /One ZIP per folder/ }).check();
  const uploaded = page.waitForRequest((request) => request.method() === 'POST' && request.url().endsWith('/api_v1/targets/zenodo/resources/'));
  await ask.getByRole('button', { name: 'Continue' }).click();
  expect((await uploaded).headers()['ferry-folders']).toBe('zip-per-folder');
  await expect(jobs(page).getByRole('listitem').filter({ hasText: 'Survey upload' })).toContainText('Done', { timeout: 50_000 });
  await expect.poll(stored).toEqual([['ferry-provenance.json', 'raw.zip', 'readme.txt']]);

  // a transfer of a folder with subfolders: the choice made for Zenodo is preselected
  await row(left, 'Survey').click();
  await grid(left).press('F5');
  await expect(modes.getByRole('radio', { name: /One ZIP per folder/ })).toBeChecked();
  await modes.getByRole('radio', { name: /One BagIt ZIP/ }).check();
  await ask.getByRole('button', { name: 'Continue' }).click();
  const review = page.getByRole('dialog', { name: 'Review the metadata' });
  await review.getByRole('button', { name: 'Go ahead' }).click();
  await expect(jobs(page).getByRole('listitem').filter({ hasText: 'Survey → Zenodo' })).toContainText('Done', { timeout: 50_000 });
  await expect.poll(stored).toEqual([['ferry-provenance.json', 'raw.zip', 'readme.txt'], ['Survey.zip', 'ferry-provenance.json']]);
});
