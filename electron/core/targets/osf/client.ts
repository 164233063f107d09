import { Readable } from 'node:stream';
import { FerryError } from '../../errors.js';
import { RemoteClient, type RequestOptions } from '../../remote/http.js';
import { bodyStream } from '../../remote/node-answer.js';
import type { OsfNodeFields } from '../../metadata/osf.js';

/**
 * OSF API v2 and WaterButler v1 over RemoteClient (retries honouring Retry-After, polite
 * rate, timeouts; streamed uploads are given as body factories, so they are retried too).
 * The API version is pinned (2.20: top-level `meta`, `Z` dates). Paging sends
 * `page[size]=100`, follows `links.next` verbatim and drops repeated ids (osf.md §5.1); it
 * sends an explicit `sort` on every collection that is a real queryset, and none on a node's
 * storage-provider list, where OSF answers a `sort` with HTTP 500 (docs/targets/osf.md).
 *
 * The token reaches OSF hosts only: the API client sends it to the API origin, and one
 * client per file-server origin sends it there. File-server URLs are only ever taken from
 * the API's own links, never built; a redirect from the file server to the storage host
 * (a signed URL) is followed without the token.
 */
export const OSF_API_VERSION = '2.20';

export interface OsfClientOptions {
  apiUrl: string;
  ratePerSecond?: number;
  timeoutMs?: number;
  retries?: number;
}

export interface JsonApiResource {
  id: string;
  type: string;
  /** differ per type and API version: every read checks what it gets */
  attributes: Record<string, unknown>;
  relationships?: Record<string, { links?: { related?: { href: string } }; data?: { id: string; type: string } | null }>;
  links?: Record<string, string>;
}

/** What OSF reported in a file's `attributes.extra.hashes` (values unchecked; absent → {}). */
export function reportedHashes(resource: JsonApiResource): Record<string, unknown> {
  const extra = resource.attributes.extra as { hashes?: Record<string, unknown> | null } | null | undefined;
  return extra?.hashes ?? {};
}

interface JsonApiList {
  data: JsonApiResource[];
  links?: { next?: string | null };
}

const MESSAGES = {
  unauthorized: 'The OSF token is invalid or expired. Create a new one at https://osf.io/settings/tokens (scopes osf.full_read, osf.full_write).',
  forbidden: 'The OSF token has no access to this resource (the account must be a contributor, and writing needs the osf.full_write scope)',
};

export class OsfClient {
  readonly api: RemoteClient;
  private readonly fileServers = new Map<string, RemoteClient>();

  constructor(private readonly options: OsfClientOptions) {
    this.api = new RemoteClient({
      baseUrl: options.apiUrl,
      serviceName: 'OSF',
      ratePerSecond: options.ratePerSecond ?? 5,
      timeoutMs: options.timeoutMs,
      retries: options.retries,
      headers: { accept: `application/vnd.api+json; version=${OSF_API_VERSION}` },
      messages: MESSAGES,
    });
  }

  async get(path: string, token: string, signal?: AbortSignal): Promise<JsonApiResource> {
    return (await this.apiJson<{ data: JsonApiResource }>(canonical(path), { token, signal })).data;
  }

  private async apiJson<T>(url: string, options: RequestOptions): Promise<T> {
    const response = await this.api.request(url, options);
    return (await response.json()) as T;
  }

  /**
   * Every item of a paged collection, each id once. `sort` is required: without it OSF
   * orders files by a column osfstorage never fills, and pages repeat and skip items.
   * Files sort by `name`, nodes by `date_created` (fields OSF documents as sortable).
   */
  list(path: string, token: string, params: { sort: string } & Record<string, string>, signal?: AbortSignal): AsyncGenerator<JsonApiResource> {
    return this.pages(path, token, params, signal);
  }

  /**
   * A node's storage providers (`GET /v2/nodes/<id>/files/`), never with `sort`: that view's
   * queryset is a plain list, and OSF's ordering filter (DRF 3.15.1
   * `get_default_valid_fields` reads `queryset.model`) fails on it with HTTP 500 whenever a
   * `sort` is given (osf.io api/nodes/views.py NodeStorageProvidersList). Its default order
   * is fixed (`ordering = ('-id',)`), and a node has a handful of providers: one page.
   */
  providers(guid: string, token: string, signal?: AbortSignal): AsyncGenerator<JsonApiResource> {
    return this.pages(`nodes/${guid}/files/`, token, {}, signal);
  }

  /**
   * A node's contributors with their users embedded (`GET /v2/nodes/<id>/contributors/?embed=users`),
   * in the node's own order (OSF's default ordering of that list is the contributor index).
   */
  contributors(guid: string, token: string, signal?: AbortSignal): AsyncGenerator<JsonApiResource> {
    return this.pages(`nodes/${guid}/contributors/`, token, { embed: 'users' }, signal);
  }

