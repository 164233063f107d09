import ky, { HTTPError, TimeoutError, type KyInstance, type Options as KyOptions } from 'ky';
import pThrottle from 'p-throttle';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { BodyInit } from 'undici-types';
import { FerryError } from '../errors.js';

/**
 * The HTTP client every remote target uses: ky (retries with backoff that honour
 * Retry-After, timeouts) plus p-throttle (a polite request rate). Authorization goes only
 * to the API's own origin: a redirect to another host (a storage bucket) is followed
 * without it.
 */
export interface RemoteClientOptions {
  /** e.g. "https://api.osf.io/v2/" */
  baseUrl: string;
  /** the service's name in messages: "OSF", "Zenodo" */
  serviceName: string;
  /** requests per second (default 5) */
  ratePerSecond?: number;
  /** per request, ms (default 60 s) */
  timeoutMs?: number;
  /** retries on 429/502/503/504 and network errors (default 4) */
  retries?: number;
  /** longest Retry-After we wait for, ms (default 120 s); longer → a 429 error now */
  maxRetryAfterMs?: number;
  /** headers sent with every request to the API origin (e.g. a pinned API version) */
  headers?: Record<string, string>;
  /** messages for 401/403, service-specific */
  messages?: { unauthorized?: string; forbidden?: string };
}

export interface RequestOptions {
  method?: string;
  token?: string | null;
  /** absolute URL, or relative to baseUrl */
  searchParams?: Record<string, string | number | boolean>;
  json?: unknown;
  body?: BodyInit | Readable;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** retry this request (default: only GET/HEAD/PUT/DELETE and not with a stream body) */
  retry?: boolean;
  /** statuses returned to the caller instead of thrown (e.g. [404, 409]) */
  allow?: number[];
  timeoutMs?: number;
}

const RETRY_STATUSES = [408, 429, 500, 502, 503, 504];

export class RemoteClient {
  private readonly http: KyInstance;
  private readonly throttled: <T>(fn: () => Promise<T>) => Promise<T>;
  readonly baseUrl: URL;

  constructor(readonly options: RemoteClientOptions) {
    this.baseUrl = new URL(options.baseUrl.endsWith('/') ? options.baseUrl : `${options.baseUrl}/`);
    this.http = ky.create({
      timeout: options.timeoutMs ?? 60_000,
      throwHttpErrors: true,
      redirect: 'manual',
      retry: {
        limit: options.retries ?? 4,
        methods: ['get', 'head', 'put', 'delete', 'options'],
        statusCodes: RETRY_STATUSES,
        afterStatusCodes: [413, 429, 503],
        maxRetryAfter: options.maxRetryAfterMs ?? 120_000,
        backoffLimit: 30_000,
        jitter: true,
      },
    });
    // strict: no window of a second ever sees more than the rate (the windowed default can burst 2×)
    const throttle = pThrottle({ limit: Math.max(1, options.ratePerSecond ?? 5), interval: 1000, strict: true });
    this.throttled = throttle(<T>(fn: () => Promise<T>) => fn()) as <T>(fn: () => Promise<T>) => Promise<T>;
  }

