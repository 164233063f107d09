import { Octokit } from '@octokit/rest';
import { throttling } from '@octokit/plugin-throttling';
import { retry } from '@octokit/plugin-retry';
import { FerryError, conflict, forbidden, notFound, unauthorized } from '../../errors.js';
import { RateLimitBudget, sleep } from '../forge/rate-limit.js';
import { RemoteTimeout, timedFetch } from '../../remote/body-guard.js';

/**
 * Octokit set up for Ferry: throttling (GitHub's own primary/secondary limit guidance) and
 * retry (5xx) plugins, plus a guard that reads x-ratelimit-* from every response and, once the
 * budget is used up, waits for a reset that is near (≤ maxRateWaitMs) or fails with a clear
 * error instead of hammering.
 */
export interface GithubClientOptions {
  baseUrl: string;
  /** GitHub asks for ≥ 1 s between content-creating requests; tests shorten it */
  writeSpacingMs?: number;
  /** longest wait for a rate-limit reset before failing (default 60 s) */
  maxRateWaitMs?: number;
  /** longest wait for an answer, or pause inside one, ms (default 60 s) */
  timeoutMs?: number;
  /** the retry plugin waits n² × this after the n-th 5xx or broken connection (default 1 s; tests shorten it) */
  retryBaseMs?: number;
}

const ThrottledOctokit = Octokit.plugin(throttling, retry);
export type GithubOctokit = InstanceType<typeof ThrottledOctokit>;

export const USER_AGENT = 'Ferry (research data transfer; https://github.com/ferry)';

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

export function createOctokit(token: string, options: GithubClientOptions, signal?: AbortSignal): GithubOctokit {
  const maxWait = options.maxRateWaitMs ?? 60_000;
  const budget = new RateLimitBudget(maxWait, rateLimited);
  const octokit = new ThrottledOctokit({
    auth: token,
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    userAgent: USER_AGENT,
    log: quiet,
    // Octokit has no timeout of its own: a stalled GitHub would hold a job forever
    request: { signal, fetch: timedFetch({ serviceName: 'GitHub', timeoutMs: options.timeoutMs ?? 60_000 }) },
    throttle: {
      // a retry after a limit is worth one wait, only when the reset is near
      onRateLimit: (retryAfter: number, _options: unknown, _octokit: unknown, retryCount: number) => retryCount < 1 && retryAfter * 1000 <= maxWait,
      onSecondaryRateLimit: (retryAfter: number, _options: unknown, _octokit: unknown, retryCount: number) => retryCount < 2 && retryAfter * 1000 <= maxWait,
      write: new SpacedQueue(options.writeSpacingMs ?? 1000),
    },
    retry: { doNotRetry: [400, 401, 403, 404, 409, 410, 422, 429, 451], retryAfterBaseValue: options.retryBaseMs ?? 1000 },
  });
  const record = (headers: Record<string, string | undefined>) => budget.record(headers['x-ratelimit-remaining'], headers['x-ratelimit-reset']);
  octokit.hook.before('request', () => budget.beforeRequest(signal));
  octokit.hook.after('request', (response) => record(response.headers as Record<string, string | undefined>));
  octokit.hook.error('request', (error) => {
    const response = (error as { response?: { headers?: Record<string, string | undefined> } }).response;
    if (response?.headers) record(response.headers);
    throw error;
  });
  return octokit;
}

/**
 * The throttling plugin's "write" limiter, spacing content-creating requests (GitHub: wait at
 * least a second between them). Implements only the slice of Bottleneck.Group the plugin uses.
 */
class SpacedQueue {
  private last = 0;
  private chain: Promise<unknown> = Promise.resolve();

  constructor(private readonly spacingMs: number) {}

  key(_id: string) {
    return {
      schedule: <T>(_options: unknown, fn: (...args: unknown[]) => Promise<T>, ...args: unknown[]): Promise<T> => {
        const run = this.chain.then(async () => {
          const wait = this.last + this.spacingMs - Date.now();
          if (wait > 0) await sleep(wait);
          this.last = Date.now();
        });
        this.chain = run.catch(() => undefined);
        return run.then(() => fn(...args));
      },
    };
  }
}

function rateLimited(seconds: number): FerryError {
  return new FerryError(429, 'rate_limited', `GitHub's API rate limit for this token is used up; it resets in about ${seconds} s. Try again then.`, seconds);
}

export const NOT_FOUND_HINT =
  'GitHub has no such repository, folder or file, or the token cannot see it. A private repository needs a classic token with the `repo` scope, or a fine-grained token granted access to that repository.';

/** Maps an Octokit RequestError (or anything else) to the FerryError a person can act on. */
export function githubError(error: unknown): unknown {
  if (error instanceof FerryError) return error;
  if (error instanceof RemoteTimeout) return error.ferry;
  // Octokit wraps what its fetch threw (a broken connection) as a "500"
  const cause = (error as { cause?: unknown }).cause;
  if (cause instanceof FerryError) return cause;
  const e = error as { status?: number; message?: string; response?: { headers?: Record<string, string>; data?: { message?: string } } };
  if (typeof e.status !== 'number') {
    if ((error as Error)?.name === 'AbortError') return error;
    return new FerryError(502, 'upstream_unavailable', `GitHub could not be reached (${(error as Error)?.message ?? 'network error'}).`);
  }
  const said = e.response?.data?.message ?? e.message ?? '';
  const headers = e.response?.headers ?? {};
  switch (e.status) {
    case 401:
      return unauthorized('The GitHub token is invalid or expired.');
    case 403:
    case 429: {
      if (headers['x-ratelimit-remaining'] === '0' || e.status === 429 || /rate limit/i.test(said)) {
        const reset = Number(headers['x-ratelimit-reset'] ?? 0) * 1000;
        const retryAfter = Number(headers['retry-after'] ?? 0) || Math.max(1, Math.ceil((reset - Date.now()) / 1000));
        // the secondary limits are not the token's hourly budget: say which one was met
        if (/secondary rate limit/i.test(said)) {
          return new FerryError(429, 'rate_limited', `GitHub's secondary rate limit (at most 80 content-creating requests a minute and 500 an hour) was reached; try again in about ${retryAfter} s.`, retryAfter);
        }
        return rateLimited(retryAfter);
      }
      return forbidden(`The GitHub token may not do this (GitHub said: ${said}). Writing needs the \`repo\` scope, or Contents read/write on a fine-grained token.`);
    }
    case 404:
      return notFound(NOT_FOUND_HINT);
    case 409:
      return conflict(`GitHub reported a conflict (GitHub said: ${said}).`);
    case 422:
      return new FerryError(400, 'bad_request', `GitHub refused the request (GitHub said: ${said}).`);
    default:
      if (e.status >= 500) return new FerryError(502, 'upstream_error', `GitHub failed with HTTP ${e.status}; try again later.`);
      return new FerryError(502, 'upstream_error', `GitHub answered HTTP ${e.status} (GitHub said: ${said}).`);
  }
}

/** Runs a GitHub call, translating its errors. */
export async function gh<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw githubError(error);
  }
}

export function statusOf(error: unknown): number | undefined {
  return (error as { status?: number }).status;
}
