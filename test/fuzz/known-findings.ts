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
    // yauzl 3.4.0 reads the ZIP64 end-record offset of the ZIP64 locator (8 bytes) and passes
    // it to fs.read unchecked; past 2^53 fs.read throws a RangeError synchronously inside an
    // fs callback: an uncaught exception that ends the whole process (upload and library).
    id: 'yauzl-zip64-locator-offset-crash',
    reproducers: ['findings/pending/offline-archive/crash-3455758fe9b70b3f7b726e06a0e9df63644a8ae1'],
    matches: (finding) => finding.message.startsWith('uncaught') && positionOutOfRange(finding),
  },
  {
    // the same for an entry's local header offset from its ZIP64 extra field: the RangeError
    // rejects the entry's open (offline) or shows in the upload's refusal sentence; it would be
    // uncaught too should yauzl queue the read behind another (concurrent opens)
    id: 'yauzl-zip64-local-header-offset',
    reproducers: ['findings/pending/upload-reader/crash-db01083bb71705e7ed43d41a361f6c2df8490b5b'],
    matches: (finding) => !finding.message.startsWith('uncaught') && positionOutOfRange(finding),
  },
];

export function knownFinding(error: unknown): KnownFinding | undefined {
  if (!(error instanceof Finding)) return undefined;
  return KNOWN_FINDINGS.find((known) => known.matches(error));
}
