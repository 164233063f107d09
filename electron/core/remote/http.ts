import ky, { HTTPError, TimeoutError, type KyInstance, type Options as KyOptions } from 'ky';
import pThrottle from 'p-throttle';
import { Readable } from 'node:stream';
import type { BodyInit } from 'undici-types';
import { CancelledError, FerryError } from '../errors.js';
import { describeNetworkError, guardResponse, Watchdog } from './body-guard.js';
import { fastPathOn } from '../fast-paths.js';
import { bodyStream } from './node-answer.js';
import { sendStreamed, StaleConnection } from './streamed-request.js';
import { retryListener, retryNotice, retryReason, type RetryListener } from './retry-notice.js';

/**
 * The HTTP client every remote target uses: ky (retries with backoff that honour
 * Retry-After, timeouts) plus p-throttle (a polite request rate). A request with a streamed
 * body, and (fast path `direct-requests`) one with none, goes over `node:http` instead, through
 * the same policy below (`attemptStreamed`); its answer's body stays a Node stream until read
 * (node-answer.ts), and `stream()` hands that stream on as it is.
 *
 * Credentials, one rule: a token reaches only its own service's hosts — the API origin and
 * the `credentialOrigins` the target names (figshare's download host). Every other host
 * gets no Bearer token, no credential header the caller set and no `tokenQuery`, whether
 * the caller asked for its URL (a figshare link-only file points anywhere) or a redirect led
 * there (a signed storage URL); once a redirect leaves the starting origin, hand-set
 * credential headers stay behind for the rest of the chain.
 *
 * Signed storage links (a redirect to another host): that hop is sent at once, outside the
 * rate queue — the service's rate budget covers its own hosts, and the link may expire
 * within seconds (figshare's S3 links are signed for 10 s). A 403 from such a hop is the
 * link's refusal, not the token's: the chain is started again once for a fresh link, and a
 * second refusal is a 502 that says so (never "token invalid").
 *
 * Retries, one policy for every request (see `retryPlan`):
 * - idempotent methods (GET, HEAD, PUT, DELETE, OPTIONS) are retried on 408/429/500/502/503/504
 *   and on a connection that failed before an answer, up to `retries` times, waiting what
 *   Retry-After says (at most `maxRetryAfterMs`; longer → the error now) or an exponential
 *   backoff with jitter;
 * - POST and PATCH may have taken effect when the connection breaks or a 5xx comes back, so
 *   only a 429 (refused before any work) is retried; anything else is the caller's error,
 *   whose message says the request may have been carried out;
 * - a streamed body is only retried when it is given as a factory (`() => Readable`), which is
 *   called again for each attempt; a bare Readable is sent once. Either is piped to the socket
 *   by `node:http` (streamed-request.ts), not handed to fetch as a web stream;
 * - `retry: false` sends once, `retry: true` also retries a POST the caller knows is safe
 *   to repeat (content-addressed, or refused by a unique name);
 * - every wait for a retry is told to the job the request is for (the one its `signal` belongs
 *   to, retry-notice.ts), in words, and the end of the wait too: a job that waits never looks
 *   stuck without a reason.
 *
 * Timeouts (`timeoutMs`): the longest wait for an answer; for a streamed request body also
 * the longest pause in sending it; and for every response body the longest pause between two
 * chunks. A remote that stalls anywhere fails with a 504 sentence instead of hanging a job,
 * and a body cut off mid-way fails with a 502 sentence naming the service.
 */
