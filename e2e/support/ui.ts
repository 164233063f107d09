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
