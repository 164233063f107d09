import { CancelledError, FerryError } from '../errors.js';
import { guardNodeBody } from './node-answer.js';
import { derivedSignal } from './retry-notice.js';

/**
 * Stall and break detection for bytes in flight. A remote that stops sending half-way
 * (or stops reading an upload) would otherwise hold a job forever: fetch's own timeout ends
 * when the headers arrive, and a socket may stay open without a byte for hours.
 */

// made once: an Error captures a stack when made, which cost more than the rest of a request
const STALLED_REASON = new Error('stalled');

/**
 * A clock that fires after `idleMs` without a `touch()` while started: its listeners are called
 * and its `signal` aborts. The AbortController is made only when `signal` is asked for (one
 * costs more than a request over node:http's other objects), so a request that only listens
 * (streamed-request.ts) makes none.
 */
export class Watchdog {
  private controller: AbortController | null = null;
  private readonly listeners = new Set<() => void>();
  private timer: NodeJS.Timeout | null = null;
  fired = false;
  /** what the clock's running out is, as an error (the signal's reason): one for all, never shown (callers word a timeout themselves) */
  readonly reason = STALLED_REASON;

  constructor(private readonly idleMs: number) {}

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.fired) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  /** Calls `listener` once the clock runs out; the returned function stops that. */
  onFire(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  start(): void {
    this.touch();
  }

  touch(): void {
    if (this.fired) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.fired = true;
      this.controller?.abort(this.reason);
      for (const listener of this.listeners) listener();
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

export interface TimedFetchOptions {
  /** the service's name in messages ("GitHub") */
  serviceName: string;
  /** longest wait for an answer, and longest pause inside its body */
  timeoutMs: number;
}

/**
 * `fetch` with Ferry's timeouts, for SDKs that take their own fetch (Octokit): no answer
 * within the time, or a body that pauses that long or breaks off, fails with a FerryError
 * naming the service instead of hanging.
 */
export function timedFetch(options: TimedFetchOptions): typeof fetch {
  const { serviceName: name, timeoutMs } = options;
  return async (input, init = {}) => {
    const timer = new Watchdog(timeoutMs);
    const caller = init.signal ?? undefined;
    const signal = caller ? derivedSignal(caller, timer.signal) : timer.signal;
    let response: Response;
    try {
      timer.start();
      response = await fetch(input, { ...init, signal });
    } catch (error) {
      if (timer.fired && !caller?.aborted) throw new RemoteTimeout(new FerryError(504, 'upstream_unavailable', `${name} did not answer in time; try again later.`));
      throw error;
    } finally {
      timer.stop();
    }
    return guardResponse(response, timeoutMs, name, caller);
  };
}

/**
 * A request that timed out, named like an abort so that SDKs pass it on instead of retrying
 * it (Octokit retries what it wraps as a "500", but hands an AbortError back as it is; like
 * RemoteClient, Ferry does not repeat a wait that already took the whole timeout). `ferry`
 * is the error to show.
 */
export class RemoteTimeout extends Error {
  override readonly name = 'AbortError';

  constructor(readonly ferry: FerryError) {
    super(ferry.message);
  }
}

/** `response` with its body guarded (guardBody): a stall or a break fails with a FerryError naming the service. */
export function guardResponse(response: Response, idleMs: number, serviceName: string, signal?: AbortSignal): Response {
  const failures: BodyFailures = {
    stalled: () => new FerryError(504, 'upstream_unavailable', `${serviceName} stopped sending data part-way through an answer; try again later.`),
    broken: (error) =>
      signal?.aborted
        ? new CancelledError()
        : new FerryError(502, 'upstream_unavailable', `${serviceName} broke off the connection part-way through an answer (${describeNetworkError(error)}); try again later.`),
  };
  // an answer over node:http keeps its body a Node stream, guarded as one (node-answer.ts);
  // asked first, as asking for `body` would make its web stream
  if (guardNodeBody(response, idleMs, failures)) return response;
  if (!response.body) return response;
  const body = guardBody(response.body, idleMs, failures);
  const guarded = new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  Object.defineProperty(guarded, 'url', { value: response.url });
  return guarded;
}

/** A short name for a network failure: "connection reset", an errno code, or the message. */
export function describeNetworkError(error: unknown): string {
  const cause = (error as { cause?: { code?: string } }).cause;
  const code = cause?.code ?? (error as { code?: string }).code;
  if (code === 'UND_ERR_SOCKET' || code === 'ECONNRESET' || code === 'EPIPE') return 'connection reset';
  if (code) return code;
  if (error instanceof Error && /terminated|other side closed/i.test(error.message)) return 'connection reset';
  return error instanceof Error ? error.message : 'network error';
}
