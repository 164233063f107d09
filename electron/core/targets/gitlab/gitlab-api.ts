import { Readable } from 'node:stream';
import { FerryError, notFound } from '../../errors.js';
import { RemoteClient, nextLink, type RequestOptions } from '../../remote/http.js';
import { bodyStream } from '../../remote/node-answer.js';
import { RateLimitBudget } from '../forge/rate-limit.js';

/**
 * GitLab's REST v4 through Ferry's RemoteClient (not a GitLab client library: Ferry needs the raw
 * Response — HEAD's X-Gitlab-* headers, streamed raw downloads, Link-header keyset paging and
 * the RateLimit-* headers). File bytes never go through it: uploads are git pushes
 * (gitlab-write.ts). Retries are RemoteClient's (idempotent requests on 429/5xx and broken
 * connections, a POST only on 429, Retry-After honoured up to maxRateWaitMs). On top, GitLab's
 * budget: RateLimit-Remaining / RateLimit-Reset are read from every response (retried ones
 * too), and once the budget is used up the next request waits for a near reset
 * (≤ maxRateWaitMs) or fails with a clear 429 instead of hammering.
 */
export interface GitlabApiOptions {
  /** instance base, e.g. https://gitlab.com or https://git.example.org */
  baseUrl: string;
  maxRateWaitMs?: number;
  ratePerSecond?: number;
  /** per request, ms: the longest wait for an answer or pause in a body (default 60 s) */
  timeoutMs?: number;
  /** retries of a failed request (default 4) */
  retries?: number;
  /** whole projects up to this repository size are read with one shallow fetch (default 100 MB) */
  shallowReadMaxBytes?: number;
}

export const NOT_FOUND_HINT =
  'GitLab has no such project, folder or file, or the token cannot see it. A private project needs a token with the `read_api` scope (or `api` to upload) from a member of that project.';

export class GitlabApi {
  private readonly client: RemoteClient;
  private readonly budget: RateLimitBudget;

  constructor(options: GitlabApiOptions, private readonly token: string, private readonly signal: AbortSignal) {
    const maxWait = options.maxRateWaitMs ?? 60_000;
    this.budget = new RateLimitBudget(maxWait, rateLimited);
    this.client = new RemoteClient({
      baseUrl: `${options.baseUrl.replace(/\/+$/, '')}/api/v4/`,
      serviceName: 'GitLab',
      ratePerSecond: options.ratePerSecond ?? 10,
      timeoutMs: options.timeoutMs,
      retries: options.retries,
      maxRetryAfterMs: maxWait,
      // RateLimit-Reset is a Unix epoch on GitLab, not a delta
      onResponse: (response) => this.budget.record(response.headers.get('ratelimit-remaining'), response.headers.get('ratelimit-reset')),
      messages: { unauthorized: 'The GitLab token is invalid or expired.', forbidden: 'The GitLab token may not do this; uploads need the `api` scope and Developer access or more.' },
    });
  }

  /** A request within GitLab's rate-limit budget; errors become FerryErrors with GitLab hints. */
  async request(url: string, options: RequestOptions = {}): Promise<Response> {
    await this.budget.beforeRequest(this.signal);
    let response: Response;
    try {
      response = await this.client.request(url, { ...options, token: this.token, signal: this.signal, allow: [...(options.allow ?? []), 404] });
    } catch (error) {
      if (error instanceof FerryError && error.status === 429) {
        throw rateLimited(error.retryAfter ?? Math.max(1, Math.ceil((this.budget.resetAt - Date.now()) / 1000)));
      }
      throw error;
    }
    if (response.status === 404 && !options.allow?.includes(404)) {
      await response.body?.cancel();
      throw notFound(NOT_FOUND_HINT);
    }
    return response;
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
    return bodyStream(response);
  }
}

function rateLimited(seconds: number): FerryError {
  return new FerryError(429, 'rate_limited', `GitLab is limiting the request rate for this token; try again in about ${seconds} s.`, seconds);
}

export const encodePath = (path: string) => encodeURIComponent(path);
