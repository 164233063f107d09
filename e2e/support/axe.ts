// axe-core on the page as it is, light and dark: no serious or critical violation.
import AxeBuilder from '@axe-core/playwright';
import { expect, type Page } from '@playwright/test';

export async function expectAccessible(page: Page, screen: string): Promise<void> {
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    const result = await new AxeBuilder({ page }).analyze();
    const bad = result.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${screen} (${scheme}): ${v.id} — ${v.help}: ${v.nodes.map((n) => n.target.join(' ')).slice(0, 4).join(', ')}`);
    expect(bad, bad.join('\n')).toEqual([]);
  }
  await page.emulateMedia({ colorScheme: null });
}
