// Accounts: a form per service. "Test" tries the details through the core (a listing of the
// top level, the token in the request body, never stored) against faithful emulators from
// test/emulators; a failed test shows the service's sentence and saves nothing; Save keeps
// exactly what passed; no secret lands in web storage or stays in the page.
import { expect, test as base, type Page } from '@playwright/test';
import { startDataverseEmulator, type DataverseEmulator } from '../../test/emulators/dataverse/emulator.js';
import { startOsfEmulator, type OsfEmulator } from '../../test/emulators/osf/emulator.js';
import { startServer, type RunningServer } from '../support/ferry-server.js';
import { choosePlace, pane, row, shot, ui2Shots } from '../support/ui.js';

const test = base.extend<{ osf: OsfEmulator; dataverse: DataverseEmulator; ferry: RunningServer }>({
  osf: async ({}, use) => {
    const emulator = await startOsfEmulator();
    try {
      await use(emulator);
    } finally {
      await emulator.close();
    }
  },
  dataverse: async ({}, use) => {
    const emulator = await startDataverseEmulator();
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

async function storedTokens(ferry: RunningServer): Promise<Record<string, boolean>> {
  const response = await fetch(`${ferry.url.replace(/\/?$/, '/')}app/session`, { headers: { Authorization: `Bearer ${ferry.accessKey}` } });
  const session = (await response.json()) as { targets: { name: string; has_stored_token: boolean }[] };
  return Object.fromEntries(session.targets.map((t) => [t.name, t.has_stored_token]));
}

async function webStorage(page: Page): Promise<string> {
  return page.evaluate(() => {
    const web = globalThis as unknown as { localStorage: object; sessionStorage: object };
    return JSON.stringify({ ...web.localStorage }) + JSON.stringify({ ...web.sessionStorage });
  });
}

async function openAccounts(page: Page, service: string) {
  await page.getByRole('button', { name: 'Accounts' }).click();
  const dialog = page.getByRole('dialog', { name: 'Accounts' });
  await dialog.getByRole('tab', { name: service }).click();
  return { dialog, form: dialog.getByRole('form', { name: `${service} account` }) };
}

test('a bad OSF token shows the service sentence next to the form and saves nothing', async ({ page, ferry }) => {
  await page.goto(ferry.appUrl);
  await expect(row(pane(page, 'Left'), 'project')).toBeVisible();
  const { dialog, form } = await openAccounts(page, 'OSF');
  await expect(form.getByRole('link', { name: 'Make a token' })).toHaveAttribute('href', 'https://osf.io/settings/tokens');
  await expect(form).toContainText('osf.full_write');
  const secret = 'bogus-token-0123456789';
  await form.getByLabel('Token').fill(secret);
  await form.getByRole('button', { name: 'Test' }).click();
  const alert = form.getByRole('alert');
  await expect(alert).toBeVisible();
  await expect(alert).toContainText(/token/i);
  await expect(alert).not.toContainText(secret);
  await expect(form.getByRole('button', { name: 'Save' })).toBeDisabled();
  await shot(page, '08-bad-token');
  await ui2Shots(page, 'accounts-osf-failed', { dark: true });
  expect(await webStorage(page)).not.toContain(secret);
  // a failed test saved nothing: the core holds no OSF token
  expect((await storedTokens(ferry)).osf).toBe(false);

  // browsing OSF with no token fails with a sentence and offers Accounts, opened on OSF
  await dialog.getByRole('button', { name: 'Close' }).click();
  const right = pane(page, 'Right');
  await choosePlace(right, 'OSF');
  await expect(right.getByRole('alert')).toContainText(/token/i);
  await right.getByRole('button', { name: 'Open Accounts' }).click();
  await expect(dialog.getByRole('tab', { name: 'OSF' })).toHaveAttribute('aria-selected', 'true');
  await shot(page, '09-osf-needs-token');
});

test('Dataverse: installation, token and collection as fields; Save keeps only what passed', async ({ page, ferry, dataverse }) => {
  dataverse.state.addDataset(1, 'Field survey', { 'survey.csv': 'a,b\n1,2\n' });
  await page.goto(ferry.appUrl);
  await expect(row(pane(page, 'Left'), 'project')).toBeVisible();
  const { dialog, form } = await openAccounts(page, 'Dataverse');
  await form.getByLabel('Installation URL').fill(dataverse.url);
  await form.getByLabel('API token').fill('dv-token-wrong');
  await form.getByRole('button', { name: 'Test' }).click();
  await expect(form.getByRole('alert')).toBeVisible();
  await expect(form.getByRole('button', { name: 'Save' })).toBeDisabled();
  expect((await storedTokens(ferry)).dataverse).toBe(false);

  await form.getByLabel('API token').fill('dv-token-1111');
  await form.getByRole('button', { name: 'Test' }).click();
  await expect(form.getByRole('status')).toContainText('Nothing is saved yet');
  expect((await storedTokens(ferry)).dataverse).toBe(false);
  await ui2Shots(page, 'accounts-dataverse-passed');
  await form.getByRole('button', { name: 'Save' }).click();
  await expect(form.getByRole('status')).toContainText('Saved');
  expect((await storedTokens(ferry)).dataverse).toBe(true);
  await expect(form.getByLabel('API token')).toHaveValue('');
  expect(await page.content()).not.toContain('dv-token-1111');
  expect(await webStorage(page)).not.toContain('dv-token-1111');
  await expect(dialog.getByRole('tab', { name: /Dataverse/ }).getByLabel('account stored')).toBeVisible();

  await dialog.getByRole('button', { name: 'Close' }).click();
  const right = pane(page, 'Right');
  await choosePlace(right, 'Dataverse');
  await expect(row(right, 'Field survey')).toBeVisible();
});
