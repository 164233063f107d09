// First start in browser mode: `ferry serve` never prints the access key, so a page opened
// without `#key=…` shows the sign-in screen. Pasting the key from endpoint.json signs in;
// the key never reaches the address bar or localStorage.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { expect, test as base } from '@playwright/test';
import { startServer, type RunningServer } from '../support/ferry-server.js';
import { pane, row, shot, watchCsp } from '../support/ui.js';

const test = base.extend<{ ferry: RunningServer }>({
  ferry: async ({}, use) => {
    const server = await startServer({ workspaceFiles: { 'project/data.csv': 'a,b\n1,2\n' } });
    try {
      await use(server);
    } finally {
      await server.stop();
    }
  },
});

test('without the key in the address, the sign-in screen explains and takes a pasted key', async ({ page, ferry }) => {
  const cspViolations = await watchCsp(page);
  expect(ferry.output()).not.toContain(ferry.accessKey); // the server never prints it
  await page.goto(ferry.url);
  await expect(page.getByRole('heading', { name: 'Sign in to Ferry' })).toBeVisible();
  const screen = page.getByRole('main');
  await expect(screen).toContainText('ferry open');
  await expect(screen).toContainText('node bin/ferry.js open');
  await expect(screen).toContainText('~/.config/ferry/endpoint.json');
  await expect(screen).toContainText('access_key');
  await expect(screen).not.toContainText('printed when it started');
  const field = page.getByLabel('Access key', { exact: true });
  await expect(field).toHaveAttribute('type', 'password');
  await shot(page, 'sign-in-01-screen');

  // a wrong key: a sentence, no app
  await field.fill('not-the-key');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('alert')).toContainText('That key was not accepted');
  await shot(page, 'sign-in-02-wrong-key');

  // the key as it stands in endpoint.json, quotes and all
  const endpoint = JSON.parse(await readFile(path.join(ferry.dataDir, 'endpoint.json'), 'utf8')) as { access_key: string };
  await field.fill(`"${endpoint.access_key}"`);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(row(pane(page, 'Left'), 'project')).toBeVisible();
  await expect(pane(page, 'Right')).toBeVisible();
  expect(page.url()).not.toContain(ferry.accessKey);
  const local = await page.evaluate(() => JSON.stringify({ ...localStorage }));
  expect(local).not.toContain(ferry.accessKey);
  await shot(page, 'sign-in-03-signed-in');

  // a reload in the same tab stays signed in
  await page.reload();
  await expect(row(pane(page, 'Left'), 'project')).toBeVisible();
  expect(cspViolations()).toEqual([]);
});

test('a key that no longer opens this Ferry leads back to sign-in, saying why', async ({ page, ferry }) => {
  await page.goto(`${ferry.url.replace(/\/?$/, '/')}#key=stale-key-from-an-old-link`);
  await expect(page.getByRole('heading', { name: 'Sign in to Ferry' })).toBeVisible();
  await expect(page.getByRole('status')).toContainText('not accepted');
  expect(page.url()).not.toContain('stale-key');
});

test('the CSP guard itself catches an inline style (so a clean run means something)', async ({ page, ferry }) => {
  const cspViolations = await watchCsp(page);
  await page.goto(ferry.url);
  await expect(page.getByRole('heading', { name: 'Sign in to Ferry' })).toBeVisible();
  await page.evaluate(() => {
    const style = document.createElement('style');
    style.textContent = 'body { color: red; }';
    document.head.append(style);
  });
  await expect.poll(() => cspViolations().length).toBeGreaterThan(0);
});
