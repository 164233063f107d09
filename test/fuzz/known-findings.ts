import { Finding } from './targets/verdict.js';

// Findings already reported and waiting for a fix in code the fuzz tests don't own. While
// listed, meeting one again is logged ("known finding") instead of failing, so the fuzzer
// keeps looking for new ones and `npm test` stays green. Each has its reproducer(s) under
// findings/pending/<target>/. Once fixed: delete the entry, move the reproducers to
// findings/<target>/ (they then replay in fuzz.test.ts as regression inputs).

export interface KnownFinding {
  id: string;
  /** paths relative to test/fuzz/ */
  reproducers: string[];
  matches(finding: Finding): boolean;
}


export const KNOWN_FINDINGS: KnownFinding[] = [];

export function knownFinding(error: unknown): KnownFinding | undefined {
  if (!(error instanceof Finding)) return undefined;
  return KNOWN_FINDINGS.find((known) => known.matches(error));
}
