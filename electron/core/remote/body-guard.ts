/**
 * Stall and break detection for bytes in flight. A remote that stops sending half-way
 * (or stops reading an upload) would otherwise hold a job forever: fetch's own timeout ends
 * when the headers arrive, and a socket may stay open without a byte for hours.
 */

/** An AbortSignal that fires after `idleMs` without a `touch()` while started. */
export class Watchdog {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | null = null;
  fired = false;

  constructor(private readonly idleMs: number) {}

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  start(): void {
    this.touch();
  }

  touch(): void {
    if (this.fired) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.fired = true;
      this.controller.abort(new Error('stalled'));
    }, this.idleMs);
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}

export interface BodyFailures {
  /** no chunk for the idle time while the reader was waiting */
  stalled(): Error;
  /** the connection failed mid-body */
  broken(error: unknown): Error;
}

/**
 * `body`, passed through chunk by chunk (pull-driven, so a slow reader is never mistaken
 * for a slow remote): a pause of `idleMs` while the reader waits, or a broken connection,
 * ends it with the caller's clear error and releases the connection.
 */
export function guardBody(body: ReadableStream<Uint8Array>, idleMs: number, failures: BodyFailures): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let timer: NodeJS.Timeout | undefined;
      const stalled = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(STALLED), idleMs);
      });
      try {
        const { done, value } = await Promise.race([reader.read(), stalled]);
        if (done) controller.close();
        else controller.enqueue(value);
      } catch (error) {
        reader.cancel().catch(() => undefined);
        controller.error(error === STALLED ? failures.stalled() : failures.broken(error));
      } finally {
        clearTimeout(timer);
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

const STALLED = Symbol('stalled');
