// The README picture: both panes with realistic content, details open, a finished job.
// Writes docs/screenshot.png, so it runs only when asked: FERRY_README_SCREENSHOT=1.
import { expect, test as base } from '@playwright/test';
import path from 'node:path';
import { ROOT, startServer, type RunningServer } from '../support/ferry-server.js';
import { grid, jobs, openFolder, pane, row } from '../support/ui.js';

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
  await page.setViewportSize({ width: 1440, height: 880 });
  await page.emulateMedia({ colorScheme: 'light' });
  await page.goto(ferry.appUrl);
  const left = pane(page, 'Left');
  const right = pane(page, 'Right');
  await openFolder(left, 'coral-survey-2026');
  await openFolder(left, 'ctd');
  await right.getByRole('combobox', { name: 'Target' }).selectOption('local');
  await openFolder(right, 'lab-share');
  await row(left, 'cast-002.csv').dragTo(grid(right));
  await expect(jobs(page).getByRole('listitem').filter({ hasText: 'cast-002.csv' })).toContainText('Done');
  await expect(row(right, 'cast-002.csv')).toBeVisible();
  await row(left, 'cast-001.csv').click();
  await grid(left).press('F3');
  await expect(page.getByRole('complementary', { name: 'Details' }).locator('code[data-hash]').first()).toBeVisible();
  await page.screenshot({ path: path.join(ROOT, 'docs/screenshot.png') });
});
