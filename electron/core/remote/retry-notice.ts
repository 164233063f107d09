/**
 * How a job learns, in words, that a request it made is waiting to be retried ("Zenodo is
 * not answering (HTTP 503); retrying in 20 s (attempt 3 of 5)."), without every target
 * passing a callback down to its HTTP client. `null` says that request's wait is over (`from`
 * names the request, so one request ending does not clear another's notice).
 *
 * The channel is the job's AbortSignal, which every request a job makes already carries
 * (`TargetContext.signal`, `WriteOptions.signal`, given to the client as `options.signal`):
 * the job runner registers its listener on its job's signal (`withRetryNotices`), and the
 * shared client (http.ts) asks for the listener of the signal a request was given
 * (`retryListener(options.signal)`). One rule keeps that sound:
 *
 *   a signal given to a request during a job is the job's own signal, or one made from it
 *   here (`derivedSignal`, `detachedSignal`), which leads back to the job's signal.
 *
 * A request with no signal, or one made any other way (`AbortSignal.timeout`, a controller of
 * its own; `AbortSignal.any` outside this file the lint refuses, eslint.config.js), reaches no
 * job: its retries are told to nobody, as are those of a request outside a job (a listing,
 * whose signal no job registered). So cleanup that must outlive a cancel takes
 * `detachedSignal(jobSignal)`, not no signal. No async context is involved
 * (Node's async-context store keeps promise hooks in the whole process once used, a cost for
 * every promise: about 10 MiB of the WebDAV row's peak in the transfer probe, issue #18 and
 * docs/performance.md), so a client's rate queue running a request from another job's call
 * stack changes nothing; the client still takes the listener when a request starts, before
 * it queues.
 */
export type RetryListener = (notice: string | null, from: object) => void;

/** the listener of each running job, by its job's signal (registered by withRetryNotices) */
const listeners = new WeakMap<AbortSignal, RetryListener>();
/** the job signal each signal made here leads back to */
const jobOf = new WeakMap<AbortSignal, AbortSignal>();

const nobody: RetryListener = () => undefined;

/**
 * Runs `run` (a job, whose requests carry `signal` or one made from it here) with its retries
 * told to `show`: the latest notice, or null once none is waiting. Once `run` settles, a
 * request that starts later is told to nobody.
 */
export async function withRetryNotices<T>(signal: AbortSignal, show: (notice: string | null) => void, run: () => Promise<T>): Promise<T> {
  if (listeners.has(signal) || jobOf.has(signal)) throw new Error('withRetryNotices: this signal already belongs to a job');
  let current: object | null = null;
  listeners.set(signal, (notice, from) => {
    if (notice !== null) current = from;
    else if (current !== from) return;
    else current = null;
    show(notice);
  });
  try {
    return await run();
  } finally {
    listeners.delete(signal);
  }
}

/** The listener of the job `signal` belongs to; one that ignores notices when it belongs to none. */
export function retryListener(signal: AbortSignal | undefined): RetryListener {
  if (!signal) return nobody;
  return listeners.get(jobOf.get(signal) ?? signal) ?? nobody;
}

/**
 * `AbortSignal.any([signal, ...others])` that still belongs to `signal`'s job: for a request
 * that also stops on a deadline of its own. Use this, never `AbortSignal.any` written out,
 * for a signal a RemoteClient request gets.
 */
export function derivedSignal(signal: AbortSignal, ...others: AbortSignal[]): AbortSignal {
  return belongingTo(signal, AbortSignal.any([signal, ...others]));
}

/**
 * A signal that does not fire when `signal` does (after `ms` if given, else never), yet
 * belongs to `signal`'s job: for cleanup that must run after the job was cancelled (deleting
 * the draft it made), whose retries are still told to the job.
 */
export function detachedSignal(signal: AbortSignal, ms?: number): AbortSignal {
  return belongingTo(signal, ms === undefined ? new AbortController().signal : AbortSignal.timeout(ms));
}

function belongingTo(job: AbortSignal, made: AbortSignal): AbortSignal {
  jobOf.set(made, jobOf.get(job) ?? job);
  return made;
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
