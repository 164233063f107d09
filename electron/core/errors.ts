import type { ErrorCode } from '../../shared/api.js';

/**
 * An error a person can act on. Everything the core throws on purpose is a FerryError;
 * the HTTP layer turns it into `{error, code}` with `status`. Messages never carry a token
 * or an absolute path of this machine.
 */
export class FerryError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    /** seconds, for 429/503 passed on from a remote */
    readonly retryAfter?: number,
  ) {
    super(message);
    this.name = 'FerryError';
  }
}

export const badRequest = (message: string, code: ErrorCode = 'bad_request') => new FerryError(400, code, message);
export const unauthorized = (message: string) => new FerryError(401, 'unauthorized', message);
export const forbidden = (message: string) => new FerryError(403, 'forbidden', message);
export const notFound = (message: string, code: ErrorCode = 'resource_not_found') => new FerryError(404, code, message);
export const notSupported = (message: string) => new FerryError(405, 'action_not_supported', message);
export const conflict = (message: string) => new FerryError(409, 'conflict', message);
export const tooLarge = (message: string) => new FerryError(413, 'too_large', message);

export function isFerryError(error: unknown): error is FerryError {
  return error instanceof FerryError;
}

/** Thrown when a job's AbortSignal fires; jobs end `cancelled`, not `failed`. */
export class CancelledError extends Error {
  constructor() {
    super('The job was cancelled.');
    this.name = 'CancelledError';
  }
}

export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new CancelledError();
}