export interface RemoteClientOptions {
  /** e.g. "https://api.osf.io/v2/" */
  baseUrl: string;
  /** the service's name in messages: "OSF", "Zenodo" */
  serviceName: string;
  /**
   * requests per second (default 5); null: none, for a server whose caller bounds the
   * requests it has in flight instead (WebDAV: the account's own server)
   */
  ratePerSecond?: number | null;
  /** per request, ms (default 60 s): see "Timeouts" above */
  timeoutMs?: number;
  /** retries on 408/429/5xx and network errors (default 4) */
  retries?: number;
  /** longest Retry-After we wait for, ms (default 120 s); longer → a 429 error now */
  maxRetryAfterMs?: number;
  /** headers sent with every request to the API origin (e.g. a pinned API version) */
  headers?: Record<string, string>;
  /** messages for 401/403, service-specific */
  messages?: { unauthorized?: string; forbidden?: string };
  /** sees every response, retried ones included (GitLab's rate-limit budget reads its headers) */
  onResponse?: (response: Response) => void;
  /** other origins of the same service that may see its token (see "Credentials" above) */
  credentialOrigins?: string[];
}

/** A streamed body that can be opened again, once per attempt. */
export type BodyFactory = () => Promise<Readable> | Readable;

export interface RequestOptions {
  method?: string;
  token?: string | null;
  /** absolute URL, or relative to baseUrl */
  searchParams?: Record<string, string | number | boolean>;
  /**
   * The service takes `token` in this query parameter instead of an Authorization header
   * (figshare downloads: `token`); added only on a credentialed origin (see "Credentials").
   */
  tokenQuery?: string;
  json?: unknown;
  /** a factory for a streamed body lets the request be retried (and redirected with 307/308) */
  body?: BodyInit | Readable | BodyFactory;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** see "Retries" above: default by method; false never; true also for POST/PATCH */
  retry?: boolean;
  /** statuses returned to the caller instead of thrown (e.g. [404, 409]) */
  allow?: number[];
  timeoutMs?: number;
}

const RETRY_STATUSES = [408, 429, 500, 502, 503, 504];
const IDEMPOTENT = ['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS'];
const DEFAULT_RETRIES = 4;
const DEFAULT_TIMEOUT_MS = 60_000;
const DEFAULT_MAX_RETRY_AFTER_MS = 120_000;
const BACKOFF_LIMIT_MS = 30_000;

type PreparedBody = BodyInit | BodyFactory | undefined;

/** How a streamed request is retried: `waitToRetry` tells the job why, then waits before attempt `next`. */
interface StreamedRetry {
  plan: ReturnType<typeof retryPlan>;
  limit: number;
  idleMs: number;
  waitToRetry(status: number | null, ms: number, next: number): Promise<void>;
}

export class RemoteClient {
  private readonly http: KyInstance;
  private readonly throttled: <T>(fn: () => Promise<T>) => Promise<T>;
  private readonly credentialOrigins: ReadonlySet<string>;
  readonly baseUrl: URL;

  constructor(readonly options: RemoteClientOptions) {
    this.baseUrl = new URL(options.baseUrl.endsWith('/') ? options.baseUrl : `${options.baseUrl}/`);
    this.credentialOrigins = new Set((options.credentialOrigins ?? []).map((origin) => new URL(origin).origin));
    this.http = ky.create({
      timeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      throwHttpErrors: true,
      redirect: 'manual',
      // retry options are given whole per request (kyRetry): ky would concatenate merged arrays
      // only when asked: ky hands each hook a clone of the response, a tee of its body that every
      // chunk of a download then passes through (for nothing, with no hook to read it)
      ...(options.onResponse ? { hooks: { afterResponse: [(_request: Request, _options: unknown, response: Response) => void options.onResponse?.(response)] } } : {}),
    });
    if (options.ratePerSecond === null) {
      this.throttled = (fn) => fn();
    } else {
      // strict: no window of a second ever sees more than the rate (the windowed default can burst 2×)
      const throttle = pThrottle({ limit: Math.max(1, options.ratePerSecond ?? 5), interval: 1000, strict: true });
      this.throttled = throttle(<T>(fn: () => Promise<T>) => fn()) as <T>(fn: () => Promise<T>) => Promise<T>;
    }
  }

