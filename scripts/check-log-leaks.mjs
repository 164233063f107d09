#!/usr/bin/env node
// Issue #9: "no token or key in any log line or error body — grep the logs of the whole test
// run for the test tokens". Run after a test run made with FERRY_TEST_LOG_DIR=<dir> (the
// harness, test/support/ferry-process.ts and e2e/support/ferry-server.ts leave every server's
// log there, and the access keys they used in <dir>/secrets.list):
//
//   node scripts/check-log-leaks.mjs <dir> [--allow-empty]
//
// Looks in every file of <dir> (except secrets.list) for every recorded key and every
// literal test token written in the tests' sources, and fails on any hit. A hit is printed
// with the file, line number and the secret masked — never the secret itself.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SECRETS_FILE = 'secrets.list';
/** Where tests keep their tokens: every test and emulator source. */
const SOURCE_DIRS = ['test', 'e2e', 'electron', 'renderer', 'shared'];
const TEST_FILE = /(\.test\.tsx?|\.spec\.ts)$|^(test|e2e)\//;

/**
 * Values the patterns catch that are not secrets: names of headers and keychain accounts,
 * storage keys, placeholders. Kept short and explicit.
 */
const NOT_SECRETS = new Set([
  // header names
  'service-source-token',
  'service-destination-token',
  'duplicate-file-action',
  'private-token',
  'x-auth-token',
  'authorization',
  // keychain account, JSON and query field names
  'access-key',
  'access_key',
  'access_token',
  'page_token',
  'has_stored_token',
  'refresh_token',
  'token_type',
  'secret-tool',
  'secrets.list',
]);

/** A literal string that looks like a credential a test made up (no spaces, at least 6 characters). */
function plausibleToken(value) {
  if (value.length < 6 || value.length > 512) return false;
  if (/\s/.test(value) || value.includes('${')) return false;
  if (NOT_SECRETS.has(value.toLowerCase())) return false;
  if (!/[0-9_.-]/.test(value) && value.length < 20) return false; // a plain word ('undefined'), not a made-up credential
  if (/^ferry\./.test(value) || /^token:/.test(value)) return false; // storage keys, keychain account names
  if (/^(https?:)?\/\//.test(value) || value.startsWith('/')) return false; // URLs and paths
  if (/\.[a-z]{2,4}$/i.test(value)) return false; // file names ('secret.txt')
  return true;
}

const QUOTED = String.raw`(['"\x60])([^'"\x60\n]{6,512})\1`;
const PATTERNS = [
  // const TOKEN = '…', secret: '…', accessKey = "…", 'token-x': '…'
  new RegExp(String.raw`(?<![\w$])[\w$]*(?:token|Token|TOKEN|secret|Secret|SECRET|password|Password|PASSWORD|apiKey|ApiKey|API_KEY|accessKey|AccessKey|ACCESS_KEY|\bKEY|_KEY|privateKey)[\w$]*['"]?\s*[:=]\s*${QUOTED}`, 'g'),
  // header values: 'service-source-token': '…', authorization: 'Bearer …' / 'token …'
  new RegExp(String.raw`['"]?(?:service-(?:source|destination)-token|private-token|x-auth-token)['"]?\s*:\s*${QUOTED}`, 'gi'),
  new RegExp(String.raw`(?:Bearer|token)\s+([A-Za-z0-9._~+/=-]{8,512})(?=['"\x60])`, 'g'),
  // any literal that names itself a credential: 'tok-bob', 'glpat-0', 'secret-token-123', 'ghp_x'
  new RegExp(String.raw`(['"\x60])((?=[^'"\x60\n]*(?:tok|secret|key|passw|glpat|ghp_|gho_))(?=[^'"\x60\n]*[0-9_-])[A-Za-z0-9._~+/=-]{6,512})\1`, 'gi'),
];

function* walk(dir) {
  let names;
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const full = path.join(dir, name);
    const info = statSync(full);
    if (info.isDirectory()) yield* walk(full);
    else yield full;
  }
}

/** The literal tokens written in the tests (and emulators), with where each was found. */
export function literalTestTokens(root = ROOT) {
  const found = new Map();
  for (const top of SOURCE_DIRS) {
    for (const file of walk(path.join(root, top))) {
      const relative = path.relative(root, file).split(path.sep).join('/');
      if (!/\.(ts|tsx|mjs|js)$/.test(relative) || !TEST_FILE.test(relative)) continue;
      const text = readFileSync(file, 'utf8');
      for (const pattern of PATTERNS) {
        for (const match of text.matchAll(pattern)) {
          const value = match[2] ?? match[1];
          if (value && plausibleToken(value) && !found.has(value)) found.set(value, relative);
        }
      }
    }
  }
  return found;
}

/** Shows that a secret was found without printing it: its first 4 characters and length. */
export const mask = (secret) => `${secret.slice(0, 4)}…(${secret.length} chars)`;

export function checkLogs(dir, { allowEmpty = false, root = ROOT } = {}) {
  const recorded = existsSync(path.join(dir, SECRETS_FILE))
    ? readFileSync(path.join(dir, SECRETS_FILE), 'utf8').split('\n').map((line) => line.trim()).filter(Boolean)
    : [];
  const literal = literalTestTokens(root);
  const secrets = new Map();
  for (const secret of recorded) secrets.set(secret, 'an access key a test server used');
  for (const [secret, source] of literal) if (!secrets.has(secret)) secrets.set(secret, `a token literal in ${source}`);

  const logs = [...walk(dir)].filter((file) => path.basename(file) !== SECRETS_FILE);
  const hits = [];
  let lines = 0;
  let bytes = 0;
  for (const file of logs) {
    const text = readFileSync(file, 'utf8');
    bytes += text.length;
    const fileLines = text.split('\n');
    lines += fileLines.length;
    for (const [secret, what] of secrets) {
      if (!text.includes(secret)) continue;
      fileLines.forEach((line, index) => {
        if (line.includes(secret)) hits.push(`${path.relative(dir, file)}:${index + 1}: ${what} (${mask(secret)}): ${line.split(secret).join('<SECRET>').slice(0, 300)}`);
      });
    }
  }
  const problems = [...hits];
  if (!logs.length && !allowEmpty) problems.push(`no logs in ${dir}: was FERRY_TEST_LOG_DIR set for the test run?`);
  if (!recorded.length && !allowEmpty) problems.push(`no ${SECRETS_FILE} in ${dir}: no test server recorded its access key`);
  return { logs: logs.length, lines, bytes, recorded: new Set(recorded).size, literal: literal.size, hits, problems };
}

const invokedDirectly = process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) {
  const args = process.argv.slice(2);
  const dir = args.find((arg) => !arg.startsWith('--'));
  if (!dir) {
    console.error('Usage: node scripts/check-log-leaks.mjs <log dir> [--allow-empty]');
    process.exit(2);
  }
  const result = checkLogs(path.resolve(dir), { allowEmpty: args.includes('--allow-empty') });
  const summary = `${result.logs} log files, ${result.lines} lines (${(result.bytes / 1024 / 1024).toFixed(1)} MiB), ${result.recorded} recorded keys, ${result.literal} token literals from the tests`;
  if (result.problems.length) {
    console.error(`log leak check FAILED (${summary}):`);
    for (const problem of result.problems) console.error(`  ${problem}`);
    process.exit(1);
  }
  console.log(`log leak check: no key or token in ${summary}`);
  console.log(`FIGURE: log leaks: 0 hits for ${result.recorded + result.literal} secrets in ${result.logs} server logs (${result.lines} lines) of the test run`);
}
