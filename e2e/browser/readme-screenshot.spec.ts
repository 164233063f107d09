// The README picture: both panes with realistic content, details open, a finished job.
// Writes docs/screenshot.png, so it runs only when asked: FERRY_README_SCREENSHOT=1.
import { expect, test as base } from '@playwright/test';
import path from 'node:path';
import { ROOT, startServer, type RunningServer } from '../support/ferry-server.js';
import { grid, jobs, openFolder, pane, placeOf, row, withoutSavePicker } from '../support/ui.js';

const wanted = process.env.FERRY_README_SCREENSHOT === '1';
if (!wanted) console.log('[readme-screenshot] skipped: set FERRY_README_SCREENSHOT=1 to regenerate docs/screenshot.png');

const csv = (rows: number) =>
  'site,date,depth_m,temp_c,salinity_psu\n' +
  Array.from({ length: rows }, (_, i) => `S${i % 12},2026-0${(i % 9) + 1}-1${i % 9},${(i % 40) + 2},${(3 + (i % 17) / 10).toFixed(1)},34.${i % 9}`).join('\n');

const test = base.extend<{ ferry: RunningServer }>({
  ferry: async ({}, use) => {
    const server = await startServer({
      workspaceFiles: {
        'coral-survey-2026/README.md': '# Coral survey 2026\n\nCTD casts and reef transects.\n',
        'coral-survey-2026/sites.csv': csv(40),
        'coral-survey-2026/ctd/cast-001.csv': csv(400),
        'coral-survey-2026/ctd/cast-002.csv': csv(380),
        'coral-survey-2026/ctd/cast-003.csv': csv(420),
        'coral-survey-2026/transects/T1-photos/': '',
        'coral-survey-2026/transects/T1.csv': csv(90),
        'coral-survey-2026/transects/T2.csv': csv(120),
        'coral-survey-2026/analysis/temperature.ipynb': '{"cells": []}\n',
        'coral-survey-2026/analysis/figures/': '',
        'coral-survey-2026/LICENSE': 'CC-BY-4.0\n',
        'lab-share/2025-archive/': '',
        'lab-share/instruments.json': '{"ctd": "SBE 19plus"}\n',
        'lab-share/protocols.pdf': Buffer.alloc(184_320, 7),
      },
    });
    try {
      await use(server);
    } finally {
      await server.stop();
    }
  },
});

test('README screenshot of the two panes', async ({ page, ferry }) => {
  test.skip(!wanted, 'set FERRY_README_SCREENSHOT=1 to regenerate docs/screenshot.png');
  await withoutSavePicker(page);
  await page.setViewportSize({ width: 1680, height: 900 });
  await page.emulateMedia({ colorScheme: 'light' });
  await page.goto(ferry.appUrl);
  const left = pane(page, 'Left');
  const right = pane(page, 'Right');

  // keep a download of the survey offline; it lands in "Downloaded ZIPs" on the right
  await row(left, 'coral-survey-2026').click();
  await left.getByRole('checkbox', { name: 'Keep offline' }).check();
  const downloading = page.waitForEvent('download');
  await left.getByRole('button', { name: 'Download' }).click();
  await (await downloading).cancel();
  await left.getByRole('button', { name: 'Dismiss' }).click();
  await left.getByRole('checkbox', { name: 'Keep offline' }).uncheck();
  await expect(placeOf(right)).toHaveText('Downloaded ZIPs');

  // verify the kept archive
  await row(right, 'coral-survey-2026').click();
  await right.getByRole('button', { name: 'Verify' }).click();
  await expect(jobs(page).getByRole('listitem').filter({ hasText: 'Verify coral-survey-2026' })).toContainText('0 failed fixity');

  // left: the local folder; right: inside the archive (its files at once), a verified file in the details
  await openFolder(left, 'coral-survey-2026');
  await openFolder(right, 'coral-survey-2026');
  await expect(row(right, 'ctd')).toBeVisible();
  await row(right, 'ctd').dblclick();
  await expect(row(right, 'cast-001.csv')).toBeVisible();
  await row(right, 'cast-001.csv').click();
  await grid(right).press('F3');
  const details = page.getByRole('complementary', { name: 'Details' });
  await expect(details.getByRole('heading', { name: 'cast-001.csv' })).toBeVisible();
  await expect(details.getByRole('region', { name: 'Fixity' })).toContainText('Verified');
  await page.mouse.move(0, 0);
  await page.screenshot({ path: path.join(ROOT, 'docs/screenshot.png') });
});