  resolve(url: string, searchParams?: RequestOptions['searchParams']): URL {
    const resolved = new URL(url.replace(/^\//, ''), this.baseUrl);
    for (const [key, value] of Object.entries(searchParams ?? {})) resolved.searchParams.set(key, String(value));
    return resolved;
  }

  /** True when `url` is on the API's own origin (the service-wide headers go there only). */
  isApiOrigin(url: URL): boolean {
    return url.origin === this.baseUrl.origin;
  }

  /** True when `url` may carry the service's credentials (see "Credentials" above). */
  mayCarryCredentials(url: URL): boolean {
    return this.isApiOrigin(url) || this.credentialOrigins.has(url.origin);
  }

  /**
   * Sends a request, follows redirects by hand (credentials only ever to the service's own
   * hosts), and throws a FerryError for any status the caller did not `allow`. A GET whose
   * signed storage link was refused (403 off the starting origin) starts over once.
   */
  async request(url: string, options: RequestOptions = {}): Promise<Response> {
    const start = this.resolve(url, options.searchParams);
    const method = (options.method ?? 'GET').toUpperCase();
    let answer = await this.follow(start, method, options);
    if (!(answer instanceof Response) && (method === 'GET' || method === 'HEAD')) answer = await this.follow(start, method, options);
    if (answer instanceof Response) return answer;
    const name = this.options.serviceName;
    throw new FerryError(
      502,
      'upstream_error',
      `The storage host ${answer.host} refused the download link ${name} handed out (HTTP 403). Such links are signed for a few seconds only; try again, and if it keeps failing, tell ${name}.`,
    );
  }

  /** One redirect chain; a `{host}` when a signed link off the starting origin answered 403. */
  private async follow(start: URL, startMethod: string, options: RequestOptions): Promise<Response | { host: string }> {
    let target = start;
    let method = startMethod;
    let body: PreparedBody = prepareBody(options.body);
    let json = options.json;
    // credentials the caller set by hand (figshare's `Authorization: token`) are meant for
    // the origin it asked; once a redirect leaves that origin they stay behind for good
    let callerHeaders = options.headers ?? {};
    if (options.tokenQuery && options.token && this.mayCarryCredentials(target)) {
      target = new URL(target);
      target.searchParams.set(options.tokenQuery, options.token);
    }
    for (let hop = 0; hop < 6; hop++) {
      const offOrigin = target.origin !== start.origin;
      const response = await this.send(target, method, body, json, { ...options, headers: callerHeaders }, !offOrigin);
      if (response.status >= 300 && response.status < 400 && response.headers.has('location')) {
        await response.body?.cancel();
        const next = new URL(response.headers.get('location') as string, target);
        if (next.origin !== target.origin) callerHeaders = withoutCredentials(callerHeaders);
        target = next;
        if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === 'POST')) {
          method = 'GET';
          body = undefined;
          json = undefined;
        } else if (isOneShot(body)) {
          throw new FerryError(502, 'upstream_error', `${this.options.serviceName} redirected an upload, which Ferry cannot send twice.`);
        }
        continue;
      }
      if (response.ok || options.allow?.includes(response.status)) return response;
      if (response.status === 403 && offOrigin && !this.mayCarryCredentials(target)) {
        await response.body?.cancel().catch(() => undefined);
        return { host: target.host };
      }
      throw await this.errorFor(response, [options.token, ...credentialValues(options.headers ?? {})], method);
    }
    throw new FerryError(502, 'upstream_error', `${this.options.serviceName} redirected too many times.`);
  }

  async json<T>(url: string, options: RequestOptions = {}): Promise<T> {
    const response = await this.request(url, { ...options, headers: { accept: 'application/json', ...options.headers } });
    return (await response.json()) as T;
  }

  /** The response body as a Node stream (downloads). */
  async stream(url: string, options: RequestOptions = {}): Promise<{ response: Response; body: Readable }> {
    const response = await this.request(url, options);
    return { response, body: bodyStream(response) };
  }

