// Issue #22, "a real transfer queue": settings (jobs at once, a bandwidth limit), pause and
// resume, a waiting job moved to run next, the transfer log, and clearing finished jobs —
// in the built renderer against a real `ferry serve`, in Chromium. Screenshots go to
// playwright-report/ui2-screenshots/queue-*.png (both sizes and dark).
import { randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { expect } from '@playwright/test';
import { ferryTest } from '../support/fixture.js';
import { choosePlace, jobs, openFolder, pane, row, ui2Shots } from '../support/ui.js';

const SLOW = randomBytes(2 * 1024 * 1024);

const test = ferryTest({
  workspaceFiles: { 'project/slow.bin': SLOW, 'project/a.csv': 'a\n1\n', 'project/b.csv': 'b\n2\n', 'dest/': '' },
});

test('the queue: one job at a time under a bandwidth limit, pause and resume, run next, log, clear finished', async ({ page, ferry }) => {
  await page.setViewportSize({ width: 1400, height: 860 });
  await page.goto(ferry.appUrl);
  const left = pane(page, 'Left');
  const right = pane(page, 'Right');
  await expect(row(left, 'project')).toBeVisible();
  const panel = jobs(page);

  // settings: one job at a time, 256 KiB/s, so 2 MiB take about eight seconds
  await panel.getByRole('button', { name: 'Queue settings' }).click();
  const form = panel.getByRole('form', { name: 'Queue settings' });
  await form.getByLabel('Jobs at once', { exact: true }).fill('1');
  await form.getByLabel('Bandwidth limit (MB/s)').fill('0.25');
  await ui2Shots(page, 'queue-settings', { dark: true });
  await form.getByRole('button', { name: 'Save' }).click();
  await expect(form).toBeHidden();
  await expect(panel.locator('.queue-summary')).toContainText('1 at once');
  await expect(panel.locator('.queue-summary')).toContainText('limited to');

  await openFolder(left, 'project');
  await choosePlace(right, 'Local folders');
  await openFolder(right, 'dest');
  for (const name of ['slow.bin', 'a.csv', 'b.csv']) {
    await row(left, name).click();
    await left.getByRole('button', { name: 'Transfer' }).click();
  }
  const slow = panel.getByRole('listitem').filter({ hasText: 'slow.bin' });
  const a = panel.getByRole('listitem').filter({ hasText: 'a.csv' });
  const b = panel.getByRole('listitem').filter({ hasText: 'b.csv' });
  await expect(slow).toContainText('Running');
  await expect(a).toContainText('1st in the queue');
  await expect(b).toContainText('2nd in the queue');

  // b jumps the line
  await b.getByRole('button', { name: /Run .* next/ }).click();
  await expect(b).toContainText('1st in the queue');
  await expect(a).toContainText('2nd in the queue');
  await ui2Shots(page, 'queue-waiting', { dark: true });

  // pausing the running job lets the waiting ones through, in the new order
  await slow.getByRole('button', { name: 'Pause' }).click();
  await expect(slow).toContainText('Paused');
  await expect(b).toContainText('Done', { timeout: 30_000 });
  await expect(a).toContainText('Done', { timeout: 30_000 });
  const order = (await (await page.request.get(new URL('/api_v1/jobs/', ferry.url).href, { headers: { Authorization: `Bearer ${ferry.accessKey}` } })).json()) as {
    report: { resources_created: string[] } | null;
    started: string;
  }[];
  const startedOf = (name: string) => order.find((job) => job.report?.resources_created.includes(name))!.started;
  expect(startedOf('b.csv') < startedOf('a.csv')).toBe(true);
  await ui2Shots(page, 'queue-paused', { dark: true });
  // nothing half-written is left while it waits: no partial file, no temporary
  expect((await readdir(path.join(ferry.workspace, 'dest'))).sort()).toEqual(['a.csv', 'b.csv', 'ferry-provenance.json']);

  // resumed, it finishes, and every byte is there
  await slow.getByRole('button', { name: 'Resume' }).click();
  await expect(slow).toContainText('Running');
  await expect(slow).toContainText('Done', { timeout: 60_000 });
  expect((await readFile(path.join(ferry.workspace, 'dest/slow.bin'))).equals(SLOW)).toBe(true);

  // the log says what happened to each file
  await slow.getByText('Log', { exact: true }).click();
  await expect(slow.getByRole('list', { name: 'Files in this job' })).toContainText('slow.bin — written');
  await ui2Shots(page, 'queue-log', { dark: true });

  await panel.getByRole('button', { name: /Clear finished \(3\)/ }).click();
  await expect(panel.getByRole('listitem')).toHaveCount(0);
  await expect(panel).toContainText('No jobs yet');
});
