import { CancelledError } from '../../errors.js';
import { parseRetryAfter, type RemoteClient, type RequestOptions } from '../../remote/http.js';

/**
 * Retries on 429/502/503/504 honouring Retry-After, with exponential backoff otherwise.
 * RemoteClient is meant to do this through ky, but ky only retries statuses it throws for,
 * and RemoteClient turns `throwHttpErrors` off, so statuses come back unretried. This loop
 * also serves streamed uploads, which no HTTP layer can replay: `options` is called
 * again for every attempt, so each one gets a fresh body.
 */
export const RETRY_STATUSES = [429, 502, 503, 504];

export interface RetryPolicy {
  retries: number;
  /** longest wait we accept, seconds; a longer Retry-After fails now with the 429 */
  maxWaitSeconds: number;
}

export const DEFAULT_RETRY: RetryPolicy = { retries: 4, maxWaitSeconds: 120 };

export async function requestWithRetry(
  client: RemoteClient,
  url: string,
  options: () => Promise<RequestOptions> | RequestOptions,
  policy: RetryPolicy = DEFAULT_RETRY,
): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    const current = await options();
    const allowed = current.allow ?? [];
    const response = await client.request(url, { ...current, allow: [...allowed, ...RETRY_STATUSES] });
    if (!RETRY_STATUSES.includes(response.status) || allowed.includes(response.status)) return response;
    const retryAfter = parseRetryAfter(response.headers.get('retry-after'));
    const wait = retryAfter ?? Math.min(30, 2 ** (attempt - 1)) * (0.75 + Math.random() / 2);
    if (attempt > policy.retries || wait > policy.maxWaitSeconds) throw await client.errorFor(response);
    await response.body?.cancel();
    await sleep(wait * 1000, current.signal);
  }
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new CancelledError());
    const onAbort = () => {
      clearTimeout(timer);
      reject(new CancelledError());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
