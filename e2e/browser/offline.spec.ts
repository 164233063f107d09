// The offline library end to end, in browser mode against a real `ferry serve`: download a
// folder with "Keep offline", see the archive appear in "Downloaded ZIPs", browse it, verify
// it, and read the fixity in the Jobs region and the detail panel. No CSP violation allowed.
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { expect, test as base, type Locator } from '@playwright/test';
import { startServer, type RunningServer } from '../support/ferry-server.js';
import { grid, jobs, openFolder, pane, row, shot, watchCsp, withoutSavePicker } from '../support/ui.js';

const CSV = 'site,depth_m,temp_c\nA,10,4.2\nB,25,3.9\n';

const test = base.extend<{ ferry: RunningServer }>({
  ferry: async ({}, use) => {
    const server = await startServer({
      workspaceFiles: {
        'survey/data.csv': CSV,
        'survey/notes/readme.md': '# Notes\n',
        'survey/raw/cast-001.txt': 'depth 10 m\n',
      },
    });
    try {
      await use(server);
    } finally {
      await server.stop();
    }
  },
});

/** Into the archive "survey": its payload folder (data/survey/) is the archive itself, not shown twice. */
async function openArchiveFolder(p: Locator): Promise<void> {
  const crumbs = p.getByRole('navigation', { name: 'Location' }).getByRole('button', { name: 'survey' });
  await openFolder(p, 'survey');
  await expect(crumbs).toHaveCount(1);
  await expect(row(p, 'survey')).toHaveCount(0);
}

test('keep a download offline, browse it, verify it', async ({ page, ferry }, testInfo) => {
  const cspViolations = await watchCsp(page);
  await withoutSavePicker(page);
  await page.goto(ferry.appUrl);
  const left = pane(page, 'Left');
  const right = pane(page, 'Right');
  await expect(row(left, 'survey')).toBeVisible();
  // the right pane opens on the library, empty at first, saying how to fill it
  await expect(right.getByRole('combobox', { name: 'Target' })).toHaveValue('offline');
  await expect(right.getByText(/No downloaded ZIPs yet/)).toBeVisible();
  await shot(page, 'offline-01-empty-library');
  // look at the local folders on the right meanwhile (switched back to the library below)
  await right.getByRole('combobox', { name: 'Target' }).selectOption('local');
  await expect(row(right, 'survey')).toBeVisible();

  // download with Keep offline: the browser gets the ZIP, the library keeps a copy
  await row(left, 'survey').click();
  await left.getByRole('checkbox', { name: 'Keep offline' }).check();
  const downloading = page.waitForEvent('download');
  await left.getByRole('button', { name: 'Download' }).click();
  const download = await downloading;
  expect(download.suggestedFilename()).toBe('survey.zip');
  const saved = testInfo.outputPath('survey.zip');
  await download.saveAs(saved);
  expect((await readFile(saved)).subarray(0, 2).toString('latin1')).toBe('PK');
  // the browser's own download took it: Ferry says so rather than claiming it was saved
  await expect(left.getByText(/^survey\.zip was handed to the browser: .* A copy is kept in Downloaded ZIPs\.$/)).toBeVisible();

  // switch the other pane to the library: the kept archive is there
  await right.getByRole('combobox', { name: 'Target' }).selectOption({ label: 'Downloaded ZIPs' });
  await expect(right.getByRole('navigation', { name: 'Location' }).getByRole('button', { name: 'Downloaded ZIPs' })).toBeVisible();
  await expect(row(right, 'survey')).toBeVisible();
  await shot(page, 'offline-02-kept-in-library');

  // browse inside the archive: its files and folders at once (no second 'survey' level)
  await openArchiveFolder(right);
  await expect(row(right, 'data.csv')).toBeVisible();
  await expect(row(right, 'notes')).toBeVisible();
  await expect(row(right, 'raw')).toBeVisible();
  // no Verify inside an archive: it checks whole archives
  await expect(right.getByRole('button', { name: 'Verify' })).toBeDisabled();
  await row(right, 'data.csv').click();
  await grid(right).press('F3');
  const details = page.getByRole('complementary', { name: 'Details' });
  await expect(details.getByRole('heading', { name: 'data.csv' })).toBeVisible();
  await expect(details.getByRole('region', { name: 'Fixity' })).toContainText('Not verified yet');
  await shot(page, 'offline-03-inside-archive');

  // back to the top, select the archive, Verify
  await right.getByRole('navigation', { name: 'Location' }).getByRole('button', { name: 'Downloaded ZIPs' }).click();
  await row(right, 'survey').click();
  await expect(details.getByRole('heading', { name: 'survey' })).toBeVisible();
  await expect(details.getByRole('region', { name: 'Fixity' })).toContainText('Not verified yet.');
  await right.getByRole('button', { name: 'Verify' }).click();
  const job = jobs(page).getByRole('listitem').filter({ hasText: 'Verify survey' });
  await expect(job).toContainText('Done');
  await expect(job).toContainText('3 verified, 0 failed fixity.');
  await expect(job).toContainText('3/3 files');
  // the archive's detail now carries the verification
  await expect(details.getByRole('region', { name: 'Fixity' })).toContainText('All 3 files verified.');
  await expect(details.getByRole('region', { name: 'Fixity' })).toContainText('Last verified');
  await shot(page, 'offline-04-verified');

  // and each file says so
  await openArchiveFolder(right);
  await row(right, 'data.csv').click();
  await expect(details.getByRole('heading', { name: 'data.csv' })).toBeVisible();
  await expect(details.getByRole('region', { name: 'Fixity' })).toContainText('✓ Verified');
  await shot(page, 'offline-05-file-verified');

  expect(cspViolations()).toEqual([]);
});

