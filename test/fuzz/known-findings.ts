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

const causeOf = (finding: Finding): unknown => (finding as { cause?: unknown }).cause;
const positionOutOfRange = (finding: Finding) => /The value of "position" is out of range/.test(`${finding.message} ${String(causeOf(finding))}`);

export const KNOWN_FINDINGS: KnownFinding[] = [
  {
    // yauzl 3.4.0 passes 64-bit offsets from the archive (the ZIP64 locator's end-record
    // offset, an entry's ZIP64 local header offset) to fs.read unchecked; past 2^53 fs.read
    // throws a RangeError. Where the read runs inside an fs callback (the end record; an
    // entry's header read queued behind another read of the same archive) the exception is
    // uncaught and ends the whole process; elsewhere it rejects with an engine error.
    id: 'yauzl-unchecked-zip64-offset',
    reproducers: [
      'findings/pending/offline-archive/crash-3455758fe9b70b3f7b726e06a0e9df63644a8ae1',
      'findings/pending/upload-reader/crash-db01083bb71705e7ed43d41a361f6c2df8490b5b',
      'findings/pending/offline-archive/concurrent-reads-zip64-offset.zip',
      // grown by the long run (kept out of corpus/ so the replay never meets the bug)
      'findings/pending/offline-archive/a5d7323b78fc656e4dc5406023ba6f9299fcb6f9',
    ],
    matches: positionOutOfRange,
  },
];

export function knownFinding(error: unknown): KnownFinding | undefined {
  if (!(error instanceof Finding)) return undefined;
  return KNOWN_FINDINGS.find((known) => known.matches(error));
}