  private timeoutOf(options: RequestOptions): number {
    return options.timeoutMs ?? this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  private headersFor(target: URL, options: RequestOptions): Record<string, string> {
    if (!this.mayCarryCredentials(target)) return withoutCredentials({ ...options.headers });
    const headers: Record<string, string> = { ...options.headers };
    if (this.isApiOrigin(target)) Object.assign(headers, this.options.headers);
    if (options.token && !options.tokenQuery) headers.authorization = `Bearer ${options.token}`;
    return headers;
  }

  /** `throttled`: counted in the service's rate budget (false for a hop to a signed storage link). */
  private async send(target: URL, method: string, body: PreparedBody, json: unknown, options: RequestOptions, throttled: boolean): Promise<Response> {
    const gate = throttled ? this.throttled : <T>(fn: () => Promise<T>) => fn();
    // the job this request is for, by its signal (retry-notice.ts); taken once, before the rate queue
    const listener = retryListener(options.signal);
    if (typeof body === 'function') return this.sendStreamed(target, method, body, options, gate, listener);
    // a request without a body needs nothing of fetch: node:http, as a streamed upload (node-answer.ts)
    if (body === undefined && json === undefined && fastPathOn('direct-requests')) return this.sendStreamed(target, method, null, options, gate, listener);
    const request = {};
    const notify = (notice: string | null) => listener(notice, request);
    let waited = false;
    const kyOptions: KyOptions = {
      method,
      headers: this.headersFor(target, options),
      signal: options.signal,
      body,
      json,
      timeout: this.timeoutOf(options),
      retry: this.kyRetry(method, options, (notice) => ((waited = true), notify(notice))),
    };
    let response: Response;
    try {
      response = await gate(() => this.http(target, kyOptions));
      if (waited) notify(null);
    } catch (error) {
      if (waited) notify(null);
      if (error instanceof HTTPError) response = error.response;
      else if (error instanceof TimeoutError) throw this.timedOut(method);
      else if (options.signal?.aborted) throw error;
      else throw this.unreachable(method, error);
    }
    return this.guarded(response, options);
  }

  /**
   * ky's retry options for one request, following `retryPlan`. The decision is made here in
   * full (ky then only computes the wait), so each retry can be told to the job before its wait.
   */
  private kyRetry(method: string, options: RequestOptions, notify: (notice: string) => void): KyOptions['retry'] {
    const plan = retryPlan(method, options.retry);
    if (plan === 'never') return 0;
    const limit = this.options.retries ?? DEFAULT_RETRIES;
    const maxRetryAfter = this.options.maxRetryAfterMs ?? DEFAULT_MAX_RETRY_AFTER_MS;
    // POST/PATCH: a 429 only (ky reads Retry-After for it); a broken connection or a 5xx may have landed
    const statusCodes = plan === 'all' ? RETRY_STATUSES : [429];
    const retries = (error: Error): boolean => {
      if (error instanceof TimeoutError) return false; // as ky: waiting that long again helps no one
      if (!(error instanceof HTTPError)) return plan === 'all';
      // ky would wait `maxRetryAfter` when asked to wait longer; Ferry fails now instead
      return statusCodes.includes(error.response.status) && (retryAfterMs(error.response.headers) ?? 0) <= maxRetryAfter;
    };
    return {
      limit,
      methods: [method.toLowerCase()],
      maxRetryAfter,
      backoffLimit: BACKOFF_LIMIT_MS,
      jitter: true,
      statusCodes,
      afterStatusCodes: plan === 'all' ? [429, 503] : [429],
      shouldRetry: ({ error, retryCount }) => {
        if (!retries(error)) return false;
        const status = error instanceof HTTPError ? error.response.status : null;
        const wait = error instanceof HTTPError && [429, 503].includes(status!) ? (retryAfterMs(error.response.headers) ?? null) : null;
        notify(retryNotice(this.options.serviceName, retryReason(status), wait, retryCount + 1, limit + 1));
        return undefined; // ky computes the wait: Retry-After, else its backoff
      },
    };
  }

  /**
   * A request whose body is a stream from `open`, opened afresh for every attempt (ky would
   * have to hold a stream body in memory to replay it). Same policy as ky's retries.
   */
  private async sendStreamed(
    target: URL,
    method: string,
    open: BodyFactory | null,
    options: RequestOptions,
    gate: <T>(fn: () => Promise<T>) => Promise<T>,
    listener: RetryListener,
  ): Promise<Response> {
    const request = {};
    const notify = (notice: string | null) => listener(notice, request);
    const plan = retryPlan(method, options.retry);
    // a bare stream cannot be read twice: sent once, its failure is the caller's error
    const limit = plan === 'never' || (open !== null && isOneShot(open)) ? 0 : (this.options.retries ?? DEFAULT_RETRIES);
    const idleMs = this.timeoutOf(options);
    let waited = false;
    /** waits before attempt `next`, having told the job why */
    const waitToRetry = async (status: number | null, ms: number, next: number) => {
      waited = true;
      notify(retryNotice(this.options.serviceName, retryReason(status), ms, next, limit + 1));
      await sleep(ms, options.signal);
    };
    try {
      return await this.attemptStreamed(target, method, open, options, gate, { plan, limit, idleMs, waitToRetry });
    } finally {
      if (waited) notify(null);
    }
  }

  /** The attempts of `sendStreamed`, each with the body opened afresh. */
  private async attemptStreamed(
    target: URL,
    method: string,
    open: BodyFactory | null,
    options: RequestOptions,
    gate: <T>(fn: () => Promise<T>) => Promise<T>,
    { plan, limit, idleMs, waitToRetry }: StreamedRetry,
  ): Promise<Response> {
    /** the next attempt goes on a connection of its own (after a StaleConnection) */
    let fresh = false;
    for (let attempt = 1; ; attempt++) {
      throwIfCancelled(options.signal);
      const source = open ? await open() : null;
      let sourceError: unknown = null;
      source?.once('error', (error) => (sourceError ??= error));
      // every chunk the network takes restarts the clock: a big upload is never cut off for
      // its size, only a pause (a server that stopped reading, or never answers) is
      const watchdog = new Watchdog(idleMs);
      let response: Response;
      try {
        watchdog.start();
        response = await gate(() => {
          watchdog.touch();
          return sendStreamed(target, method, this.headersFor(target, options), source, watchdog, options.signal, fresh);
        });
      } catch (error) {
        source?.destroy();
        if (sourceError) throw sourceError; // the bytes' own source failed: nothing the remote did
        if (options.signal?.aborted) throw new CancelledError();
        // a kept-alive connection the server closed as this went out: sent again at once on a
        // new one, not counted as an attempt (only a request that may be retried at all, and
        // never twice in a row)
        fresh = !fresh && error instanceof StaleConnection && !watchdog.fired && plan === 'all' && limit > 0;
        if (fresh) {
          attempt -= 1;
          continue;
        }
        const failure = watchdog.fired ? this.timedOut(method) : this.unreachable(method, error);
        // a timeout is not retried (as with ky): waiting that long again helps no one
        if (watchdog.fired || plan !== 'all' || attempt > limit) throw failure;
        await waitToRetry(null, backoffMs(attempt), attempt + 1);
        continue;
      } finally {
        watchdog.stop();
      }
      this.options.onResponse?.(response);
      const retryable = plan === 'all' ? RETRY_STATUSES.includes(response.status) : plan === 'rate-limit-only' && response.status === 429;
      if (retryable && attempt <= limit && !options.allow?.includes(response.status)) {
        const wait = retryAfterMs(response.headers) ?? backoffMs(attempt);
        if (wait <= (this.options.maxRetryAfterMs ?? DEFAULT_MAX_RETRY_AFTER_MS)) {
          await response.body?.cancel().catch(() => undefined);
          source?.destroy();
          await waitToRetry(response.status, wait, attempt + 1);
          continue;
        }
      }
      source?.destroy();
      return this.guarded(response, options);
    }
  }

  /** The response with a body that fails clearly (a FerryError) if it stalls or breaks off. */
  private guarded(response: Response, options: RequestOptions): Response {
    return guardResponse(response, this.timeoutOf(options), this.options.serviceName, options.signal);
  }

  private timedOut(method: string): FerryError {
    const name = this.options.serviceName;
    const landed = IDEMPOTENT.includes(method) ? '' : ' It may still have carried out the request; check before repeating it.';
    return new FerryError(504, 'upstream_unavailable', `${name} did not answer in time; try again later.${landed}`);
  }

  private unreachable(method: string, error: unknown): FerryError {
    const name = this.options.serviceName;
    const landed = IDEMPOTENT.includes(method) ? '' : ' It may still have carried out the request; check before repeating it.';
    return new FerryError(502, 'upstream_unavailable', `${name} could not be reached (${describeNetworkError(error)}).${landed}`);
  }

  /** Maps a remote status to the API.md error the user sees. */
  async errorFor(response: Response, secrets: (string | null | undefined)[] = [], method = 'GET'): Promise<FerryError> {
    const name = this.options.serviceName;
    // a service may quote the credential back ("token abc… is not valid"): never pass it on
    const detail = redactSecrets(await remoteDetail(response), secrets);
    const suffix = detail ? ` (${name} said: ${detail})` : '';
    const retryAfter = parseRetryAfter(response.headers.get('retry-after'));
    switch (response.status) {
      case 401:
        return new FerryError(401, 'unauthorized', this.options.messages?.unauthorized ?? `The ${name} token is invalid or expired.`);
      case 403:
        return new FerryError(403, 'forbidden', (this.options.messages?.forbidden ?? `The ${name} token has no access to this resource.`) + suffix);
      case 404:
      case 410:
        return new FerryError(404, 'resource_not_found', `${name} has no such resource, or the token cannot see it${suffix}.`);
      case 409:
        return new FerryError(409, 'conflict', `${name} reported a conflict${suffix}.`);
      case 413:
        return new FerryError(413, 'too_large', `${name} refused the file as too large${suffix}.`);
      case 429:
        return new FerryError(429, 'rate_limited', `${name} is limiting the request rate; try again${retryAfter ? ` in ${retryAfter} s` : ' later'}.`, retryAfter);
      case 507:
        return new FerryError(507, 'too_large', `${name} storage quota exceeded${suffix}.`);
      default:
        if (response.status >= 500) {
          // a 5xx to a POST may come after the work was done (a gateway timing out a slow commit)
          const landed = IDEMPOTENT.includes(method.toUpperCase()) ? '' : ' It may still have carried out the request; check before repeating it.';
          return new FerryError(response.status === 503 ? 503 : 502, response.status === 503 ? 'upstream_unavailable' : 'upstream_error', `${name} failed with HTTP ${response.status}${suffix}.${landed}`, retryAfter);
        }
        return new FerryError(502, 'upstream_error', `${name} answered HTTP ${response.status}${suffix}.`);
    }
  }
}

// any header named for a key, token, secret or session: `X-Dataverse-key`, `X-API-Key`, `PRIVATE-TOKEN` ...
const CREDENTIAL_HEADER = /^(authorization|proxy-authorization|cookie)$|token|auth|api-?key|(^|-)key$|secret|session/i;

/** `headers` without anything that could be a credential, for a host that must not see one. */
export function withoutCredentials(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !CREDENTIAL_HEADER.test(name)));
}

