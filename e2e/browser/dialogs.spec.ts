// axe on the dialogs the other journeys leave out, light and dark, against a real `ferry serve`
// with the OSF and Zenodo emulators of test/emulators: the duplicate question, the metadata
// review before a new Zenodo record (and that an edit reaches the transfer's body), and the
// confirmation before a delete on a remote service.
import { expect, test as base, type Page } from '@playwright/test';
import { startOsfEmulator, type OsfEmulator } from '../../test/emulators/osf/emulator.js';
import { startZenodoEmulator, type ZenodoEmulator } from '../../test/emulators/zenodo/emulator.js';
import { expectAccessible } from '../support/a11y.js';
import { startServer, type RunningServer } from '../support/ferry-server.js';
import { choosePlace, grid, openFolder, pane, row, watchCsp } from '../support/ui.js';

const CITATION = ['cff-version: 1.2.0', 'message: Cite it.', 'title: Coastal Survey', 'authors:', '  - family-names: Lovelace', '    given-names: Ada', ''].join('\n');

const test = base.extend<{ osf: OsfEmulator; zenodo: ZenodoEmulator; osfToken: string; ferry: RunningServer }>({
  page: async ({ page }, use) => {
    const cspViolations = await watchCsp(page);
    await use(page);
    expect(cspViolations()).toEqual([]);
  },
  osf: async ({}, use) => {
    const emulator = await startOsfEmulator();
    try {
      await use(emulator);
    } finally {
      await emulator.close();
    }
  },
  osfToken: async ({ osf }, use) => {
    const user = osf.state.addUser('Ada Lovelace');
    const node = osf.state.addNode({ title: 'Field notes', owner: user.id });
    osf.state.addFile(node.id, 'log.txt', 'calm\n');
    await use(osf.state.addToken(user.id));
  },
  zenodo: async ({}, use) => {
    const emulator = await startZenodoEmulator();
    try {
      await use(emulator);
    } finally {
      await emulator.close();
    }
  },
  ferry: async ({ osf, zenodo, osfToken }, use) => {
    const server = await startServer({
      workspaceFiles: { 'project/data.csv': 'site,depth_m\nA,10\n', 'project/CITATION.cff': CITATION, 'dest/project/data.csv': 'old\n' },
      extraArgs: ['--osf-api-url', osf.apiUrl, '--zenodo-url', zenodo.url],
    });
    try {
      for (const [target, token] of [['osf', osfToken], ['zenodo', 'zenodo-token']] as const) {
        const response = await fetch(`${server.url.replace(/\/?$/, '/')}app/tokens/${target}`, {
          method: 'PUT',
          headers: { Authorization: `Bearer ${server.accessKey}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({ token }),
        });
        expect(response.status).toBe(204);
      }
      await use(server);
    } finally {
      await server.stop();
    }
  },
});

async function openApp(page: Page, ferry: RunningServer) {
  await page.goto(ferry.appUrl);
  await expect(row(pane(page, 'Left'), 'project')).toBeVisible();
}

test('the duplicate question passes axe, light and dark', async ({ page, ferry }) => {
  await openApp(page, ferry);
  const right = pane(page, 'Right');
  await choosePlace(right, 'Local folders');
  await openFolder(right, 'dest');
  await row(pane(page, 'Left'), 'project').click();
  await grid(pane(page, 'Left')).press('F5');
  const dialog = page.getByRole('dialog', { name: 'Some files may already be there' });
  await expect(dialog).toBeVisible();
  await expectAccessible(page, 'duplicate dialog');
  await page.keyboard.press('Escape');
  await expect(dialog).toHaveCount(0);
});

test("the metadata review passes axe, shows the source's metadata, and an edit goes with the transfer", async ({ page, ferry, zenodo }) => {
  await openApp(page, ferry);
  await choosePlace(pane(page, 'Right'), 'Zenodo');
  await row(pane(page, 'Left'), 'project').click();
  await grid(pane(page, 'Left')).press('F5');
  const dialog = page.getByRole('dialog', { name: 'Review the metadata' });
  await expect(dialog.getByLabel('Title')).toHaveValue('Coastal Survey');
  await expect(dialog.getByLabel('Creators')).toHaveValue('Ada Lovelace');
  await expectAccessible(page, 'metadata review');

  await dialog.getByLabel('Keywords').fill('ocean, salinity');
  await expectAccessible(page, 'metadata review, edited');
  const sent = page.waitForRequest((r) => r.method() === 'POST' && r.url().endsWith('/api_v1/targets/zenodo/resources/'));
  await dialog.getByRole('button', { name: 'Go ahead' }).click();
  const body = JSON.parse((await sent).postData()!) as { metadata?: { title?: string; keywords?: string[] } };
  expect(body.metadata).toMatchObject({ title: 'Coastal Survey', keywords: ['ocean', 'salinity'] });
  // the new Zenodo draft is described with the edit (the records API's subjects) as soon as it is made
  await expect.poll(() => [...zenodo.state.records.values()].map((record) => record.metadata.subjects)).toEqual([[{ subject: 'ocean' }, { subject: 'salinity' }]]);
});

test('the confirmation before a delete on a remote service passes axe, and Cancel deletes nothing', async ({ page, ferry, osf }) => {
  await openApp(page, ferry);
  const right = pane(page, 'Right');
  await choosePlace(right, 'OSF');
  await openFolder(right, 'Field notes');
  await openFolder(right, 'osfstorage');
  await row(right, 'log.txt').click();
  await grid(right).press('Delete');
  const dialog = page.getByRole('dialog');
  await expect(dialog).toContainText('log.txt');
  await expectAccessible(page, 'remote delete confirmation');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await expect(dialog).toHaveCount(0);
  await expect(row(right, 'log.txt')).toBeVisible();
  expect([...osf.state.files.values()].map((file) => file.name)).toContain('log.txt');
});
