// Finding things the way a person (or a screen reader) does: by role and accessible name.
import { expect, type Locator, type Page } from '@playwright/test';

export const pane = (page: Page, side: 'Left' | 'Right') => page.getByRole('region', { name: `${side} pane` });
export const grid = (p: Locator) => p.getByRole('grid', { name: 'Resources' });
export const row = (p: Locator, title: string) =>
  grid(p).getByRole('row').filter({ has: p.page().locator('.title-text', { hasText: new RegExp(`^${escape(title)}$`) }) });
export const jobs = (page: Page) => page.getByRole('region', { name: 'Jobs' });

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export async function openFolder(p: Locator, title: string): Promise<void> {
  await row(p, title).dblclick();
  await expect(p.getByRole('navigation', { name: 'Location' }).getByRole('button', { name: title })).toBeVisible();
}

export async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: `test-results/${name}.png` });
}

/**
 * Collects Content Security Policy violations: Chromium's console messages about the policy,
 * and every `securitypolicyviolation` event (logged to the console by an init script so it
 * is caught even when Chromium stays quiet). Call before the first `goto`.
 */
export async function watchCsp(page: Page): Promise<() => string[]> {
  const seen: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) seen.push(message.text());
  });
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) => {
      console.error(`Content Security Policy violation: ${event.violatedDirective} blocked ${event.blockedURI || 'inline'}`);
    });
  });
  return () => seen;
}

/**
 * Browser mode saves a download with the File System Access picker when the browser has one;
 * Playwright cannot drive that native dialog, so a test removes it and the page falls back
 * to a plain browser download (which Playwright can accept).
 */
export async function withoutSavePicker(page: Page): Promise<void> {
  await page.addInitScript(() => {
    delete (window as { showSaveFilePicker?: unknown }).showSaveFilePicker;
  });
}
