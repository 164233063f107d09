import { CancelledError, FerryError } from '../errors.js';

/**
 * Whether a file's failed upload is reported with that file (true) or ends the whole write
 * (false: rethrow). A cancel ends it, and so does a rejected token (401), since every later
 * file would fail the same way; any other FerryError — a refusal, a quota, a broken
 * transfer — belongs to its file alone.
 */
export function isPerFileFailure(error: unknown, signal: AbortSignal): error is FerryError {
  if (error instanceof CancelledError || signal.aborted) return false;
  return error instanceof FerryError && error.status !== 401;
}