  resolve(url: string, searchParams?: RequestOptions['searchParams']): URL {
    const resolved = new URL(url.replace(/^\//, ''), this.baseUrl);
    for (const [key, value] of Object.entries(searchParams ?? {})) resolved.searchParams.set(key, String(value));
    return resolved;
  }

  /** True when `url` is on the API's own origin, the only one that sees the token. */
  isApiOrigin(url: URL): boolean {
    return url.origin === this.baseUrl.origin;
  }

  /**
   * Sends a request, follows redirects by hand (dropping Authorization on a host change),
   * and throws a FerryError for any status the caller did not `allow`.
   */
  async request(url: string, options: RequestOptions = {}): Promise<Response> {
    let target = this.resolve(url, options.searchParams);
    let method = (options.method ?? 'GET').toUpperCase();
    let body: BodyInit | undefined = toBody(options.body);
    let json = options.json;
    // credentials the caller set by hand (figshare's `Authorization: token`) are meant for
    // the origin it asked; once a redirect leaves that origin they stay behind for good
    let callerHeaders = options.headers ?? {};
    for (let hop = 0; hop < 6; hop++) {
      const response = await this.send(target, method, body, json, { ...options, headers: callerHeaders });
      if (response.status >= 300 && response.status < 400 && response.headers.has('location')) {
        await response.body?.cancel();
        const next = new URL(response.headers.get('location') as string, target);
        if (next.origin !== target.origin) callerHeaders = withoutCredentials(callerHeaders);
        target = next;
        if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === 'POST')) {
          method = 'GET';
          body = undefined;
          json = undefined;
        }
        continue;
      }
      if (response.ok || options.allow?.includes(response.status)) return response;
      throw await this.errorFor(response, [options.token, ...credentialValues(options.headers ?? {})]);
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
    if (!response.body) return { response, body: Readable.from([]) };
    return { response, body: Readable.fromWeb(response.body as unknown as WebReadableStream) };
  }

  private async send(target: URL, method: string, body: BodyInit | undefined, json: unknown, options: RequestOptions): Promise<Response> {
    const headers: Record<string, string> = { ...options.headers };
    if (this.isApiOrigin(target)) {
      Object.assign(headers, this.options.headers);
      if (options.token) headers.authorization = `Bearer ${options.token}`;
    }
    const streaming = body instanceof ReadableStream;
    const kyOptions: KyOptions & { duplex?: 'half' } = {
      method,
      headers,
      signal: options.signal,
      body,
      json,
      timeout: options.timeoutMs ?? this.options.timeoutMs ?? 60_000,
      ...(options.retry === false || streaming ? { retry: 0 } : {}),
      ...(streaming ? { duplex: 'half' } : {}),
    };
    try {
      return await this.throttled(() => this.http(target, kyOptions));
    } catch (error) {
      if (error instanceof HTTPError) return error.response;
      if (error instanceof TimeoutError) {
        throw new FerryError(504, 'upstream_unavailable', `${this.options.serviceName} did not answer in time; try again later.`);
      }
      if (options.signal?.aborted) throw error;
      throw new FerryError(502, 'upstream_unavailable', `${this.options.serviceName} could not be reached (${describeNetworkError(error)}).`);
    }
  }

  /** Maps a remote status to the API.md error the user sees. */
  async errorFor(response: Response, secrets: (string | null | undefined)[] = []): Promise<FerryError> {
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
          return new FerryError(response.status === 503 ? 503 : 502, response.status === 503 ? 'upstream_unavailable' : 'upstream_error', `${name} failed with HTTP ${response.status}${suffix}.`, retryAfter);
        }
        return new FerryError(502, 'upstream_error', `${name} answered HTTP ${response.status}${suffix}.`);
    }
  }
}

const CREDENTIAL_HEADER = /^(authorization|proxy-authorization|cookie)$|token|auth|api-?key|secret|session/i;

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

function toBody(body: RequestOptions['body']): BodyInit | undefined {
  if (body instanceof Readable) return Readable.toWeb(body) as unknown as ReadableStream;
  return body;
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
    return /<html/i.test(text) ? null : clip(text.trim()) || null;
  }
}

const clip = (text: string) => (text.length > 200 ? `${text.slice(0, 197)}...` : text);

function describeNetworkError(error: unknown): string {
  const cause = (error as { cause?: { code?: string } }).cause;
  if (cause?.code) return cause.code;
  return error instanceof Error ? error.message : 'network error';
}

/** Pages through a Link-header (RFC 8288) paginated collection: GitHub, GitLab, Zenodo. */
export function nextLink(linkHeader: string | null): string | null {
  if (!linkHeader) return null;
  for (const part of linkHeader.split(',')) {
    const match = /<([^>]+)>\s*;\s*rel="?([^";]+)"?/.exec(part.trim());
    if (match && match[2]?.split(/\s+/).includes('next')) return match[1] ?? null;
  }
  return null;
}