function credentialValues(headers: Record<string, string>): string[] {
  return Object.entries(headers)
    .filter(([name]) => CREDENTIAL_HEADER.test(name))
    .map(([, value]) => value);
}

function redactSecrets(text: string | null, secrets: (string | null | undefined)[]): string | null {
  if (text === null) return null;
  let out = text;
  for (const secret of secrets) {
    if (!secret || secret.length < 8) continue;
    out = out.split(secret).join('[redacted]');
    // the bare token of a scheme-prefixed header value ("token abc", "Bearer abc")
    const bare = /^\S+\s+(\S{8,})$/.exec(secret)?.[1];
    if (bare) out = out.split(bare).join('[redacted]');
  }
  return out;
}

/** A bare Readable becomes a factory that can be called once (it cannot be re-read). */
function prepareBody(body: RequestOptions['body']): PreparedBody {
  if (body instanceof Readable) {
    let used = false;
    const once = () => {
      if (used) throw new FerryError(502, 'upstream_error', 'An upload stream cannot be sent twice.');
      used = true;
      return body;
    };
    return Object.assign(once, { oneShot: true });
  }
  return body as PreparedBody;
}

function isOneShot(body: PreparedBody): boolean {
  return typeof body === 'function' && (body as { oneShot?: boolean }).oneShot === true;
}

