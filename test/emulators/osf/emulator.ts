import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { randomBytes, randomUUID } from 'node:crypto';
import { closeServers, listenOnLoopback, readBody } from '../shared/http.js';
import { ERROR_SHAPES, type ErrorShape, type FaultPlan } from '../shared/faults.js';
import type { Latency } from '../shared/latency.js';
import { OsfState, escapeTitle, type EmuFileNode, type EmuNode, type LoggedRequest } from './state.js';
import { serializeFile, serializeNode, serializeProvider, serializeUser, serializeWaterbutler, type Urls, type Version } from './serialize.js';

/**
 * A local OSF: API v2 (JSON:API, versions 2.0–2.20, paging, filters, sort, 301 on a missing
 * trailing slash, the real error envelopes), WaterButler v1 (upload, mkdir, new versions,
 * 409/411/413/507, 302 to signed storage) on a second origin, a "storage" origin (GCS-like
 * signed URLs that refuse any Authorization header) and an osf.io web origin whose
 * download links answer an HTML sign-in page to anyone without a browser session.
 * Everything on loopback, port 0. Behaviour follows /work/shared/reference/osf.md.
 */
export interface OsfEmulatorOptions {
  /** default page size (OSF: 10) */
  defaultPageSize?: number;
  /** faults played in front of the servers: 'api', 'files' (WaterButler), 'storage', 'web' */
  faults?: FaultPlan;
  /** a round trip added to every request to every server, in front of the faults (the bench's latency rows) */
  latency?: Latency;
}

export interface OsfEmulator {
  apiUrl: string;
  filesUrl: string;
  storageUrl: string;
  webUrl: string;
  state: OsfState;
  close(): Promise<void>;
}

const MAX_PAGE_SIZE = 100;
const KNOWN_MINORS = 20;
const SIGN_IN_PAGE = '<!DOCTYPE html><html><head><title>OSF | Sign in</title></head><body><form action="/login">Sign in to OSF</form></body></html>';
const NODE_CATEGORIES = ['analysis', 'communication', 'data', 'hypothesis', 'instrumentation', 'methods and measures', 'procedure', 'project', 'software', 'other', ''];

class HttpAnswer extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly headers: Record<string, string> = {},
  ) {
    super(`HTTP ${status}`);
  }
}

export async function startOsfEmulator(options: OsfEmulatorOptions = {}): Promise<OsfEmulator> {
  const state = new OsfState();
  const pageSize = options.defaultPageSize ?? 10;
  const servers: Server[] = [];
  const listen = async (handler: (req: IncomingMessage, res: ServerResponse) => void, name: string, shape: ErrorShape): Promise<string> => {
    const server = createServer(handler);
    options.faults?.install(server, name, shape);
    options.latency?.install(server);
    // Node's default keep-alive (5 s, as the other emulators). It was 1 s, and undici subtracts
    // its own 1 s margin from a server's `Keep-Alive: timeout=1`, so every request opened a new
    // connection: a cost real OSF does not impose (COS's Helm chart puts nginx in front of its
    // services, whose keepalive_timeout is 75 s by default); the latency bench row paid it on
    // each of its 1,026 requests.
    server.keepAliveTimeout = 5000;
    servers.push(server);
    return `${await listenOnLoopback(server)}/`;
  };
  const urls: Urls = { api: '', files: '', web: '' };
  const api = new ApiServer(state, urls, pageSize);
  const files = new WaterbutlerServer(state, urls);
  let storageUrl = '';
  urls.api = `${await listen((req, res) => void api.handle(req, res), 'api', ERROR_SHAPES.osfApi)}v2/`;
  urls.files = await listen((req, res) => void files.handle(req, res, storageUrl), 'files', ERROR_SHAPES.waterbutler);
  storageUrl = await listen((req, res) => serveStorage(state, req, res), 'storage', ERROR_SHAPES.storage);
  urls.web = await listen((req, res) => {
    log(state, 'web', req, 200);
    // osf.io without a browser session: the download link answers a sign-in page (osf.md §2.6).
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(SIGN_IN_PAGE);
  }, 'web', ERROR_SHAPES.apache);
  return {
    apiUrl: urls.api,
    filesUrl: urls.files,
    storageUrl,
    webUrl: urls.web,
    state,
    close: () => closeServers(...servers),
  };
}

