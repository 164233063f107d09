// "Add rclone remote" in Accounts (#20), against a real `ferry serve` and a real WebDAV server
// (`rclone serve webdav` on loopback): typed fields, never JSON; a remote that does not open is
// not added (its sentence shown, nothing listed); one that opens is a place at once; its
// password is never shown back, not in the page and not in the listing.
import AxeBuilder from '@axe-core/playwright';
import { expect, test as base } from '@playwright/test';
import { startServer, type RunningServer } from '../support/ferry-server.js';
import { places, ui2Shots } from '../support/ui.js';
import { rcloneUnavailableReason, startRcloneWebdav } from '../../test/webdav/rclone-webdav.js';
import type { RealWebdav } from '../../test/webdav/process.js';

// Without rclone there is no WebDAV server to start and no engine to add a remote to: the
// journey is skipped before its fixtures start, saying why.
const skip = rcloneUnavailableReason();
if (skip) console.log(`[rclone remotes form] skipped: ${skip}`);

const test = base.extend<{ ferry: RunningServer; dav: RealWebdav }>({
  ferry: async ({}, use) => {
    const server = await startServer({ workspaceFiles: { 'project/a.txt': 'a\n' } });
    try {
      await use(server);
    } finally {
      await server.stop();
    }
  },
  dav: async ({}, use) => {
    const dav = await startRcloneWebdav();
    try {
      await use(dav);
    } finally {
      await dav.stop();
    }
  },
});

test.skip(skip !== null, skip ?? '');

test('a WebDAV remote: wrong password is not added; the right one is a place, its password never shown back', async ({ page, ferry, dav }) => {
  const listed = async () => (await (await fetch(new URL('/app/rclone-remotes', ferry.url), { headers: { Authorization: `Bearer ${ferry.accessKey}` } })).json()) as { available: boolean; remotes: unknown[] };
  // rclone on PATH but not usable by this ferry serve (its engine did not start): said, then skipped
  const { available } = await listed();
  if (!available) console.log('[rclone remotes form] skipped: rclone is not available to this ferry serve');
  test.skip(!available, 'rclone is not available to this ferry serve');
  await page.goto(ferry.appUrl);
  await page.getByRole('button', { name: 'Accounts' }).click();
  const accounts = page.getByRole('dialog', { name: 'Accounts' });
  await accounts.getByRole('tab', { name: 'Add rclone remote' }).click();
  const form = accounts.getByRole('form', { name: 'Add rclone remote' });
  await form.getByLabel('Type').selectOption('webdav');
  await form.getByLabel('Name').fill('lab-dav');
  await form.getByLabel('URL').fill(dav.url);
  await form.getByLabel('Server').selectOption('other');
  await form.getByLabel('User (optional)').fill(dav.username);
  await form.getByLabel('Password (optional)').fill('wrong-password');
  await expect(form.getByLabel('Password (optional)')).toHaveAttribute('type', 'password');
  await form.getByRole('button', { name: 'Test and add' }).click();
  await expect(form.getByRole('alert')).toContainText('Not added (nothing was kept)');
  await ui2Shots(page, 'rclone-remote-refused', { dark: true });
  expect((await listed()).remotes).toEqual([]);

  await form.getByLabel('Password (optional)').fill(dav.password);
  await form.getByRole('button', { name: 'Test and add' }).click();
  await expect(form.getByRole('status')).toContainText('Added');
  await expect(form.getByLabel('Password (optional)')).toHaveValue('');
  expect(await page.content()).not.toContain(dav.password);
  const after = await listed();
  expect(after.remotes).toEqual([{ name: 'lab-dav', type: 'webdav', target: 'rclone-lab-dav' }]);
  expect(JSON.stringify(after)).not.toContain(dav.password);
  await expect(form.getByRole('list', { name: 'rclone remotes added in Ferry' })).toContainText('lab-dav');
  const axe = await new AxeBuilder({ page }).analyze();
  expect(axe.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id)).toEqual([]);
  await ui2Shots(page, 'rclone-remote-added', { dark: true });
  await page.keyboard.press('Escape');
  await expect(places(page).getByRole('button', { name: /lab-dav/ })).toBeVisible();
});
