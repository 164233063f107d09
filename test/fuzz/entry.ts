import { runGuarded } from './targets/guard.js';
import { FUZZ_TARGETS, type FuzzTargetName } from './targets/index.js';

// The module Jazzer.js loads (bundled to CommonJS by run.mjs): `fuzz` is called with each
// input. FERRY_FUZZ_TARGET names the target; FERRY_FUZZ_SCRATCH is the folder for the
// input files (made and removed by run.mjs, as libFuzzer may end the process abruptly).

const name = process.env.FERRY_FUZZ_TARGET as FuzzTargetName;
const scratch = process.env.FERRY_FUZZ_SCRATCH;
const check = FUZZ_TARGETS[name];
if (!check) throw new Error(`FERRY_FUZZ_TARGET must be one of ${Object.keys(FUZZ_TARGETS).join(', ')}`);
if (!scratch) throw new Error('FERRY_FUZZ_SCRATCH must name a folder for the inputs');

export async function fuzz(data: Buffer): Promise<void> {
  await runGuarded(check, data, scratch!);
}