function log(state: OsfState, server: LoggedRequest['server'], req: IncomingMessage, status?: number): LoggedRequest {
  const entry: LoggedRequest = { server, method: req.method ?? 'GET', url: req.url ?? '/', authorization: req.headers.authorization !== undefined, accept: req.headers.accept, status, at: Date.now() };
  state.requests.push(entry);
  return entry;
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}, contentType = 'application/vnd.api+json; charset=utf-8') {
  const text = body === undefined ? '' : JSON.stringify(body);
  res.writeHead(status, { 'content-type': contentType, 'content-length': String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}

function faultAnswer(state: OsfState, server: LoggedRequest['server'], req: IncomingMessage, path: string): HttpAnswer | null {
  const fault = state.takeFault(server, req.method ?? 'GET', path);
  if (!fault) return null;
  const headers: Record<string, string> = {};
  if (fault.retryAfter !== undefined) headers['retry-after'] = String(fault.retryAfter);
  if (fault.contentType) headers['content-type'] = fault.contentType;
  if (fault.body !== undefined) return new HttpAnswer(fault.status, { raw: fault.body }, headers);
  const detail = fault.status === 429 ? `Request was throttled. Expected available in ${fault.retryAfter ?? 1} seconds.` : defaultDetail(fault.status);
  if (server === 'files') return new HttpAnswer(fault.status, fault.status === 507 ? { code: 507, message: 'The quota on this osfstorage project has been exceeded' } : { code: fault.status, message: detail }, headers);
  return new HttpAnswer(fault.status, { errors: [{ detail }], meta: { version: '2.0' } }, headers);
}

function defaultDetail(status: number): string {
  switch (status) {
    case 401: return 'User provided an invalid OAuth2 access token';
    case 403: return 'You do not have permission to perform this action.';
    case 404: return 'Not found.';
    case 409: return 'Resource identifier does not match server endpoint.';
    case 502: return 'Bad Gateway';
    case 503: return 'Service Unavailable';
    default: return `Error ${status}`;
  }
}

// ---------------------------------------------------------------------------------------
// API v2

interface ApiRequest {
  req: IncomingMessage;
  url: URL;
  segments: string[];
  version: Version;
  userId: string | null;
  scopes: string[];
}

class ApiServer {
  constructor(
    private readonly state: OsfState,
    private readonly urls: Urls,
    private readonly pageSize: number,
  ) {}

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const entry = log(this.state, 'api', req);
    const url = new URL(req.url ?? '/', this.urls.api);
    let version: Version = { text: '2.0', minor: 0 };
    try {
      const fault = faultAnswer(this.state, 'api', req, url.pathname);
      if (fault) throw fault;
      if (!url.pathname.startsWith('/v2/')) throw new HttpAnswer(404, { errors: [{ detail: 'Not found.' }] });
      if (!url.pathname.endsWith('/')) {
        // Canonical URLs end with '/': anything else is a permanent redirect (osf.md §1).
        throw new HttpAnswer(301, undefined, { location: `${url.pathname}/${url.search}` });
      }
      version = parseVersion(req, url);
      const auth = this.authenticate(req);
      const request: ApiRequest = { req, url, segments: url.pathname.split('/').filter(Boolean).slice(1), version, ...auth };
      const [status, body] = await this.route(request);
      entry.status = status;
      sendJson(res, status, status === 204 ? undefined : { ...body, meta: { ...(body as { meta?: object }).meta, version: version.text } });
    } catch (error) {
      const answer = error instanceof HttpAnswer ? error : new HttpAnswer(500, { errors: [{ detail: String(error) }] });
      entry.status = answer.status;
      if (answer.status === 301) {
        res.writeHead(301, answer.headers).end();
        return;
      }
      const body = answer.body as { raw?: string; errors?: unknown; meta?: object };
      if (body && typeof body.raw === 'string') {
        res.writeHead(answer.status, { 'content-type': 'application/vnd.api+json; charset=utf-8', ...answer.headers }).end(body.raw);
        return;
      }
      const headers = { ...answer.headers };
      if (answer.status === 401) headers['www-authenticate'] = 'Documentation realm="https://developer.osf.io/"';
      sendJson(res, answer.status, { ...body, meta: { version: version.text } }, headers);
    }
  }

  private authenticate(req: IncomingMessage): { userId: string | null; scopes: string[] } {
    const header = req.headers.authorization;
    if (!header) return { userId: null, scopes: [] };
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    const token = match ? this.state.tokens.get(match[1]!) : undefined;
    if (!token) throw new HttpAnswer(401, { errors: [{ detail: 'User provided an invalid OAuth2 access token' }] });
    return { userId: token.userId, scopes: token.scopes };
  }

  private async route(request: ApiRequest): Promise<[number, Record<string, unknown>]> {
    const { segments, req } = request;
    const method = req.method ?? 'GET';
    const [first, second, third, fourth, fifth] = segments;
    if (first === 'users' && second === 'me') {
      const userId = requireUser(request);
      if (segments.length === 2) return [200, { data: serializeUser(this.state.users.get(userId)!, this.urls) }];
      if (third === 'nodes' && segments.length === 3) {
        allow(method, ['GET']);
        const nodes = [...this.state.nodes.values()].filter((node) => !node.deleted && node.contributors.has(userId));
        return [200, this.page(request, nodes, (node) => serializeNode(this.state, node, userId, this.urls, request.version), nodeField, (a, b) => +b.modified - +a.modified)];
      }
    }
    if (first === 'nodes') {
      if (segments.length === 1) {
        allow(method, ['POST']);
        return this.createNode(request, null);
      }
      const node = this.visibleNode(request, second!);
      if (segments.length === 2) {
        allow(method, ['GET', 'DELETE']);
        if (method === 'DELETE') return this.deleteNode(request, node);
        return [200, { data: serializeNode(this.state, node, request.userId, this.urls, request.version) }];
      }
      if (third === 'children' && segments.length === 3) {
        if (method === 'POST') return this.createNode(request, node);
        allow(method, ['GET']);
        const children = [...this.state.nodes.values()].filter((child) => child.parent === node.id && !child.deleted && this.canRead(request, child));
        return [200, this.page(request, children, (child) => serializeNode(this.state, child, request.userId, this.urls, request.version), nodeField, (a, b) => +a.created - +b.created)];
      }
      if (third === 'contributors' && segments.length === 3) {
        // GET /v2/nodes/<id>/contributors/?embed=users: every contributor is bibliographic here
        allow(method, ['GET']);
        const contributors = [...node.contributors].map(([userId, permission], index) => ({ user: this.state.users.get(userId)!, permission, index }));
        const embed = request.url.searchParams.getAll('embed').includes('users');
        return [200, this.page(request, contributors, (c) => ({
          id: `${node.id}-${c.user.id}`,
          type: 'contributors',
          attributes: { bibliographic: true, permission: c.permission, index: c.index, unregistered_contributor: null },
          relationships: { users: { data: { id: c.user.id, type: 'users' } } },
          ...(embed ? { embeds: { users: { data: serializeUser(c.user, this.urls) } } } : {}),
        }), () => undefined, (a, b) => a.index - b.index)];
      }
      if (third === 'files') {
        allow(method, ['GET']);
        if (segments.length === 3) {
          // Quirk: NodeStorageProvidersList's queryset is a plain list, and OSF's ordering
          // filter (DRF 3.15.1 get_default_valid_fields reads `queryset.model`) raises on it
          // whenever `sort` is present: an unhandled AttributeError, Django's bare 500 page
          // (osf.io api/nodes/views.py, api/base/filters.py OSFOrderingFilter; pyproject pins
          // djangorestframework 3.15.1). docs/targets/osf.md, row "GET /v2/nodes/<id>/files/".
          if (request.url.searchParams.has('sort')) throw new HttpAnswer(500, { raw: '<h1>Server Error (500)</h1>' }, { 'content-type': 'text/html' });
          const providers = [...node.providers].map(([provider, rootId]) => ({ provider, rootId }));
          return [200, this.page(request, providers, (p) => serializeProvider(node, p.provider, p.rootId, this.urls), () => undefined, () => 0)];
        }
        const rootId = node.providers.get(fourth!);
        if (!rootId) throw notFound();
        let folder = this.state.files.get(rootId)!;
        if (segments.length === 5) {
          const sub = this.state.files.get(fifth!);
          if (!sub || sub.nodeId !== node.id || sub.provider !== fourth || sub.kind !== 'folder') throw notFound();
          folder = sub;
        } else if (segments.length > 5) throw notFound();
        const children = this.state.children(folder.id);
        // Without `sort` the real ORDER BY is on a column osfstorage never fills, so pages
        // repeat and skip files (osf.md §5.1). Model that: an arbitrary order per request.
        const unsorted = (a: EmuFileNode, b: EmuFileNode) => (hashOrder(a.id) + Math.random() * 1e9) - (hashOrder(b.id) + Math.random() * 1e9);
        return [200, this.page(request, children, (file) => serializeFile(this.state, file, this.urls, request.version), (file, field) => fileField(this.state, file, field), unsorted)];
      }
    }
    if (first === 'licenses' && second && segments.length === 2) {
      allow(method, ['GET']);
      const license = [...this.state.nodes.values()].find((node) => node.license?.id === second)?.license;
      if (!license) throw notFound();
      return [200, { data: { id: license.id, type: 'licenses', attributes: { name: license.name, text: '', url: '', required_fields: [] } } }];
    }
    if (first === 'files' && second && segments.length === 2) {
      allow(method, ['GET']);
      const file = this.state.files.get(second) ?? [...this.state.files.values()].find((f) => f.guid === second);
      if (!file) throw notFound();
      this.visibleNode(request, file.nodeId);
      return [200, { data: serializeFile(this.state, file, this.urls, request.version) }];
    }
    throw notFound();
  }

  private canRead(request: ApiRequest, node: EmuNode): boolean {
    return node.public || (request.userId !== null && node.contributors.has(request.userId));
  }

  private visibleNode(request: ApiRequest, id: string): EmuNode {
    const node = this.state.nodes.get(id);
    if (!node) throw notFound();
    if (node.deleted) throw new HttpAnswer(410, { errors: [{ detail: 'The requested resource is no longer available.' }] });
    if (!this.canRead(request, node)) {
      if (request.userId === null) throw new HttpAnswer(401, { errors: [{ detail: 'Authentication credentials were not provided.' }] });
      throw forbidden();
    }
    return node;
  }

  /**
   * `DELETE /v2/nodes/<id>/` → 204 (osf.io NodeDetail: AdminDeletePermissions; a node with
   * live components is refused with 400 "Any child components must be deleted prior to
   * deleting this project."). The node answers 410 afterwards.
   */
  private deleteNode(request: ApiRequest, node: EmuNode): [number, Record<string, unknown>] {
    const userId = requireUser(request);
    if (!request.scopes.includes('osf.full_write') || this.state.permissionOf(userId, node) !== 'admin') throw forbidden();
    if ([...this.state.nodes.values()].some((child) => child.parent === node.id && !child.deleted)) {
      throw new HttpAnswer(400, { errors: [{ detail: 'Any child components must be deleted prior to deleting this project.' }] });
    }
    node.deleted = true;
    return [204, {}];
  }

  private async createNode(request: ApiRequest, parent: EmuNode | null): Promise<[number, Record<string, unknown>]> {
    const userId = requireUser(request);
    if (!request.scopes.includes('osf.full_write')) throw forbidden();
    if (parent && !['write', 'admin'].includes(this.state.permissionOf(userId, parent) ?? '')) throw forbidden();
    let body: { data?: { type?: string; attributes?: Record<string, unknown> } };
    try {
      body = JSON.parse((await readBody(request.req)).toString('utf8') || '{}');
    } catch {
      throw new HttpAnswer(400, { errors: [{ detail: 'JSON parse error - Expecting value: line 1 column 1 (char 0)' }] });
    }
    if (body.data?.type !== 'nodes') {
      throw new HttpAnswer(409, { errors: [{ detail: 'This resource has a type of "nodes", but you set the json body\'s type field to "' + String(body.data?.type) + '". You probably need to change the type field to match the resource\'s type.' }] });
    }
    const attributes = body.data.attributes ?? {};
    const errors: { source: { pointer: string }; detail: string }[] = [];
    for (const field of ['title', 'category']) {
      if (!(field in attributes)) errors.push({ source: { pointer: `/data/attributes/${field}` }, detail: 'This field is required.' });
    }
    const title = typeof attributes.title === 'string' ? attributes.title : '';
    if ('title' in attributes && title.replace(/<[^>]*>/g, '').trim() === '') errors.push({ source: { pointer: '/data/attributes/title' }, detail: 'Title cannot be blank.' });
    if (title.length > 512) errors.push({ source: { pointer: '/data/attributes/title' }, detail: 'Ensure this field has no more than 512 characters.' });
    if ('category' in attributes && !NODE_CATEGORIES.includes(String(attributes.category))) {
      errors.push({ source: { pointer: '/data/attributes/category' }, detail: `"${String(attributes.category)}" is not a valid choice.` });
    }
    if (errors.length > 0) throw new HttpAnswer(400, { errors });
    const node = this.state.addNode({
      title,
      owner: userId,
      parent: parent?.id ?? null,
      category: String(attributes.category),
      public: attributes.public === true,
      description: typeof attributes.description === 'string' ? attributes.description : '',
      tags: Array.isArray(attributes.tags) ? attributes.tags.map(String) : [],
    });
    return [201, { data: serializeNode(this.state, node, userId, this.urls, request.version) }];
  }

  /** Page-number pagination as OSF's JSON:API paginator writes it (osf.md §1.4). */
  private page<T>(
    request: ApiRequest,
    all: T[],
    serialize: (item: T) => unknown,
    field: (item: T, name: string) => unknown,
    defaultOrder: (a: T, b: T) => number,
  ): Record<string, unknown> {
    const { url, version } = request;
    let items = applyFilters(all, url, field);
    const sort = url.searchParams.get('sort');
    if (sort) {
      const keys = sort.split(',').map((key) => ({ name: key.replace(/^-/, ''), descending: key.startsWith('-') }));
      items = [...items].sort((a, b) => {
        for (const key of keys) {
          const order = compare(field(a, key.name), field(b, key.name));
          if (order !== 0) return key.descending ? -order : order;
        }
        return 0;
      });
    } else {
      items = [...items].sort(defaultOrder);
    }
    const requestedSize = Number(url.searchParams.get('page[size]') ?? this.pageSize);
    const size = Math.min(MAX_PAGE_SIZE, Number.isInteger(requestedSize) && requestedSize > 0 ? requestedSize : this.pageSize);
    const pageCount = Math.max(1, Math.ceil(items.length / size));
    const pageText = url.searchParams.get('page') ?? '1';
    const page = Number(pageText);
    if (!Number.isInteger(page) || page < 1 || page > pageCount) throw new HttpAnswer(404, { errors: [{ detail: 'Invalid page.' }] });
    const pageUrl = (n: number) => {
      const query = new URLSearchParams([...url.searchParams].filter(([key]) => key !== 'page'));
      if (n > 1) query.set('page', String(n));
      const sorted = new URLSearchParams([...query].sort(([a], [b]) => a.localeCompare(b)));
      const text = sorted.toString();
      return `${this.urls.api.replace(/\/v2\/$/, '')}${url.pathname}${text ? `?${text}` : ''}`;
    };
    const single = pageCount === 1;
    const links: Record<string, unknown> = {
      first: single ? null : page === 1 ? null : pageUrl(1),
      last: single ? null : pageUrl(pageCount),
      prev: page > 1 ? pageUrl(page - 1) : null,
      next: page < pageCount ? pageUrl(page + 1) : null,
    };
    const data = items.slice((page - 1) * size, page * size).map(serialize);
    if (version.minor >= 1) {
      return { data, meta: { total: items.length, per_page: size }, links: { self: pageUrl(page), ...links } };
    }
    return { data, links: { ...links, meta: { total: items.length, per_page: size } } };
  }
}

function parseVersion(req: IncomingMessage, url: URL): Version {
  const header = /version=([\w.]+)/.exec(String(req.headers.accept ?? ''))?.[1];
  const query = url.searchParams.get('version') ?? undefined;
  if (header && query && header !== query) {
    throw new HttpAnswer(409, { errors: [{ detail: `Version ${query} specified in query parameter does not match version ${header} specified in Accept header.` }] });
  }
  const text = header ?? query ?? '2.0';
  const resolved = text === 'latest' ? `2.${KNOWN_MINORS}` : text;
  const match = /^2\.(\d+)$/.exec(resolved);
  if (!match || Number(match[1]) > KNOWN_MINORS) {
    throw new HttpAnswer(header ? 406 : 404, { errors: [{ detail: `Invalid version in "Accept" header.` }] });
  }
  return { text: resolved, minor: Number(match[1]) };
}

function requireUser(request: ApiRequest): string {
  if (request.userId === null) throw new HttpAnswer(401, { errors: [{ detail: 'Authentication credentials were not provided.' }] });
  return request.userId;
}

function allow(method: string, methods: string[]): void {
  if (!methods.includes(method)) throw new HttpAnswer(405, { errors: [{ detail: `Method "${method}" not allowed.` }] });
}

const notFound = () => new HttpAnswer(404, { errors: [{ detail: 'Not found.' }] });
const forbidden = () => new HttpAnswer(403, { errors: [{ detail: 'You do not have permission to perform this action.' }] });

function hashOrder(id: string): number {
  let h = 0;
  for (const c of id) h = (h * 31 + c.charCodeAt(0)) % 1e9;
  return h;
}

function nodeField(node: EmuNode, name: string): unknown {
  switch (name) {
    case 'id': return node.id;
    case 'title': return node.title;
    case 'description': return node.description;
    case 'category': return node.category;
    case 'public': return node.public;
    case 'parent': return node.parent;
    case 'tags': return node.tags;
    case 'date_created': return node.created.getTime();
    case 'date_modified': return node.modified.getTime();
    default: return undefined;
  }
}

function fileField(state: OsfState, file: EmuFileNode, name: string): unknown {
  switch (name) {
    case 'id': return file.id;
    case 'name': return file.name;
    case 'kind': return file.kind;
    case 'path': return `/${file.id}${file.kind === 'folder' ? '/' : ''}`;
    case 'size': return file.versions.at(-1)?.bytes.length ?? null;
    case 'provider': return file.provider;
    case 'tags': return file.tags;
    case 'date_modified': return file.versions.at(-1)?.modified.getTime() ?? null;
    case 'materialized_path': return state.materializedPath(file);
    default: return undefined;
  }
}

function compare(a: unknown, b: unknown): number {
  if (a === b) return 0;
  if (a === null || a === undefined) return -1;
  if (b === null || b === undefined) return 1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return String(a).localeCompare(String(b));
}

/**
 * `filter[field]` (strings: case-insensitive substring) and `filter[field][op]`. As OSF:
 * a CharField's default operator is `icontains` and its match operators `contains` and
 * `icontains` (osf.io api/base/filters.py DEFAULT_OPERATOR_OVERRIDES, MATCH_OPERATORS) —
 * what the target's search sends on `users/me/nodes/` (docs/targets/osf.md).
 */
function applyFilters<T>(items: T[], url: URL, field: (item: T, name: string) => unknown): T[] {
  let result = items;
  for (const [key, value] of url.searchParams) {
    const match = /^filter\[(\w+)\](?:\[(\w+)\])?$/.exec(key);
    if (!match) continue;
    const [, name, op] = match as unknown as [string, string, string | undefined];
    result = result.filter((item) => {
      const actual = field(item, name!);
      if (value === 'null') return actual === null || actual === undefined;
      if (Array.isArray(actual)) return actual.some((tag) => String(tag).toLowerCase() === value.toLowerCase());
      if (typeof actual === 'boolean') return actual === ['true', '1'].includes(value.toLowerCase());
      const text = actual === null || actual === undefined ? '' : String(actual);
      switch (op) {
        case 'eq': return text === value;
        case 'ne': return text !== value;
        case 'contains': return text.includes(value);
        default:
          if (name === 'id' || name === 'parent' || name === 'kind' || name === 'provider') return value.split(',').includes(text);
          return text.toLowerCase().includes(value.toLowerCase());
      }
    });
  }
  return result;
}

// ---------------------------------------------------------------------------------------
// WaterButler v1

class WaterbutlerServer {
  constructor(
    private readonly state: OsfState,
    private readonly urls: Urls,
  ) {}

  async handle(req: IncomingMessage, res: ServerResponse, storageUrl: string): Promise<void> {
    const entry = log(this.state, 'files', req);
    const url = new URL(req.url ?? '/', this.urls.files);
    const requestId = randomUUID();
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      entry.status = status;
      if (!res.headersSent) sendJson(res, status, body, { 'x-waterbutler-request-id': requestId, ...headers }, 'application/json; charset=UTF-8');
    };
    try {
      const fault = faultAnswer(this.state, 'files', req, url.pathname);
      if (fault) {
        const raw = (fault.body as { raw?: string }).raw;
        if (req.method === 'PUT') await readBody(req);
        if (typeof raw === 'string') {
          entry.status = fault.status;
          res.writeHead(fault.status, { 'content-type': 'application/json', 'x-waterbutler-request-id': requestId, ...fault.headers }).end(raw);
          return;
        }
        throw fault;
      }
      await this.route(req, res, url, storageUrl, send);
    } catch (error) {
      if (req.method === 'PUT' && !req.readableEnded) await readBody(req).catch(() => undefined);
      if (error instanceof HttpAnswer) send(error.status, error.body, error.headers);
      else send(500, { code: 500, message: String(error) });
    }
  }

  private async route(req: IncomingMessage, res: ServerResponse, url: URL, storageUrl: string, send: (s: number, b: unknown, h?: Record<string, string>) => void) {
    const match = /^\/v1\/resources\/([^/]+)\/providers\/([^/]+)(\/.*)$/.exec(url.pathname);
    if (!match) throw new HttpAnswer(404, { code: 404, message: 'Not found' });
    const [, nodeId, provider, path] = match as unknown as [string, string, string, string];
    const node = this.state.nodes.get(nodeId);
    if (!node || node.deleted) throw new HttpAnswer(node ? 410 : 404, { code: node ? 410 : 404, message: 'Resource not found' });
    const rootId = node.providers.get(provider);
    if (!rootId) throw new HttpAnswer(404, { code: 404, message: `Provider ${provider} is not configured` });
    const method = req.method ?? 'GET';
    const permission = this.authorize(req, node, method === 'GET' || method === 'HEAD' ? 'read' : 'write');

    // osfstorage paths are ids: "/" the root, "/<id>/" a folder, "/<id>" a file; the
    // slash must match the kind (osf.md §2.1).
    let target: EmuFileNode;
    if (path === '/') target = this.state.files.get(rootId)!;
    else {
      const id = path.replace(/^\//, '').replace(/\/$/, '');
      const found = this.state.files.get(id);
      const slashMatches = found && (found.kind === 'folder') === path.endsWith('/');
      if (!found || found.nodeId !== nodeId || found.provider !== provider || !slashMatches) {
        throw new HttpAnswer(404, { code: 404, message: `Could not retrieve file or directory ${path}` });
      }
      target = found;
    }
    void permission;

    if (method === 'GET') {
      if (target.kind === 'folder') {
        const children = this.state.children(target.id).map((child) => serializeWaterbutler(this.state, child, this.urls));
        return send(200, { data: children });
      }
      if (url.searchParams.has('meta')) return send(200, { data: serializeWaterbutler(this.state, target, this.urls) });
      const version = target.versions.length;
      if (url.searchParams.has('direct')) {
        const bytes = target.versions.at(-1)!.bytes;
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(bytes.length), 'x-waterbutler-request-id': randomUUID() }).end(bytes);
        return;
      }
      const key = randomBytes(16).toString('hex');
      this.state.signedUrls.set(key, { fileId: target.id, version, expires: Date.now() + 60_000 });
      const disposition = encodeURIComponent(`attachment; filename="${target.name.replace(/[^\x20-\x7e]/g, '')}"; filename*=UTF-8''${encodeURIComponent(target.name)}`);
      return send(302, undefined, { location: `${storageUrl}osf-storage/${key}?response-content-disposition=${disposition}&X-Goog-Signature=${key.slice(0, 8)}` });
    }
    if (method === 'PUT') return this.put(req, url, node, target, send);
    if (method === 'DELETE') {
      if (target.parentId === null && !url.searchParams.has('confirm_delete')) {
        throw new HttpAnswer(400, { code: 400, message: 'confirm_delete=1 is required for deleting root provider folder' });
      }
      this.state.removeTree(target);
      return send(204, undefined);
    }
    if (method === 'POST') return this.moveOrRename(req, node, target, send);
    throw new HttpAnswer(405, { code: 405, message: 'Method not allowed' });
  }

  /**
   * `POST <entity>` with a JSON body: WaterButler's move, copy and rename
   * (waterbutler/server/api/v1/provider/movecopy.py `move_or_copy`). Content-Length is
   * required (411); `action` must be copy, move or rename (400); a rename needs `rename`
   * and stays in its folder; a move needs `path`, a folder path with a trailing slash, in
   * `resource` (default: the source's node). `conflict` (default "replace",
   * waterbutler/constants.py) is applied as core/provider.py `handle_name_conflict`: "warn"
   * answers 409 when the name is taken, "replace" deletes what is there. The answer is the
   * entity at its new place: 201 when the name was free, 200 when something was replaced.
   * Only move and rename are emulated, for osfstorage (ids stay as they are).
   */
  private async moveOrRename(req: IncomingMessage, node: EmuNode, source: EmuFileNode, send: (s: number, b: unknown, h?: Record<string, string>) => void) {
    if (req.headers['content-length'] === undefined) throw new HttpAnswer(411, { code: 411, message: 'Content-Length is required' });
    let body: { action?: string; rename?: string; path?: string; resource?: string; provider?: string; conflict?: string };
    try {
      body = JSON.parse((await readBody(req)).toString('utf8'));
    } catch {
      throw new HttpAnswer(400, { code: 400, message: 'Invalid json body' });
    }
    const action = body.action ?? 'null';
    if (!['copy', 'move', 'rename'].includes(action)) throw new HttpAnswer(400, { code: 400, message: `Auth action must be "copy", "move", or "rename", not "${action}"` });
    if (action === 'copy') throw new HttpAnswer(501, { code: 501, message: 'copy is not emulated' });
    if (source.parentId === null) throw new HttpAnswer(400, { code: 400, message: 'Cannot move or rename a provider root' });
    let destination: EmuFileNode;
    if (action === 'rename') {
      if (!body.rename) throw new HttpAnswer(400, { code: 400, message: '"rename" field is required for renaming' });
      destination = this.state.files.get(source.parentId)!;
    } else {
      if (body.path === undefined) throw new HttpAnswer(400, { code: 400, message: '"path" field is required for moves or copies' });
      if (!body.path.endsWith('/')) throw new HttpAnswer(400, { code: 400, message: '"path" field requires a trailing slash to indicate it is a folder' });
      const destNode = this.state.nodes.get(body.resource ?? node.id);
      if (!destNode || destNode.deleted) throw new HttpAnswer(404, { code: 404, message: 'Resource not found' });
      const provider = body.provider ?? source.provider;
      if (destNode.id !== node.id) this.authorize(req, destNode, 'write');
      const rootId = destNode.providers.get(provider);
      if (!rootId) throw new HttpAnswer(404, { code: 404, message: `Provider ${provider} is not configured` });
      const folderId = body.path === '/' ? rootId : body.path.replace(/^\//, '').replace(/\/$/, '');
      const folder = this.state.files.get(folderId);
      if (!folder || folder.kind !== 'folder' || folder.nodeId !== destNode.id || folder.provider !== provider) {
        throw new HttpAnswer(404, { code: 404, message: `Could not retrieve file or directory ${body.path}` });
      }
      // not seen answered by WaterButler (Ferry never asks): keeps the emulator's tree a tree
      for (let up: EmuFileNode | undefined = folder; up; up = up.parentId ? this.state.files.get(up.parentId) : undefined) {
        if (up.id === source.id) throw new HttpAnswer(400, { code: 400, message: 'Cannot move a folder into itself' });
      }
      destination = folder;
    }
    const name = body.rename || source.name;
    const conflict = body.conflict ?? 'replace';
    const existing = this.state.children(destination.id).find((child) => child.name === name && child.kind === source.kind && child.id !== source.id);
    if (existing && conflict === 'warn') {
      throw new HttpAnswer(409, { message: `Cannot complete action: file or folder "${name}" already exists in this location`, data: serializeWaterbutler(this.state, existing, this.urls) });
    }
    if (existing && conflict !== 'replace') throw new HttpAnswer(501, { code: 501, message: `conflict=${conflict} is not emulated` });
    if (existing) this.state.removeTree(existing);
    this.state.moveTree(source, destination, name);
    return send(existing ? 200 : 201, { data: serializeWaterbutler(this.state, source, this.urls) });
  }

  private authorize(req: IncomingMessage, node: EmuNode, need: 'read' | 'write'): string | null {
    const header = req.headers.authorization;
    const match = header ? /^Bearer\s+(\S+)$/i.exec(header) : null;
    const token = match ? this.state.tokens.get(match[1]!) : undefined;
    if (header && !token) throw new HttpAnswer(401, { code: 401, referrer: null, message_short: 'Unauthorized', message_long: 'You must log in to access this resource.' });
    const permission = token ? this.state.permissionOf(token.userId, node) : null;
    const canRead = node.public || permission !== null;
    const canWrite = permission === 'write' || permission === 'admin';
    if (need === 'read' ? canRead : canWrite && token!.scopes.includes('osf.full_write')) return permission;
    if (!token) throw new HttpAnswer(401, { code: 401, referrer: null, message_short: 'Unauthorized', message_long: 'You must log in to access this resource.' });
    if (need === 'write' && canWrite) throw new HttpAnswer(403, { code: 403, referrer: null, message_short: 'Forbidden', message_long: 'Provided token has insufficient scope for this action' });
    throw new HttpAnswer(403, { code: 403, referrer: null, message_short: 'Forbidden', message_long: 'You do not have permission to perform this action.' });
  }

  private async put(req: IncomingMessage, url: URL, node: EmuNode, target: EmuFileNode, send: (s: number, b: unknown, h?: Record<string, string>) => void) {
    const kind = url.searchParams.get('kind') ?? 'file';
    const name = url.searchParams.get('name');
    const lengthHeader = req.headers['content-length'];
    if (target.kind === 'file') {
      if (name !== null) throw new HttpAnswer(400, { code: 400, message: "'name' parameter doesn't apply to actions on files" });
      if (kind === 'folder') throw new HttpAnswer(409, { code: 409, message: 'Cannot create a folder at a file path' });
      if (lengthHeader === undefined) throw new HttpAnswer(411, { code: 411, message: 'Content-Length is required for file uploads' });
      const bytes = await readBody(req);
      this.checkQuota(node, bytes.length - (target.versions.at(-1)?.bytes.length ?? 0));
      this.state.addVersion(target, bytes);
      return send(200, { data: serializeWaterbutler(this.state, target, this.urls) });
    }
    if (!name) throw new HttpAnswer(400, { code: 400, message: 'Missing required parameter \'name\'' });
    if (kind === 'folder') {
      if (Number(lengthHeader ?? 0) > 0 || req.headers['transfer-encoding']) throw new HttpAnswer(413, { code: 413, message: 'Folder creation requests may not have a body' });
      if (this.state.childNamed(target.id, name, 'folder')) {
        throw new HttpAnswer(409, { message: `Cannot complete action: file or folder "${name}" already exists in this location`, data: {} });
      }
      const folder = this.state.createChild(target, name, 'folder');
      return send(201, { data: serializeWaterbutler(this.state, folder, this.urls) });
    }
    if (lengthHeader === undefined) throw new HttpAnswer(411, { code: 411, message: 'Content-Length is required for file uploads' });
    // WaterButler reads the whole body before it answers 409 or 507 (osf.md §2.4, §2.5).
    const bytes = await readBody(req);
    if (bytes.length !== Number(lengthHeader)) throw new HttpAnswer(400, { code: 400, message: 'Request body did not match Content-Length' });
    const existing = this.state.childNamed(target.id, name, 'file');
    if (existing) {
      throw new HttpAnswer(409, { message: `Cannot complete action: file or folder "${name}" already exists in this location`, data: serializeWaterbutler(this.state, existing, this.urls) });
    }
    this.checkQuota(node, bytes.length);
    const file = this.state.createChild(target, name, 'file');
    this.state.addVersion(file, bytes);
    return send(201, { data: serializeWaterbutler(this.state, file, this.urls) });
  }

  private checkQuota(node: EmuNode, adding: number): void {
    if (this.state.usedBytes(node.id) + adding > node.quotaBytes) {
      throw new HttpAnswer(507, { code: 507, message: 'The quota on this osfstorage project has been exceeded' });
    }
  }
}

