// `npm run test:stress`: the long variants of the reliability tests (issue #9) — the
// hostile-ZIP corpus in full, request fuzzing, 50 kills, 60 s of load — then a
// coverage-guided fuzz run of the ZIP/bag reader for a fixed time. `npm test` runs a short
// variant of each. Options: --fuzz-seconds N (default 300), --no-fuzz, --no-vitest.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : fallback;
};
const fuzzSeconds = Number(option('--fuzz-seconds', process.env.FERRY_FUZZ_SECONDS ?? '300'));
const env = { ...process.env, FERRY_STRESS: '1' };
const failures = [];

function step(title, command, commandArgs) {
  console.log(`\n=== ${title}: ${[command, ...commandArgs].join(' ')}`);
  const started = Date.now();
  const result = spawnSync(command, commandArgs, { stdio: 'inherit', env });
  console.log(`=== ${title}: ${result.status === 0 ? 'passed' : 'FAILED'} in ${Math.round((Date.now() - started) / 1000)} s`);
  if (result.status !== 0) failures.push(title);
}

// Servers started from the built CLI (crash, load tests) must run today's code: build every time.
step('Build', 'npx', ['electron-vite', 'build']);
if (!args.includes('--no-vitest')) {
  step('Long variants (Vitest, FERRY_STRESS=1)', 'npx', ['vitest', 'run', '--project', 'node', 'test/stress']);
}
if (!args.includes('--no-fuzz') && existsSync('test/fuzz/run.mjs')) {
  step(`Coverage-guided fuzzing (${fuzzSeconds} s, shared between the targets)`, process.execPath, ['test/fuzz/run.mjs', '--seconds', String(fuzzSeconds)]);
}
console.log(failures.length ? `\nstress: FAILED (${failures.join(', ')})` : '\nstress: all passed');
process.exit(failures.length ? 1 : 0);
