import { Transform, type TransformCallback } from 'node:stream';
import { CancelledError } from '../errors.js';

/**
 * One limit on the bytes all running jobs read per second together (the queue's
 * `bandwidth_limit`): a token bucket holding at most one second of bytes, so a burst after an
 * idle spell is never larger than the limit, and jobs share the rate in the order they ask.
 * With no limit set, `take` returns at once and `throttle` hands the stream back untouched:
 * an unlimited queue costs nothing on the data path.
 */
export class Bandwidth {
  private rate: number | null = null;
  /** bytes that may pass now; negative while callers wait for bytes already promised */
  private available = 0;
  private refilledAt = 0;

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** bytes per second, or null for no limit */
  get limit(): number | null {
    return this.rate;
  }

  set limit(bytesPerSecond: number | null) {
    this.rate = bytesPerSecond === null ? null : Math.max(1, Math.floor(bytesPerSecond));
    this.available = 0;
    this.refilledAt = this.now();
  }

  /**
   * Reserves `bytes` and says how long to wait before they pass (ms); 0 with no limit. Each
   * reservation deepens the debt the next one waits behind, so callers pass in the order
   * they asked and together never faster than the limit.
   */
  reserve(bytes: number): number {
    const rate = this.rate;
    if (rate === null || bytes <= 0) return 0;
    const now = this.now();
    this.available = Math.min(rate, this.available + ((now - this.refilledAt) / 1000) * rate);
    this.refilledAt = now;
    this.available -= bytes;
    return this.available >= 0 ? 0 : (-this.available / rate) * 1000;
  }

  /** Resolves once `bytes` may pass; rejects with CancelledError when `signal` aborts first. */
  async take(bytes: number, signal: AbortSignal): Promise<void> {
    const wait = this.reserve(bytes);
    if (wait <= 0) return;
    await new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        clearTimeout(timer);
        reject(new CancelledError());
      };
      const timer = setTimeout(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      }, Math.ceil(wait));
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * A pass-through that holds each chunk until the limit lets it by; null when there is no
   * limit. Its first `free` bytes pass at once (a writer's own bytes, not read from a source).
   */
  throttle(signal: AbortSignal, free = 0): Transform | null {
    if (this.rate === null) return null;
    let unpaid = free;
    return new Transform({
      transform: (chunk: Buffer, _encoding, callback: TransformCallback) => {
        const paid = Math.min(unpaid, chunk.length);
        unpaid -= paid;
        this.take(chunk.length - paid, signal).then(
          () => callback(null, chunk),
          (error: unknown) => callback(error as Error),
        );
      },
    });
  }
}