  private async *pages(path: string, token: string, params: Record<string, string>, signal?: AbortSignal): AsyncGenerator<JsonApiResource> {
    const seen = new Set<string>();
    let next: string | null = canonical(path);
    let searchParams: Record<string, string> | undefined = { ...params, 'page[size]': '100' };
    while (next) {
      const page: JsonApiList = await this.apiJson<JsonApiList>(next, { token, signal, searchParams });
      for (const item of page.data) {
        if (seen.has(item.id)) continue;
        seen.add(item.id);
        yield item;
      }
      next = page.links?.next ?? null;
      // `next` already carries sort, filters and page[size]: follow it verbatim.
      searchParams = undefined;
    }
  }

  /** `described`: the attributes a transfer's descriptive metadata gives it (metadata/osf.ts). */
  async createProject(title: string, token: string, signal?: AbortSignal, described: OsfNodeFields = {}): Promise<JsonApiResource> {
    const response = await this.api.request('nodes/', {
      method: 'POST',
      token,
      signal,
      json: { data: { type: 'nodes', attributes: { title, category: 'project', public: false, ...described } } },
      headers: { 'content-type': 'application/vnd.api+json' },
    });
    return ((await response.json()) as { data: JsonApiResource }).data;
  }

  /**
   * Deletes a node (`DELETE /v2/nodes/<id>/` → 204; osf.io NodeDetail.perform_destroy, which
   * refuses a node with components). It cleans up after a cancelled job: `signal` is one the
   * cancel does not fire (detachedSignal, remote/retry-notice.ts).
   */
  async deleteNode(guid: string, token: string, signal?: AbortSignal): Promise<void> {
    const response = await this.api.request(`nodes/${guid}/`, { method: 'DELETE', token, signal });
    await response.body?.cancel();
  }

  /** The client for a file-server URL the API handed out (its origin gets the token). */
  fileServer(url: string): RemoteClient {
    const origin = new URL(url).origin;
    let client = this.fileServers.get(origin);
    if (!client) {
      client = new RemoteClient({
        baseUrl: `${origin}/`,
        serviceName: 'OSF',
        ratePerSecond: this.options.ratePerSecond ?? 5,
        timeoutMs: this.options.timeoutMs,
        retries: this.options.retries,
        messages: MESSAGES,
      });
      this.fileServers.set(origin, client);
    }
    return client;
  }

  /**
   * Downloads a file through its WaterButler URL (osf.md §2.6): Bearer to the file server,
   * the 302 to signed storage followed without it. A 200 HTML page is OSF's sign-in page.
   */
  async download(wbUrl: string, name: string, token: string | null, signal?: AbortSignal): Promise<Readable> {
    const response = await this.fileServer(wbUrl).request(wbUrl, { token, signal });
    const body = bodyStream(response);
    if (/text\/html/i.test(response.headers.get('content-type') ?? '')) {
      body.destroy();
      throw new FerryError(
        401,
        'unauthorized',
        `OSF answered with a sign-in page instead of the file '${name}': the token was not accepted for it. Check that the OSF token is valid and has the osf.full_read scope.`,
      );
    }
    return body;
  }

  /** A request without a streamed body to a file-server URL taken from the API's links. */
  fileRequest(url: string, options: RequestOptions): Promise<Response> {
    return this.fileServer(url).request(url, options);
  }

  /**
   * An upload to a file-server URL (a PUT: retried on 429/5xx and broken connections like
   * every other request); `options.body` is a factory, called afresh for each attempt.
   */
  upload(url: string, options: RequestOptions): Promise<Response> {
    return this.fileServer(url).request(url, options);
  }
}

/** API paths end with '/' (a missing slash costs a 301, and a POST body would be lost). */
function canonical(path: string): string {
  if (/^https?:/.test(path)) return path;
  const [base, query] = path.split('?') as [string, string | undefined];
  return `${base.endsWith('/') ? base : `${base}/`}${query ? `?${query}` : ''}`;
}

/** OSF returns titles HTML-escaped (osf.md §5.6). */
export function unescapeHtml(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|amp|lt|gt|quot|apos|#39);/gi, (whole, entity: string) => {
    const lower = entity.toLowerCase();
    if (lower === 'amp') return '&';
    if (lower === 'lt') return '<';
    if (lower === 'gt') return '>';
    if (lower === 'quot') return '"';
    if (lower === 'apos') return "'";
    const code = lower.startsWith('#x') ? parseInt(lower.slice(2), 16) : parseInt(lower.slice(1), 10);
    return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
  });
}

/** A WaterButler entity URL without its query (`?kind=file` and the like). */
export function withoutQuery(url: string): string {
  const parsed = new URL(url);
  parsed.search = '';
  return parsed.toString();
}
