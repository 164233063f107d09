import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * How a job learns, in words, that a request it made is waiting to be retried ("Zenodo is
 * not answering (HTTP 503); retrying in 20 s (attempt 3 of 5)."), without every target
 * passing a callback down to its HTTP client: the job runner runs an executor inside
 * `withRetryNotices`, and the shared client (http.ts) tells whichever job's request it is
 * retrying. `null` says that request's wait is over (`from` names the request, so one
 * request ending does not clear another's notice). Outside a job (a listing) nobody listens.
 *
 * A client's rate queue may run a request from another job's async context, so a request
 * takes its listener (`retryListener()`) before it queues, never inside.
 */
export type RetryListener = (notice: string | null, from: object) => void;

const listeners = new AsyncLocalStorage<RetryListener>();

/** Runs `run` with its retries told to `show` (the latest notice, or null once none is waiting). */
export function withRetryNotices<T>(show: (notice: string | null) => void, run: () => Promise<T>): Promise<T> {
  let current: object | null = null;
  return listeners.run((notice, from) => {
    if (notice !== null) current = from;
    else if (current !== from) return;
    else current = null;
    show(notice);
  }, run);
}

/** The listener of the job this code runs for; one that ignores notices outside a job. */
export function retryListener(): RetryListener {
  return listeners.getStore() ?? (() => undefined);
}

/**
 * The sentence for a retry. `why`: what went wrong, as "is limiting the request rate (HTTP
 * 429)"; `waitMs`: null when the client's backoff picks the wait; `attempt`: the one about to
 * be made, of `attempts` in all.
 */
export function retryNotice(service: string, why: string, waitMs: number | null, attempt: number, attempts: number): string {
  const when = waitMs === null ? 'shortly' : `in ${Math.max(1, Math.round(waitMs / 1000))} s`;
  return `${service} ${why}; retrying ${when} (attempt ${attempt} of ${attempts}).`;
}

/** What a retried failure was, in the words of `retryNotice`: a status, or a connection that broke. */
export function retryReason(status: number | null): string {
  if (status === null) return 'is not answering (the connection broke before an answer)';
  if (status === 429) return 'is limiting the request rate (HTTP 429)';
  if (status === 503 || status === 502 || status === 504) return `is not answering (HTTP ${status})`;
  if (status === 408) return 'timed out the request (HTTP 408)';
  return `failed with HTTP ${status}`;
}
