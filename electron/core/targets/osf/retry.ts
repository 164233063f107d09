import { CancelledError } from '../../errors.js';
import { parseRetryAfter, type RemoteClient, type RequestOptions } from '../../remote/http.js';

/**
 * Retries for streamed uploads only. Everything else OSF sends goes through RemoteClient,
 * whose ky layer retries 408/429/5xx honouring Retry-After. ky cannot replay a streamed
 * body, so RemoteClient sends those once; here each attempt calls `options` again, which
 * opens the bytes afresh (from the spool file or the entry). The limits are the client's
 * own (`retries`, `maxRetryAfterMs`), so both paths follow one policy.
 */
const REPLAY_STATUSES = [408, 429, 500, 502, 503, 504];
const DEFAULT_RETRIES = 4;
const DEFAULT_MAX_RETRY_AFTER_MS = 120_000;

export async function sendReplayingBody(
  client: RemoteClient,
  url: string,
  options: () => Promise<RequestOptions> | RequestOptions,
): Promise<Response> {
  const retries = client.options.retries ?? DEFAULT_RETRIES;
  const maxWaitMs = client.options.maxRetryAfterMs ?? DEFAULT_MAX_RETRY_AFTER_MS;
  for (let attempt = 1; ; attempt++) {
    const current = await options();
    const allowed = current.allow ?? [];
    const response = await client.request(url, { ...current, retry: false, allow: [...allowed, ...REPLAY_STATUSES] });
    if (!REPLAY_STATUSES.includes(response.status) || allowed.includes(response.status)) return response;
    const retryAfter = parseRetryAfter(response.headers.get('retry-after'));
    const waitMs = retryAfter !== undefined ? retryAfter * 1000 : Math.min(30, 2 ** (attempt - 1)) * (0.75 + Math.random() / 2) * 1000;
    if (attempt > retries || waitMs > maxWaitMs) throw await client.errorFor(response);
    await response.body?.cancel();
    await sleep(waitMs, current.signal);
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
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
