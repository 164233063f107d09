import type { CheckDifference, CheckSide } from '../../../shared/api.js';
import { COMPUTABLE_HASHES, type HashAlgorithm } from '../hashing.js';

// How a check judges one path found on both sides, from what the two targets say of it (no
// bytes). Sizes first: two different byte counts are different bytes, whatever the hashes. Then
// one hash both sides give, of the strongest algorithm they share. Two files whose sizes agree
// but that share no hash are not called equal here: the caller either reads bytes (read_bytes)
// or counts them as compared by size only, and the report says which.

/** What one side says of a path: its kind, and for a file its size and hashes (lowercase hex), when known. */
export interface PathFacts {
  kind: 'file' | 'folder';
  size: number | null;
  hashes: Record<string, string>;
}

export type Judgement =
  | { verdict: 'matched'; algorithm: string }
  | { verdict: 'different'; difference: CheckDifference }
  /** no hash in common: `sizes` says whether the sizes agree or one is not known */
  | { verdict: 'no_common_hash'; sizes: 'equal' | 'unknown' }
  /** a folder on both sides: there is nothing more to compare */
  | { verdict: 'folders' };

/**
 * The algorithms both targets may report, strongest first (COMPUTABLE_HASHES' order; one
 * Ferry does not compute, git-sha1 or rclone's own, comes after, by name): a file is
 * compared by the first both give.
 */
export function sharedAlgorithms(source: readonly string[], destination: readonly string[]): string[] {
  const shared = source.filter((algorithm) => destination.includes(algorithm));
  const rank = (algorithm: string) => {
    const at = (COMPUTABLE_HASHES as readonly string[]).indexOf(algorithm);
    return at < 0 ? COMPUTABLE_HASHES.length : at;
  };
  return [...new Set(shared)].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
}

/** The one judgement for a path both sides have. `algorithms`: sharedAlgorithms of the two targets. */
export function judge(path: string, source: PathFacts, destination: PathFacts, algorithms: readonly string[]): Judgement {
  if (source.kind !== destination.kind) {
    return { verdict: 'different', difference: { path, by: 'kind', source: source.kind, destination: destination.kind } };
  }
  if (source.kind === 'folder') return { verdict: 'folders' };
  if (source.size !== null && destination.size !== null && source.size !== destination.size) {
    return { verdict: 'different', difference: { path, by: 'size', source: source.size, destination: destination.size } };
  }
  for (const algorithm of algorithms) {
    const ours = source.hashes[algorithm];
    const theirs = destination.hashes[algorithm];
    if (!ours || !theirs) continue;
    return sameDigest(ours, theirs)
      ? { verdict: 'matched', algorithm }
      : { verdict: 'different', difference: { path, by: 'hash', algorithm, source: ours.toLowerCase(), destination: theirs.toLowerCase() } };
  }
  return { verdict: 'no_common_hash', sizes: source.size !== null && destination.size !== null ? 'equal' : 'unknown' };
}

const READ_BOTH_WITH: HashAlgorithm = 'sha256';

/**
 * With read_bytes, for a file with no hash in common: which sides to read and which digest to
 * compute. Reading one side is enough when the other already gives a digest Ferry can compute;
 * the source is preferred (it is being read anyway; the destination needs a second pass).
 */
export function readPlan(source: PathFacts, destination: PathFacts): { algorithm: HashAlgorithm; read: CheckSide[] } {
  const given = (facts: PathFacts) => COMPUTABLE_HASHES.find((algorithm) => facts.hashes[algorithm]);
  const fromDestination = given(destination);
  if (fromDestination) return { algorithm: fromDestination, read: ['source'] };
  const fromSource = given(source);
  if (fromSource) return { algorithm: fromSource, read: ['destination'] };
  return { algorithm: READ_BOTH_WITH, read: ['source', 'destination'] };
}

export function sameDigest(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}
