// `npm run test:stress` sets FERRY_STRESS=1. Every attack/kill/load test has two sizes:
// a short one that runs in `npm test` (and so in CI on every change), and the long one
// the figures come from.
export const stressRun = process.env.FERRY_STRESS === '1';

/** The short value in the normal suite, the long one under `npm run test:stress`. */
export function byMode<T>(normal: T, stress: T): T {
  return stressRun ? stress : normal;
}

/** Per-test timeout: generous in stress mode, where a test may run for many minutes. */
export function modeTimeout(normalMs: number, stressMs: number): number {
  return byMode(normalMs, stressMs);
}
