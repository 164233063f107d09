// The fixture most browser journeys share: a real `ferry serve` over a seeded workspace for
// each test, and a page that fails the test on any Content Security Policy violation
// (style-src 'self': no inline styles).
import { expect, test as base } from '@playwright/test';
import { startServer, type RunningServer } from './ferry-server.js';
import { watchCsp } from './ui.js';

export function ferryTest(options: Parameters<typeof startServer>[0] = {}) {
  return base.extend<{ ferry: RunningServer }>({
    page: async ({ page }, use) => {
      const cspViolations = await watchCsp(page);
      await use(page);
      expect(cspViolations()).toEqual([]);
    },
    ferry: async ({}, use) => {
      const server = await startServer(options);
      try {
        await use(server);
      } finally {
        await server.stop();
      }
    },
  });
}
