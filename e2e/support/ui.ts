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

/**
 * The UI pass's screenshots (playwright-report/ui2-screenshots/): the page at the two sizes
 * the desktop look is judged at, 1400×860 and 1024×700, and with `dark` once more in the
 * dark scheme at 1400×860. The viewport is put back afterwards.
 */
export async function ui2Shots(page: Page, name: string, options: { dark?: boolean } = {}): Promise<void> {
  const before = page.viewportSize();
  const dir = 'playwright-report/ui2-screenshots';
  for (const [width, height] of [
    [1400, 860],
    [1024, 700],
  ] as const) {
    await page.setViewportSize({ width, height });
    await page.screenshot({ path: `${dir}/${name}-${width}x${height}.png` });
  }
  if (options.dark) {
    await page.setViewportSize({ width: 1400, height: 860 });
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.screenshot({ path: `${dir}/${name}-dark-1400x860.png` });
    await page.emulateMedia({ colorScheme: null });
  }
  if (before) await page.setViewportSize(before);
}

export const places = (page: Page) => page.getByRole('navigation', { name: 'Places' });
/** the name of the place a pane shows (its heading) */
export const placeOf = (p: Locator) => p.locator('.pane-place');

/** Opens a place in a pane as a person does: make the pane active, then pick the place. */
export async function choosePlace(p: Locator, label: string): Promise<void> {
  await grid(p).focus();
  await places(p.page()).getByRole('button', { name: label, exact: true }).click();
  await expect(placeOf(p)).toHaveText(label);
}
