// Job outcomes end to end, in browser mode against a real `ferry serve`: a transfer out of the
// offline library of an archive with a bad CRC-32 ends amber ("Done with errors") with the
// damaged file listed and not written; "Retry failed files" on it, still damaged, ends red
// ("Failed": nothing arrived); the archive repaired, "Retry failed files" writes the file and
// ends green. Green is only ever shown for a job in which every file arrived and checked.
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect, test as base, type Locator } from '@playwright/test';
import { startServer, type RunningServer } from '../support/ferry-server.js';
import { grid, jobs, openFolder, pane, row, shot, watchCsp } from '../support/ui.js';

const GOOD = 'site,depth_m\nA,10\n';
const BAD = 'cast,temp_c\n001,4.2\n002,3.9\n003,4.0\n';

const test = base.extend<{ ferry: RunningServer }>({
  ferry: async ({}, use) => {
    const server = await startServer({ workspaceFiles: { 'dest/': '' } });
    try {
      await use(server);
    } finally {
      await server.stop();
    }
  },
});

/** A stored ZIP of results/good.csv and results/bad.csv in the library; `damaged`: one byte of bad.csv flipped (its CRC-32 fails). */
async function putArchive(libraryDir: string, damaged: boolean): Promise<void> {
  const work = await mkdtemp(path.join(os.tmpdir(), 'ferry-e2e-zip-'));
  await mkdir(path.join(work, 'results'));
  await writeFile(path.join(work, 'results/good.csv'), GOOD);
  await writeFile(path.join(work, 'results/bad.csv'), BAD);
  const zip = path.join(work, 'damaged.zip');
  execFileSync('zip', ['-q', '-0', '-X', '-r', zip, 'results'], { cwd: work });
  const bytes = await readFile(zip);
  if (damaged) {
    const at = bytes.indexOf(Buffer.from(BAD));
    expect(at).toBeGreaterThan(0);
    bytes[at + 5] = bytes[at + 5]! ^ 0x01;
  }
  await mkdir(libraryDir, { recursive: true });
  await writeFile(path.join(libraryDir, 'damaged.zip'), bytes);
  await rm(work, { recursive: true, force: true });
}

const colorOf = (status: Locator) => status.evaluate((element) => getComputedStyle(element).color);

test('a transfer with a damaged file is amber and lists it; Retry failed files runs only that file', async ({ page, ferry }) => {
  const cspViolations = await watchCsp(page);
  const libraryDir = path.join(ferry.dataDir, 'library');
  await putArchive(libraryDir, true);
  await page.goto(ferry.appUrl);
  const left = pane(page, 'Left');
  const right = pane(page, 'Right');
  await expect(right.getByRole('combobox', { name: 'Target' })).toHaveValue('offline');
  await expect(row(right, 'damaged')).toBeVisible();
  await openFolder(left, 'dest');

  // the archive, from the library into a local folder
  await row(right, 'damaged').dragTo(grid(left));
  const first = jobs(page).getByRole('listitem').filter({ hasText: 'damaged' }).first();
  await expect(first).toContainText('Done with errors');
  const amber = await colorOf(first.locator('.job-status'));
  await expect(first.getByRole('list', { name: 'Failed files' })).toContainText('damaged/results/bad.csv');
  await expect(first.getByRole('list', { name: 'Failed files' })).toContainText('does not match its CRC-32 in the ZIP');
  await expect(first).toContainText('1 file failed');
  await expect(first).not.toContainText('Nothing needed to change');
  await shot(page, 'outcomes-01-completed-with-errors');
  expect((await readdir(path.join(ferry.workspace, 'dest/damaged/results'))).sort()).toEqual(['good.csv']);

  // retried while still damaged: nothing arrives, so the retry is red
  await first.getByRole('button', { name: 'Retry failed files' }).click();
  const retry = jobs(page).getByRole('listitem').filter({ hasText: 'Retry failed files:' }).first();
  await expect(retry).toContainText('Failed');
  await expect(retry).toContainText('Nothing arrived');
  await expect(retry.getByRole('list', { name: 'Failed files' })).toContainText('damaged/results/bad.csv');
  const red = await colorOf(retry.locator('.job-status'));
  await shot(page, 'outcomes-02-retry-failed');

  // repaired: the retry writes that one file where it belongs, and only it
  await putArchive(libraryDir, false);
  await writeFile(path.join(ferry.workspace, 'dest/damaged/results/good.csv'), 'edited since the first run\n');
  await retry.getByRole('button', { name: 'Retry failed files' }).click();
  const done = jobs(page).getByRole('listitem').filter({ hasText: 'Retry failed files:' }).filter({ hasText: '1 created' });
  await expect(done).toContainText('Done');
  await expect(done).not.toContainText('with errors');
  const green = await colorOf(done.locator('.job-status'));
  await shot(page, 'outcomes-03-retry-succeeded');
  expect(await readFile(path.join(ferry.workspace, 'dest/damaged/results/bad.csv'), 'utf8')).toBe(BAD);
  expect(await readFile(path.join(ferry.workspace, 'dest/damaged/results/good.csv'), 'utf8')).toBe('edited since the first run\n');

  // three distinct tones: amber, red, green
  expect(new Set([amber, red, green]).size).toBe(3);
  expect(amber).toBe('rgb(154, 91, 0)');
  expect(red).toBe('rgb(179, 38, 30)');
  expect(green).toBe('rgb(29, 122, 61)');
  expect(cspViolations()).toEqual([]);
});
