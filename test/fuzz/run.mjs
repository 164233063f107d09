// Coverage-guided fuzzing of Ferry's ZIP/bag readers with Jazzer.js (libFuzzer), for a fixed
// time. See test/fuzz/README.md.
//
//   node test/fuzz/run.mjs --seconds N [--target NAME]... [--update-corpus]
//   node test/fuzz/run.mjs --minimize-corpus [--target NAME]...
//   (--entry FILE: fuzz through another entry module, e.g. one applying a proposed fix first)
//
// Each target fuzzes for its share of N seconds, starting from a temp copy of its committed
// corpus (test/fuzz/corpus/<target>/) plus its regression inputs (test/fuzz/findings/<target>/).
// A finding (crash, unexpected error, timeout, out of memory) is saved to
// test/fuzz/findings/pending/<target>/ and makes the exit code 1; fuzzing then goes on for
// the rest of the share (libFuzzer itself stops at the first). --update-corpus merges the
// inputs that found new coverage back into the committed corpus, minimised (libFuzzer
// -merge=1 into an empty folder); --minimize-corpus does only that. One line per target:
//   FIGURE: fuzz: <target> <execs> executions in <s> s, <n> corpus entries, <k> findings
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, createWriteStream, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..', '..');
const require = createRequire(import.meta.url);
const TARGETS = ['upload-reader', 'offline-archive'];
/** libFuzzer stops at a finding: fuzzing starts again (same grown corpus) for what is left of the share, this many times at most. */
const MAX_RESTARTS = 4;

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  return at >= 0 && args[at + 1] !== undefined ? args[at + 1] : fallback;
};
const chosen = args.flatMap((arg, i) => (args[i - 1] === '--target' ? [arg] : []));
const targets = chosen.length ? chosen : TARGETS;
for (const target of targets) if (!TARGETS.includes(target)) fail(`unknown target ${target}; the targets are ${TARGETS.join(', ')}`);
const seconds = Number(option('--seconds', '60'));
const minimizeOnly = args.includes('--minimize-corpus');
const updateCorpus = args.includes('--update-corpus') || minimizeOnly;
/** per input: a ZIP read should take milliseconds; this is a hang */
const timeoutMs = Number(option('--timeout-ms', '10000'));
/** another entry module (e.g. one that applies a proposed fix first); default entry.ts */
const entry = option('--entry', join(here, 'entry.ts'));
const rssLimitMb = Number(option('--rss-limit-mb', '1536'));
const maxLen = Number(option('--max-len', '32768'));
if (!minimizeOnly && !(seconds > 0)) fail('--seconds must be a positive number');

function fail(message) {
  console.error(`fuzz: ${message}`);
  process.exit(2);
}

const work = mkdtempSync(join(tmpdir(), 'ferry-fuzz-'));
let interrupted = false;
process.on('SIGINT', () => {
  interrupted = true;
});

try {
  const bundle = await buildBundle(join(work, 'bundle.cjs'));
  if (!bundle) process.exitCode = 2;
  let findingsTotal = 0;
  const share = Math.max(1, Math.floor(seconds / targets.length));
  for (const target of bundle ? targets : []) {
    if (interrupted) break;
    if (minimizeOnly) {
      await minimize(bundle, target, []);
      continue;
    }
    const result = await fuzzTarget(bundle, target, share);
    findingsTotal += result.findings.length;
    console.log(`FIGURE: fuzz: ${target} ${result.execs} executions in ${result.seconds} s, ${result.corpusEntries} corpus entries, ${result.findings.length} findings`);
    for (const finding of result.findings) console.log(`fuzz: ${target}: finding saved as ${finding}`);
    if (updateCorpus) await minimize(bundle, target, [result.corpus]);
  }
  if (bundle) process.exitCode = findingsTotal > 0 || interrupted ? 1 : 0;
} finally {
  rmSync(work, { recursive: true, force: true });
}