/**
 * Which failures a request may be retried after. `all`: idempotent (or declared safe);
 * `rate-limit-only`: a POST/PATCH, which a 429 refused before doing anything; `never`.
 */
export function retryPlan(method: string, retry: boolean | undefined): 'all' | 'rate-limit-only' | 'never' {
  if (retry === false) return 'never';
  if (retry === true || IDEMPOTENT.includes(method.toUpperCase())) return 'all';
  return 'rate-limit-only';
}

/** What the service asked us to wait (Retry-After; else a rate-limit reset time), ms. */
export function retryAfterMs(headers: Headers): number | undefined {
  const seconds = parseRetryAfter(headers.get('retry-after'));
  if (seconds !== undefined) return seconds * 1000;
  const reset = Number(headers.get('ratelimit-reset') ?? headers.get('x-ratelimit-reset') ?? NaN);
  // a reset header is an epoch on GitLab/GitHub/Zenodo (a delta on a few others)
  if (!Number.isFinite(reset)) return undefined;
  return Math.max(0, reset > 1e9 ? reset * 1000 - Date.now() : reset * 1000);
}

/** ky's own schedule: 0.3 s × 2^(n-1), jittered, at most 30 s. */
function backoffMs(attempt: number): number {
  return Math.min(BACKOFF_LIMIT_MS, 300 * 2 ** (attempt - 1)) * Math.random();
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

function throwIfCancelled(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new CancelledError();
}

export function parseRetryAfter(value: string | null): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, Math.ceil(seconds));
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}