// ---------------------------------------------------------------------------------------
// Signed storage (GCS-like)

function serveStorage(state: OsfState, req: IncomingMessage, res: ServerResponse): void {
  const entry = log(state, 'storage', req);
  const url = new URL(req.url ?? '/', 'http://storage/');
  const refuse = (message: string) => {
    entry.status = 403;
    res.writeHead(403, { 'content-type': 'application/xml; charset=UTF-8' }).end(`<?xml version='1.0' encoding='UTF-8'?><Error><Code>AccessDenied</Code><Message>${message}</Message></Error>`);
  };
  const fault = state.takeFault('storage', req.method ?? 'GET', url.pathname);
  if (fault) {
    entry.status = fault.status;
    res.writeHead(fault.status, { 'content-type': fault.contentType ?? 'application/xml', ...(fault.retryAfter !== undefined ? { 'retry-after': String(fault.retryAfter) } : {}) }).end(fault.body ?? '');
    return;
  }
  // A signed URL carries its own authority; a forwarded Bearer token is refused (osf.md §2.6).
  if (req.headers.authorization !== undefined) return refuse('Multiple authentication mechanisms are not allowed (an Authorization header reached the storage host).');
  const key = /^\/osf-storage\/([0-9a-f]+)$/.exec(url.pathname)?.[1];
  const signed = key ? state.signedUrls.get(key) : undefined;
  if (!signed || signed.expires < Date.now()) return refuse('The signed URL is unknown or has expired.');
  const file = state.files.get(signed.fileId);
  const version = file?.versions[signed.version - 1];
  if (!file || !version) return refuse('No such object.');
  entry.status = 200;
  res.writeHead(200, {
    'content-type': 'application/octet-stream',
    'content-length': String(version.bytes.length),
    'content-disposition': url.searchParams.get('response-content-disposition') ?? 'attachment',
  }).end(version.bytes);
}

export { escapeTitle, OsfState };