/** The targets and the code they reach (Ferry's TypeScript, yauzl) in one CommonJS file, which Jazzer.js instruments as it loads. */
async function buildBundle(outfile) {
  // esbuild comes with tsx/vite/electron-vite, all devDependencies of the project
  const esbuild = await import('esbuild');
  // the compute threads' script, embedded as the app's build embeds it (electron/core/compute/worker-source.ts)
  const computeWorker = esbuild.build({
    entryPoints: [join(here, '../../electron/core/compute/compute-worker.ts')],
    bundle: true,
    write: false,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    logLevel: 'silent',
  });
  const built = computeWorker.then((worker) =>
    esbuild.build({
      entryPoints: [entry],
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      outfile,
      sourcemap: 'inline',
      logLevel: 'silent',
      define: { __FERRY_COMPUTE_WORKER__: JSON.stringify(worker.outputFiles[0].text) },
    }),
  );
  try {
    await built;
  } catch (error) {
    console.error(`fuzz: the fuzz targets could not be bundled (does the code type-check?):\n${error.message}`);
    return null;
  }
  return outfile;
}

function filesIn(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => statSync(join(dir, name)).isFile() && !name.startsWith('.') && name !== 'README.md')
    .map((name) => join(dir, name));
}

function copyInto(files, dir) {
  mkdirSync(dir, { recursive: true });
  for (const file of files) copyFileSync(file, join(dir, file.split(/[\\/]/).pop()));
}

