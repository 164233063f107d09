import { defineConfig } from '@playwright/test';

// UI tests: browser mode against a real `ferry serve` (e2e/browser), and the Electron app
// where an Electron binary exists (e2e/electron). Chromium is Debian's package: browsers
// cannot be downloaded here. Run `npm run build` first.
export default defineConfig({
  testDir: 'e2e',
  outputDir: 'test-results',
  timeout: 60_000,
  expect: { timeout: 15_000 },
  fullyParallel: false,
  workers: 1, // two shared cores; each test starts its own server
  retries: 0,
  reporter: [['list']],
  use: {
    viewport: { width: 1360, height: 860 },
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
    launchOptions: {
      executablePath: process.env.FERRY_CHROMIUM ?? '/usr/bin/chromium',
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    },
  },
  projects: [
    { name: 'browser', testMatch: 'browser/**/*.spec.ts' },
    { name: 'electron', testMatch: 'electron/**/*.spec.ts' },
  ],
});
