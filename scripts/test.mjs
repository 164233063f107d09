// `npm test`: every check the project has, in the order that fails fastest, then one
// closing line "tests: N passed, N failed, N skipped" over Vitest and Playwright together.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const CHROMIUM = process.env.FERRY_CHROMIUM ?? '/usr/bin/chromium';
const quick = process.argv.includes('--unit');

// The keychain tests want a real Secret Service. Without a D-Bus session, run again inside
// a private one with an unlocked gnome-keyring (scripts/with-keyring.sh) when it's installed.
const haveKeyring = ['dbus-run-session', 'gnome-keyring-daemon'].every((tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0);
if (!process.env.DBUS_SESSION_BUS_ADDRESS && !process.env.FERRY_NO_KEYRING && haveKeyring) {
  const again = spawnSync('scripts/with-keyring.sh', [process.execPath, ...process.argv.slice(1)], { stdio: 'inherit' });
  process.exit(again.status ?? 1);
}
mkdirSync('test-results', { recursive: true });
// Every server the tests start logs here (not under test-results/, which Playwright empties);
// at the end no access key or token may appear in any of it.
const serverLogs = process.env.FERRY_TEST_LOG_DIR || mkdtempSync(path.join(os.tmpdir(), 'ferry-test-logs-'));
process.env.FERRY_TEST_LOG_DIR = serverLogs;

function step(title, command, args, env = {}) {
  console.log(`\n=== ${title}: ${[command, ...args].join(' ')}`);
  const result = spawnSync(command, args, { stdio: 'inherit', env: { ...process.env, ...env } });
  return result.status === 0;
}

function readJson(file) {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return null;
  }
}

/** "FAILED file › test: first line of the error" for each failed test in the reports given. */
function failedTests(...reports) {
  const firstLine = (message) => String(message ?? '').split('\n').find((line) => line.trim()) ?? '';
  const lines = [];
  for (const report of reports) {
    // Vitest's JSON report: files, each with its tests (a file that failed to load has none).
    for (const file of report?.testResults ?? []) {
      const where = path.relative(process.cwd(), file.name ?? '');
      const failed = (file.assertionResults ?? []).filter((test) => test.status === 'failed');
      for (const test of failed) lines.push(`FAILED ${where} › ${test.fullName}: ${firstLine(test.failureMessages?.[0])}`);
      if (file.status === 'failed' && failed.length === 0) lines.push(`FAILED ${where}: ${firstLine(file.message)}`);
    }
    // Playwright's JSON report: suites of specs, nested.
    const specs = (suite) => [...(suite.specs ?? []), ...(suite.suites ?? []).flatMap(specs)];
    for (const spec of (report?.suites ?? []).flatMap(specs)) {
      if (spec.ok !== false) continue;
      const error = spec.tests?.flatMap((test) => test.results ?? []).find((result) => result.error)?.error;
      lines.push(`FAILED ${spec.file}:${spec.line} › ${spec.title}: ${firstLine(error?.message)}`);
    }
  }
  return lines;
}

const counts = { passed: 0, failed: 0, skipped: 0 };
const failures = [];
const mustPass = (name, ok) => {
  if (!ok) failures.push(name);
  return ok;
};

mustPass('layer boundaries', step('Layer boundaries', 'node', ['scripts/check-boundaries.mjs']));
mustPass('lint', step('Lint', 'npx', ['eslint', '.']));
mustPass('typecheck', step('Type check', 'npm', ['run', '--silent', 'typecheck']));
const built = mustPass('build', step('Build', 'npx', ['electron-vite', 'build']));

step('Unit and integration tests (Vitest)', 'npx', ['vitest', 'run', '--reporter=default', '--reporter=json', '--outputFile.json=test-results/vitest.json']);
const vitest = readJson('test-results/vitest.json');
if (vitest) {
  counts.passed += vitest.numPassedTests;
  counts.failed += vitest.numFailedTests;
  counts.skipped += vitest.numPendingTests + (vitest.numTodoTests ?? 0);
  if (vitest.numFailedTests > 0 || vitest.numFailedTestSuites > 0) failures.push('vitest');
} else failures.push('vitest (no report)');

// The byte-exactness checks once more with every fast path off (electron/core/fast-paths.ts,
// docs/performance.md): a fast path may change how fast, never what is written. Tests that
// assert a fast path's own mechanism are not in this list; these check bytes and hashes.
const BYTE_EXACTNESS_TESTS = [
  'test/api/download.test.ts',
  'test/api/download-large.test.ts',
  'test/api/upload.test.ts',
  'test/api/transfer.test.ts',
  'test/api/offline.test.ts',
  'test/api/cross-target.test.ts',
  'test/api/resources.test.ts',
  'electron/core/bag/bag-writer.test.ts',
  'electron/core/bag/bag-writer.small-files.test.ts',
  'electron/core/bag/zip64.test.ts',
  'electron/core/targets/local/local-write.test.ts',
  'electron/core/targets/offline/offline-target.test.ts',
  'electron/core/targets/webdav/parallel-write.test.ts',
].filter((file) => existsSync(file));
step('Byte-exactness with every fast path off (FERRY_FAST_PATHS=off)', 'npx', ['vitest', 'run', '--project', 'node', '--reporter=default', '--reporter=json', '--outputFile.json=test-results/vitest-fast-paths-off.json', ...BYTE_EXACTNESS_TESTS], { FERRY_FAST_PATHS: 'off' });
const slowPaths = readJson('test-results/vitest-fast-paths-off.json');
if (slowPaths) {
  counts.passed += slowPaths.numPassedTests;
  counts.failed += slowPaths.numFailedTests;
  counts.skipped += slowPaths.numPendingTests + (slowPaths.numTodoTests ?? 0);
  if (slowPaths.numFailedTests > 0 || slowPaths.numFailedTestSuites > 0) failures.push('vitest with fast paths off');
} else failures.push('vitest with fast paths off (no report)');

if (quick) {
  console.log('\nUI tests not run (--unit).');
} else if (!existsSync(CHROMIUM)) {
  console.log(`\nUI tests skipped: no Chromium at ${CHROMIUM} (apt-get install chromium, or set FERRY_CHROMIUM).`);
} else if (!built) {
  failures.push('UI tests (build failed)');
} else {
  step('UI tests (Playwright, Chromium)', 'npx', ['playwright', 'test', '--reporter=list,json'], { PLAYWRIGHT_JSON_OUTPUT_NAME: 'test-results/playwright.json' });
  const playwright = readJson('test-results/playwright.json');
  if (playwright?.stats) {
    counts.passed += playwright.stats.expected + (playwright.stats.flaky ?? 0);
    counts.failed += playwright.stats.unexpected;
    counts.skipped += playwright.stats.skipped;
    if (playwright.stats.unexpected > 0) failures.push('playwright');
  } else failures.push('playwright (no report)');
}

if (mustPass('log leaks', step('No key or token in any server log', 'node', ['scripts/check-log-leaks.mjs', serverLogs]))) {
  rmSync(serverLogs, { recursive: true, force: true });
} else console.log(`Server logs kept in ${serverLogs}`);

// The failed tests by name, last, so the tail of a CI log says which test failed and why.
for (const line of failedTests(vitest, slowPaths, readJson('test-results/playwright.json'))) console.log(line);
console.log(failures.length ? `\nFailed: ${failures.join(', ')}` : '\nAll checks passed.');
console.log(`tests: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped`);
process.exit(failures.length ? 1 : 0);
