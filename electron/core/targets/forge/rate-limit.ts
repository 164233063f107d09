import type { FerryError } from '../../errors.js';

/**
 * The request budget a forge announces on every response (GitHub: x-ratelimit-remaining /
 * x-ratelimit-reset; GitLab: RateLimit-Remaining / RateLimit-Reset; both reset as a Unix epoch
 * in seconds). Once the budget is used up, the next request waits for a near reset
 * (≤ maxWaitMs) or fails with the forge's own clear 429 instead of hammering.
 */
export class RateLimitBudget {
  private remaining: number | null = null;
  private resetAtMs = 0;

  constructor(
    private readonly maxWaitMs: number,
    private readonly rateLimited: (seconds: number) => FerryError,
  ) {}

  /** When the budget refills, in epoch milliseconds (0 until a response said). */
  get resetAt(): number {
    return this.resetAtMs;
  }

  /** Takes the two headers' values as a response carried them (absent: null or undefined). */
  record(remaining: string | null | undefined, resetEpochSeconds: string | null | undefined): void {
    if (remaining != null) this.remaining = Number(remaining);
    if (resetEpochSeconds != null) this.resetAtMs = Number(resetEpochSeconds) * 1000;
  }

  async beforeRequest(signal?: AbortSignal): Promise<void> {
    if (this.remaining === null || this.remaining > 0) return;
    // the reset is given in whole seconds: one more makes sure the request lands after the refill
    const wait = this.resetAtMs - Date.now() + 1000;
    if (wait <= 0) return;
    if (wait > this.maxWaitMs) throw this.rateLimited(Math.ceil(wait / 1000));
    await sleep(wait, signal);
    this.remaining = null;
  }
}

/** Waits `ms`, or fails with the signal's reason as soon as it is aborted. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
