import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KNOWN_FINDINGS } from './known-findings.js';
import { runGuarded } from './targets/guard.js';
import { FUZZ_TARGETS, type FuzzTargetName } from './targets/index.js';

// The short variant of the coverage-guided fuzz run (issue #9): (a) every committed corpus
// input and every regression input (findings/<target>/) replayed in process through its
// target — no unexpected error, no unsafe path, no byte the reader did not promise; (b) the
// real fuzzer (Jazzer.js, test/fuzz/run.mjs) for ~8 s over both targets (plus ~5-10 s start-up each: instrumenting, replaying the corpus). The long run is
// `node test/fuzz/run.mjs --seconds N` (npm run test:stress).

const here = dirname(fileURLToPath(import.meta.url));
const FUZZ_SECONDS = Number(process.env.FERRY_FUZZ_TEST_SECONDS ?? 8);

function inputsOf(target: string): { name: string; file: string }[] {
  return ['corpus', 'findings'].flatMap((kind) => {
    const dir = join(here, kind, target);
    if (!existsSync(dir)) return [];
    return readdirSync(dir, { withFileTypes: true })
      .filter((entry) => entry.isFile() && entry.name !== 'README.md')
      .map((entry) => ({ name: `${kind}/${target}/${entry.name}`, file: join(dir, entry.name) }));
  });
}

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'ferry-fuzz-replay-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe('fuzz corpus replay', () => {
  for (const target of Object.keys(FUZZ_TARGETS) as FuzzTargetName[]) {
    it(`${target}: every corpus and regression input is read or refused as the reader promises`, async () => {
      const inputs = inputsOf(target);
      // the seeds alone are 17 inputs: an empty corpus means the corpus went missing
      expect(inputs.length).toBeGreaterThanOrEqual(17);
      const verdicts = new Map<string, number>();
      const problems: string[] = [];
      for (const input of inputs) {
        try {
          const verdict = await runGuarded(FUZZ_TARGETS[target], readFileSync(input.file), scratch);
          verdicts.set(verdict, (verdicts.get(verdict) ?? 0) + 1);
        } catch (error) {
          problems.push(`${input.name}: ${error instanceof Error ? error.message : String(error)}`);
        }
      }
      console.log(`FIGURE: fuzz replay: ${target} ${inputs.length} inputs, ${JSON.stringify(Object.fromEntries(verdicts))}`);
      expect(problems).toEqual([]);
      // the corpus exercises both sides of the reader: archives it reads and archives it refuses
      const read = target === 'upload-reader' ? ['accepted'] : ['listed'];
      const refused = target === 'upload-reader' ? ['refused', 'refused-while-reading'] : ['damaged', 'entry-unreadable'];
      expect(read.some((verdict) => verdicts.has(verdict))).toBe(true);
      expect(refused.some((verdict) => verdicts.has(verdict))).toBe(true);
    });
  }

  it('every known finding names a reproducer that is kept under findings/pending/', () => {
    for (const known of KNOWN_FINDINGS) {
      expect(known.reproducers.length).toBeGreaterThan(0);
      for (const reproducer of known.reproducers) {
        expect(reproducer.startsWith('findings/pending/'), reproducer).toBe(true);
        expect(existsSync(join(here, reproducer)), reproducer).toBe(true);
      }
    }
  });
});

describe('fuzz run (short)', () => {
  it(`Jazzer.js fuzzes both targets for ~${FUZZ_SECONDS} s without a finding`, { timeout: (FUZZ_SECONDS + 120) * 1000 }, async () => {
    const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = spawn(process.execPath, [join(here, 'run.mjs'), '--seconds', String(FUZZ_SECONDS)], { stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.on('close', (exitCode) => resolve({ code: exitCode, output }));
    });
    const figures = output.split('\n').filter((line) => line.startsWith('FIGURE: fuzz: '));
    for (const figure of figures) console.log(figure);
    expect(code, output).toBe(0);
    expect(figures).toHaveLength(Object.keys(FUZZ_TARGETS).length);
    for (const figure of figures) {
      const match = /^FIGURE: fuzz: (\S+) (\d+) executions in (\d+) s, (\d+) corpus entries, (\d+) findings$/.exec(figure);
      expect(match, figure).not.toBeNull();
      // the fuzzer really ran (a loaded machine may spend most of the few seconds replaying the corpus)
      expect(Number(match![2]), figure).toBeGreaterThan(50);
      expect(Number(match![5]), figure).toBe(0);
    }
  });
});