/** `node jazzer <bundle> <corpus dirs> [options] -- <libFuzzer flags>`, output to a log. */
function jazzer(target, positional, jazzerOptions, libFuzzerFlags, logFile) {
  const cli = require.resolve('@jazzer.js/core/dist/cli.js');
  const scratch = join(work, target, 'scratch');
  mkdirSync(scratch, { recursive: true });
  const commandArgs = [cli, ...positional, ...jazzerOptions, '--', ...libFuzzerFlags];
  // in NODE_OPTIONS, not the command line: libFuzzer's merge re-runs the command Jazzer.js
  // rebuilds from process.argv (without node's own flags) in a child process, which needs it too
  const compat = `--import=${pathToFileURL(join(here, 'support', 'jazzer-compat.mjs')).href}`;
  const nodeOptions = [process.env.NODE_OPTIONS, compat].filter(Boolean).join(' ');
  return new Promise((resolve) => {
    const log = createWriteStream(logFile);
    const child = spawn(process.execPath, commandArgs, {
      cwd: work,
      env: { ...process.env, NODE_OPTIONS: nodeOptions, FERRY_FUZZ_TARGET: target, FERRY_FUZZ_SCRATCH: scratch },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.pipe(log, { end: false });
    child.stderr.pipe(log, { end: false });
    child.on('close', (code, signal) => log.end(() => resolve({ code, signal })));
  });
}

async function fuzzTarget(bundle, target, share) {
  const committed = join(here, 'corpus', target);
  const regressions = join(here, 'findings', target);
  const corpus = join(work, target, 'corpus');
  const artifacts = join(work, target, 'artifacts');
  const pending = join(here, 'findings', 'pending', target);
  copyInto(filesIn(committed), corpus);
  copyInto(filesIn(regressions), corpus);
  mkdirSync(artifacts, { recursive: true });
  const started = Date.now();
  const findings = [];
  const known = new Set();
  let execs = 0;
  for (let attempt = 0; attempt <= MAX_RESTARTS && !interrupted; attempt++) {
    const left = share - Math.round((Date.now() - started) / 1000);
    if (attempt > 0 && left < 5) break;
    const logFile = join(work, target, `jazzer-${attempt}.log`);
    const before = new Set(filesIn(artifacts));
    const { code, signal } = await jazzer(
      target,
      [bundle, corpus],
      ['--timeout', String(timeoutMs)],
      [
        `-max_total_time=${Math.max(1, left)}`,
        `-rss_limit_mb=${rssLimitMb}`,
        `-max_len=${maxLen}`,
        `-dict=${join(here, 'zip.dict')}`,
        `-artifact_prefix=${artifacts}/`,
        '-print_final_stats=1',
      ],
      logFile,
    );
    const log = readFileSync(logFile, 'utf8');
    // the final stats, or after a finding (no stats printed) the last progress line's count
    const progress = [...log.matchAll(/^#(\d+)\s/gm)].map((match) => Number(match[1]));
    execs += Number(/stat::number_of_executed_units:\s*(\d+)/.exec(log)?.[1] ?? Math.max(0, ...progress));
    for (const line of log.split('\n')) if (line.startsWith('fuzz: known finding')) known.add(line.slice('fuzz: '.length));

    const found = [];
    for (const file of filesIn(artifacts)) {
      const name = file.split(/[\\/]/).pop();
      if (before.has(file) || !/^(crash|timeout|oom|leak)-/.test(name)) continue;
      mkdirSync(pending, { recursive: true });
      copyFileSync(file, join(pending, name));
      found.push(relative(repo, join(pending, name)));
    }
    // exited badly without writing an input: the target itself could not start, or libFuzzer died
    if (code !== 0 && found.length === 0 && !interrupted) found.push(`(no input saved: jazzer exited with ${signal ?? `code ${code}`})`);
    if (found.length === 0) break;
    findings.push(...found);
    mkdirSync(pending, { recursive: true });
    const kept = join(pending, `jazzer-${new Date().toISOString().replace(/[:.]/g, '-')}.log`);
    copyFileSync(logFile, kept);
    console.log(`fuzz: ${target}: the fuzzer's report (full log: ${relative(repo, kept)}):`);
    console.log(tail(log, 40));
    if (code !== 0 && found[0].startsWith('(')) break; // it cannot run: no point starting again
  }
  for (const line of known) console.log(`fuzz: ${target}: ${line}`);
  const seconds = Math.round((Date.now() - started) / 1000);
  return { execs, seconds, corpusEntries: filesIn(corpus).length, findings, corpus };
}

/** libFuzzer -merge=1 into an empty folder: the smallest set of inputs with the same coverage, which then replaces the committed corpus. */
async function minimize(bundle, target, extraDirs) {
  const committed = join(here, 'corpus', target);
  const merged = join(work, target, 'merged');
  rmSync(merged, { recursive: true, force: true });
  mkdirSync(merged, { recursive: true });
  const logFile = join(work, target, 'merge.log');
  const { code } = await jazzer(target, [bundle, merged, committed, ...extraDirs], ['--timeout', String(timeoutMs)], ['-merge=1', `-rss_limit_mb=${rssLimitMb}`, `-max_len=${maxLen}`], logFile);
  const kept = filesIn(merged);
  if (code !== 0 || kept.length === 0) {
    console.log(`fuzz: ${target}: corpus not updated, the merge failed (exit ${code}):\n${tail(readFileSync(logFile, 'utf8'), 30)}`);
    return;
  }
  const before = filesIn(committed);
  // libFuzzer names what it keeps by the SHA-1 of its bytes: a seed kept keeps its own name
  const names = new Map(before.map((file) => [createHash('sha1').update(readFileSync(file)).digest('hex'), file.split(/[\\/]/).pop()]));
  // replace in one step: the new set lands beside the old, then takes its name
  const next = `${committed}.next`;
  rmSync(next, { recursive: true, force: true });
  mkdirSync(next, { recursive: true });
  for (const file of kept) {
    const name = file.split(/[\\/]/).pop();
    copyFileSync(file, join(next, names.get(name) ?? name));
  }
  const old = `${committed}.old`;
  rmSync(old, { recursive: true, force: true });
  if (existsSync(committed)) renameSync(committed, old);
  renameSync(next, committed);
  rmSync(old, { recursive: true, force: true });
  const bytes = kept.reduce((sum, file) => sum + statSync(file).size, 0);
  console.log(`fuzz: ${target}: corpus ${before.length} -> ${kept.length} entries (${Math.round(bytes / 1024)} KiB), minimised`);
}

function tail(text, lines) {
  return text.split('\n').slice(-lines).join('\n');
}
