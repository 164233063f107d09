// The Details panel's preview, end to end against a real `ferry serve`: text shown as text
// (markup and all), a CSV as a table, PNG and SVG images through <img> under the app's CSP
// (the fixture fails the test on any CSP violation), and an axe pass, light and dark.
import { expect, type Page } from '@playwright/test';
import { expectAccessible } from '../support/a11y.js';
import { ferryTest } from '../support/fixture.js';
import { openFolder, pane, row } from '../support/ui.js';

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
const SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20"><script>document.title="svg ran"</script><rect width="40" height="20" fill="teal"/></svg>';

const test = ferryTest({
  workspaceFiles: {
    'project/page.html': '<h1 id="injected">Not a heading</h1>\n<script>document.title="html ran"</script>\n',
    'project/data.csv': 'site,depth_m,temp_c\nA,10,4.2\nB,25,"3,9"\n',
    'project/dot.png': PNG,
    'project/figure.svg': SVG,
  },
});

const details = (page: Page) => page.getByRole('complementary', { name: 'Details' });
const preview = (page: Page) => details(page).getByRole('region', { name: 'Preview' });

test('Details previews text as text, a CSV as a table, and images through <img>', async ({ page, ferry }) => {
  await page.goto(ferry.appUrl);
  const left = pane(page, 'Left');
  await expect(row(left, 'project')).toBeVisible();
  await openFolder(left, 'project');
  await page.getByRole('button', { name: 'Details' }).click();

  await row(left, 'page.html').click();
  const text = preview(page).getByLabel('First lines of page.html');
  await expect(text).toContainText('<h1 id="injected">Not a heading</h1>');
  await expect(page.locator('#injected')).toHaveCount(0);

  await row(left, 'data.csv').click();
  const table = preview(page).getByRole('table');
  await expect(table.getByRole('columnheader')).toHaveText(['site', 'depth_m', 'temp_c']);
  await expect(table.getByRole('row').last()).toHaveText('B253,9');
  await expectAccessible(page, 'csv preview');

  await row(left, 'dot.png').click();
  const png = preview(page).getByRole('img', { name: 'Preview of dot.png' });
  await expect(png).toBeVisible();
  await expect.poll(() => png.evaluate((img: HTMLImageElement) => img.naturalWidth)).toBe(1);

  await row(left, 'figure.svg').click();
  const svg = preview(page).getByRole('img', { name: 'Preview of figure.svg' });
  await expect.poll(() => svg.evaluate((img: HTMLImageElement) => img.naturalWidth)).toBe(40);
  await expect(details(page).locator('svg script')).toHaveCount(0);
  expect(await page.title()).not.toMatch(/ran/);
  await expectAccessible(page, 'image preview');
});