/** A short human sentence from a remote error body of any of the usual shapes. */
async function remoteDetail(response: Response): Promise<string | null> {
  let text: string;
  try {
    text = await response.text();
  } catch {
    return null;
  }
  try {
    const parsed = JSON.parse(text) as Record<string, unknown>;
    const errors = parsed.errors;
    if (Array.isArray(errors) && errors.length > 0) {
      const first = errors[0] as Record<string, unknown>;
      const detail = first.detail ?? first.message;
      if (typeof detail === 'string') return clip(detail);
    }
    for (const key of ['message', 'detail', 'error', 'message_long']) {
      const value = parsed[key];
      if (typeof value === 'string') return clip(value);
    }
    return null;
  } catch {
    // an HTML or XML page (a proxy's error page, Django's bare 500) says nothing a person can use
    return /<html|^\s*</i.test(text) ? null : clip(text.trim()) || null;
  }
}

const clip = (text: string) => (text.length > 200 ? `${text.slice(0, 197)}...` : text);


/** Pages through a Link-header (RFC 8288) paginated collection: GitHub, GitLab, Zenodo. */
export function nextLink(linkHeader: string | null): string | null {
  if (!linkHeader) return null;
  for (const part of linkHeader.split(',')) {
    const match = /<([^>]+)>\s*;\s*rel="?([^";]+)"?/.exec(part.trim());
    if (match && match[2]?.split(/\s+/).includes('next')) return match[1] ?? null;
  }
  return null;
}
