import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { FerryError, notFound } from '../../errors.js';
import { RemoteClient, nextLink, parseRetryAfter, type RequestOptions } from '../../remote/http.js';
import { RateLimitBudget, sleep } from '../forge/rate-limit.js';

/**
 * GitLab's REST v4 through Ferry's RemoteClient (chosen over @gitbeaker/rest: Ferry needs the raw
 * Response — HEAD's X-Gitlab-* headers, streamed raw downloads, a streamed JSON body for one big
 * commit, Link-header keyset paging and the RateLimit-* headers — which gitbeaker hides behind
 * parsed bodies). This wrapper adds GitLab's rate-limit handling: it reads RateLimit-Remaining /
 * RateLimit-Reset from every response, waits for a near reset (≤ maxRateWaitMs) and otherwise
 * fails with a clear 429 instead of hammering; a 429 with Retry-After is waited out the same way.
 */
export interface GitlabApiOptions {
  /** instance base, e.g. https://gitlab.com or https://git.example.org */
  baseUrl: string;
  maxRateWaitMs?: number;
  ratePerSecond?: number;
}

export const NOT_FOUND_HINT =
  'GitLab has no such project, folder or file, or the token cannot see it. A private project needs a token with the `read_api` scope (or `api` to upload) from a member of that project.';

const RETRYABLE = [502, 503, 504];

export class GitlabApi {
  private readonly client: RemoteClient;
  private readonly maxWait: number;
  private readonly budget: RateLimitBudget;

  constructor(options: GitlabApiOptions, private readonly token: string, private readonly signal: AbortSignal) {
    this.client = new RemoteClient({
      baseUrl: `${options.baseUrl.replace(/\/+$/, '')}/api/v4/`,
      serviceName: 'GitLab',
      ratePerSecond: options.ratePerSecond ?? 10,
      messages: { unauthorized: 'The GitLab token is invalid or expired.', forbidden: 'The GitLab token may not do this; uploads need the `api` scope and Developer access or more.' },
    });
    this.maxWait = options.maxRateWaitMs ?? 60_000;
    this.budget = new RateLimitBudget(this.maxWait, rateLimited);
  }

  /** A request with rate-limit and 5xx handling; errors become FerryErrors with GitLab hints. */
  async request(url: string, options: RequestOptions = {}): Promise<Response> {
    const method = (options.method ?? 'GET').toUpperCase();
    const repeatable = !(options.body instanceof Readable) && method !== 'POST';
    for (let attempt = 0; ; attempt++) {
      await this.budget.beforeRequest(this.signal);
      const response = await this.client.request(url, {
        ...options,
        token: this.token,
        signal: this.signal,
        retry: false,
        allow: [...(options.allow ?? []), 404, 429, ...RETRYABLE],
      });
      // RateLimit-Reset is a Unix epoch on GitLab, not a delta
      this.budget.record(response.headers.get('ratelimit-remaining'), response.headers.get('ratelimit-reset'));
      if (response.status === 429) {
        const wait = (parseRetryAfter(response.headers.get('retry-after')) ?? Math.max(1, Math.ceil((this.budget.resetAt - Date.now()) / 1000))) * 1000;
        await response.body?.cancel();
        if (repeatable && attempt < 2 && wait <= this.maxWait) {
          await sleep(wait, this.signal);
          continue;
        }
        throw rateLimited(Math.ceil(wait / 1000));
      }
      if (RETRYABLE.includes(response.status) && !options.allow?.includes(response.status)) {
        if (repeatable && attempt < 3) {
          await response.body?.cancel();
          await sleep(500 * 2 ** attempt, this.signal);
          continue;
        }
        throw await this.client.errorFor(response);
      }
      if (response.status === 404 && !options.allow?.includes(404)) {
        await response.body?.cancel();
        throw notFound(NOT_FOUND_HINT);
      }
      return response;
    }
  }

  async json<T>(url: string, options: RequestOptions = {}): Promise<T> {
    const response = await this.request(url, { ...options, headers: { accept: 'application/json', ...options.headers } });
    return (await response.json()) as T;
  }

  /** Every item of a Link-paginated collection (offset or keyset: both advertise rel="next"). */
  async *paginate<T>(url: string, searchParams: Record<string, string | number | boolean>): AsyncGenerator<T> {
    let next: string | null = this.client.resolve(url, { per_page: 100, ...searchParams }).toString();
    while (next) {
      const response = await this.request(next, { headers: { accept: 'application/json' } });
      const page = (await response.json()) as T[];
      yield* page;
      next = page.length ? nextLink(response.headers.get('link')) : null;
    }
  }

  async stream(url: string, options: RequestOptions = {}): Promise<Readable> {
    const response = await this.request(url, options);
    return response.body ? Readable.fromWeb(response.body as unknown as WebReadableStream) : Readable.from([]);
  }
}

function rateLimited(seconds: number): FerryError {
  return new FerryError(429, 'rate_limited', `GitLab is limiting the request rate for this token; try again in about ${seconds} s.`, seconds);
}

export const encodePath = (path: string) => encodeURIComponent(path);