test('a damaged archive in the library says so in its detail', async ({ page, ferry }) => {
  const cspViolations = await watchCsp(page);
  await mkdir(path.join(ferry.dataDir, 'library'), { recursive: true });
  await writeFile(path.join(ferry.dataDir, 'library', 'broken.zip'), Buffer.from('PK\u0003\u0004 this is not really a zip'));
  await page.goto(ferry.appUrl);
  const right = pane(page, 'Right');
  await expect(right.getByRole('combobox', { name: 'Target' })).toHaveValue('offline');
  await expect(row(right, 'broken')).toBeVisible();
  await row(right, 'broken').click();
  await grid(right).press('F3');
  const details = page.getByRole('complementary', { name: 'Details' });
  await expect(details.getByRole('alert')).toContainText('This archive is damaged');
  await shot(page, 'offline-06-damaged');
  expect(cspViolations()).toEqual([]);
});

test('a kept archive whose bytes changed fails fixity, file by file', async ({ page, ferry }) => {
  const cspViolations = await watchCsp(page);
  // random bytes do not compress, so the bag stores them as they are and one can be flipped
  const payload = randomBytes(16 * 1024);
  await mkdir(path.join(ferry.workspace, 'survey/raw'), { recursive: true });
  await writeFile(path.join(ferry.workspace, 'survey/raw/sonar.bin'), payload);
  await withoutSavePicker(page);
  await page.goto(ferry.appUrl);
  const left = pane(page, 'Left');
  const right = pane(page, 'Right');
  await row(left, 'survey').click();
  await left.getByRole('checkbox', { name: 'Keep offline' }).check();
  const downloading = page.waitForEvent('download');
  await left.getByRole('button', { name: 'Download' }).click();
  await (await downloading).cancel(); // the browser copy is not needed; the library has its own
  // the library pane lists the kept archive by itself, no Refresh pressed
  await expect(row(right, 'survey')).toBeVisible();

  // a bit flips on disk
  const libraryDir = path.join(ferry.dataDir, 'library');
  const [archiveName] = (await readdir(libraryDir)).filter((name) => name.endsWith('.zip'));
  const archivePath = path.join(libraryDir, archiveName!);
  const bytes = await readFile(archivePath);
  const at = bytes.indexOf(payload.subarray(4096, 4160));
  expect(at, 'the payload is stored uncompressed in the kept ZIP').toBeGreaterThan(0);
  bytes[at + 10] = bytes[at + 10]! ^ 0xff;
  await writeFile(archivePath, bytes);

  await row(right, 'survey').click();
  await right.getByRole('button', { name: 'Verify' }).click();
  const job = jobs(page).getByRole('listitem').filter({ hasText: 'Verify survey' });
  await expect(job).toContainText('Done');
  await expect(job).toContainText('3 verified, 1 failed fixity.');
  await expect(job.getByRole('listitem').first()).toContainText('survey/raw/sonar.bin');
  await grid(right).press('F3');
  const details = page.getByRole('complementary', { name: 'Details' });
  await expect(details.getByRole('region', { name: 'Fixity' })).toContainText('3 verified, 1 failed fixity.');
  await shot(page, 'offline-07-failed-fixity-job');

  await openArchiveFolder(right);
  await row(right, 'raw').dblclick();
  await row(right, 'sonar.bin').click();
  await expect(details.getByRole('heading', { name: 'sonar.bin' })).toBeVisible();
  await expect(details.getByRole('region', { name: 'Fixity' })).toContainText('✗ Failed fixity');
  await shot(page, 'offline-08-failed-fixity-file');
  expect(cspViolations()).toEqual([]);
});
