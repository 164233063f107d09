// Accounts: a bogus OSF token, tested against the OSF emulator (a faithful model of the
// OSF API from test/emulators), gives a sentence a person can act on — and the token never
// lands in web storage.
import { expect, test as base } from '@playwright/test';
import { startOsfEmulator, type OsfEmulator } from '../../test/emulators/osf/emulator.js';
import { startServer, type RunningServer } from '../support/ferry-server.js';
import { pane, row, shot } from '../support/ui.js';

const test = base.extend<{ osf: OsfEmulator; ferry: RunningServer }>({
  osf: async ({}, use) => {
    const emulator = await startOsfEmulator();
    try {
      await use(emulator);
    } finally {
      await emulator.close();
    }
  },
  ferry: async ({ osf }, use) => {
    const server = await startServer({ workspaceFiles: { 'project/a.txt': 'a' }, extraArgs: ['--osf-api-url', osf.apiUrl] });
    try {
      await use(server);
    } finally {
      await server.stop();
    }
  },
});

test('a bad OSF token shows a readable error next to the form', async ({ page, ferry }) => {
  await page.goto(ferry.appUrl);
  await expect(row(pane(page, 'Left'), 'project')).toBeVisible();
  await page.getByRole('button', { name: 'Accounts' }).click();
  const dialog = page.getByRole('dialog', { name: 'Accounts' });
  await expect(dialog).toBeVisible();
  const form = dialog.getByRole('form', { name: 'OSF token' });
  const secret = 'bogus-token-0123456789';
  await form.getByLabel('Token').fill(secret);
  await form.getByRole('button', { name: 'Test token' }).click();
  const alert = form.getByRole('alert');
  await expect(alert).toBeVisible();
  await expect(alert).toContainText(/token/i);
  await expect(alert).not.toContainText(secret);
  await shot(page, '08-bad-token');
  const storage = await page.evaluate(() => {
    const web = globalThis as unknown as { localStorage: object; sessionStorage: object };
    return JSON.stringify({ ...web.localStorage }) + JSON.stringify({ ...web.sessionStorage });
  });
  expect(storage).not.toContain(secret);

  // browsing OSF with that token fails with the same kind of sentence and offers Accounts
  await dialog.getByRole('button', { name: 'Close' }).click();
  const right = pane(page, 'Right');
  await right.getByRole('combobox', { name: 'Target' }).selectOption('osf');
  await expect(right.getByRole('alert')).toContainText(/token/i);
  await expect(right.getByRole('button', { name: 'Open Accounts' })).toBeVisible();
  await shot(page, '09-osf-needs-token');
});
