import { createHash, randomUUID } from 'node:crypto';
import http, { type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { closeServers, listenOnLoopback, readBody, sendJson } from '../shared/http.js';
import { ERROR_SHAPES, type FaultPlan } from '../shared/faults.js';
import { matchesQueryString } from '../shared/query-string.js';

/**
 * A loopback model of figshare's API v2 (remote-targets.md §4; shapes checked against the
 * trimmed real bodies in ./recorded/). Three servers, as on figshare:
 * - the API (`/v2/account/...`): projects, articles (inside projects or not), files,
 *   `Authorization: token <t>`; a bad or missing token answers 403 (what figshare does in
 *   practice, though its docs say 401); paging `page`+`page_size` or `limit`+`offset`
 *   (mixing → 422, offset past 1000 → 422), no totals or Link; error bodies `{message, code}`;
 * - the upload host (`/upload/<token>`): parts with zero-based inclusive offsets, PUT per part
 *   (wrong length → 400; a locked part → 409), and a fake S3 (`/s3/<id>`) that rejects any
 *   Authorization header, as S3 does for figshare's;
 * - the download host (`/files/<id>`, like ndownloader): private files need the token
 *   (`?token=` or the header); every download answers 302 to the fake S3 with a link signed
 *   for `signedUrlSeconds` (figshare's: 10 s, `X-Amz-Expires=10` in the recorded
 *   ../shared/reference/recordings/figshare/ndownloader-private-file.302.empty), which the
 *   storage host refuses with S3's 403 "Request has expired" once that time is up;
 * - projects shared with collaborators: a collaborator reads the project's items through
 *   `/account/projects/<pid>/articles/<id>[/files[/<fid>]]`; the owner-scoped
 *   `/account/articles/<id>` routes answer 404 to anyone but the item's owner (the project's
 *   owner) — swagger: separate "Project article details" / "Project article list files" /
 *   "Project article file details" operations, and 404 for what a token cannot read;
 * - link-only files (`is_link_only: true`) whose `download_url` is a URL on another host,
 *   served by an `elsewhere` server that records what reaches it;
 * After the complete call a file is `moving_to_final` with `computed_md5: ""` for
 * `processingReads` reads of it, then `available` with the MD5 filled in (figshare computes
 * it asynchronously). Politeness: more than `maxPerSecond` API requests a second per token → 429.
 */
export interface FigshareFile {
  id: number;
  articleId: number;
  name: string;
  size: number;
  suppliedMd5: string;
  computedMd5: string;
  status: 'created' | 'moving_to_final' | 'available';
  uploadToken: string;
  bytes: Buffer;
  /** set for a link-only file: where its download_url points */
  link?: string;
  parts: { partNo: number; startOffset: number; endOffset: number; status: 'PENDING' | 'COMPLETE'; locked: boolean; data?: Buffer }[];
  /** reads left before processing finishes */
  pendingReads: number;
}

export interface FigshareArticle {
  id: number;
  owner: number;
  projectId: number | null;
  title: string;
  description: string;
  definedType: string;
  created: string;
  modified: string;
  isPublic: boolean;
  files: FigshareFile[];
  /** the ArticleCreate fields beyond title, description and defined_type, as sent (authors, keywords, license, references, funding_list, timeline) */
  described: { authors?: { name?: string; orcid_id?: string }[]; keywords?: string[]; license?: number; references?: string[]; funding_list?: { title: string }[]; timeline?: Record<string, string> };
}

/**
 * figshare's public licences (GET /licenses, /account/licenses: `{value, name, url}`); an
 * institution adds its own. Only these values are accepted as an item's `license`.
 */
export const FIGSHARE_LICENSES = [
  { value: 1, name: 'CC BY 4.0', url: 'https://creativecommons.org/licenses/by/4.0/' },
  { value: 2, name: 'CC0', url: 'https://creativecommons.org/publicdomain/zero/1.0/' },
  { value: 3, name: 'MIT', url: 'https://opensource.org/licenses/MIT' },
  { value: 4, name: 'GPL', url: 'https://www.gnu.org/licenses/gpl.html' },
  { value: 5, name: 'GPL 2.0+', url: 'https://www.gnu.org/licenses/gpl-2.0.html' },
  { value: 6, name: 'GPL 3.0+', url: 'https://www.gnu.org/licenses/gpl-3.0.html' },
  { value: 7, name: 'Apache 2.0', url: 'https://www.apache.org/licenses/LICENSE-2.0.html' },
];

export interface FigshareProject {
  id: number;
  owner: number;
  /** accounts the project is shared with */
  collaborators: Set<number>;
  title: string;
  created: string;
  modified: string;
}

export interface FigshareEmulatorOptions {
  tokens?: Record<string, number>;
  /** bytes per upload part (figshare's is about 10 MB; tests make it small) */
  partSize?: number;
  /** API requests per second per token before 429 (figshare asks for ≤ 1) */
  maxPerSecond?: number;
  /** reads of a completed file that still show `computed_md5: ""` */
  processingReads?: number;
  /** how long a signed S3 download link stays valid, seconds (figshare: 10) */
  signedUrlSeconds?: number;
  /** faults played in front of the servers: 'api', 'upload' (with the fake S3), 'download', 'elsewhere' */
  faults?: FaultPlan;
}

/** One request as a server saw it: which host, whether it carried a credential, when. */
export interface FigshareExchange {
  host: 'api' | 'upload' | 's3' | 'download' | 'elsewhere';
  method: string;
  path: string;
  query: string;
  /** an Authorization header, or a `token` / `access_token` query parameter */
  credential: boolean;
  at: number;
}

export interface FigshareState {
  tokens: Record<string, number>;
  projects: Map<number, FigshareProject>;
  articles: Map<number, FigshareArticle>;
  options: Required<Omit<FigshareEmulatorOptions, 'tokens' | 'faults'>>;
  requests: string[];
  exchanges: FigshareExchange[];
  /** the next N API requests answer 429 */
  throttle: { count: number };
  addProject(owner: number, title: string, collaborators?: number[]): FigshareProject;
  /** a link-only file in `article`, pointing at `url` */
  addLinkFile(article: FigshareArticle, name: string, url: string): FigshareFile;
  addArticle(owner: number, title: string, projectId: number | null, files?: Record<string, string | Buffer>, options?: { public?: boolean; processing?: boolean }): FigshareArticle;
  /** finishes processing of every completed file */
  processAll(): void;
}

export interface FigshareEmulator {
  /** the API base, like https://api.figshare.com/v2 */
  url: string;
  uploadUrl: string;
  downloadUrl: string;
  /** a host that is not figshare's (where link-only files point) */
  elsewhereUrl: string;
  state: FigshareState;
  close(): Promise<void>;
}

const stamp = () => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
const md5 = (bytes: Buffer) => createHash('md5').update(bytes).digest('hex');

export async function startFigshareEmulator(options: FigshareEmulatorOptions = {}): Promise<FigshareEmulator> {
  let nextId = 4_000_000;
  const state: FigshareState = {
    tokens: options.tokens ?? { 'figshare-token': 1, 'figshare-other': 2 },
    projects: new Map(),
    articles: new Map(),
    options: { partSize: options.partSize ?? 10 * 1024 * 1024, maxPerSecond: options.maxPerSecond ?? 1000, processingReads: options.processingReads ?? 1, signedUrlSeconds: options.signedUrlSeconds ?? 10 },
    requests: [],
    exchanges: [],
    throttle: { count: 0 },
    addProject(owner, title, collaborators = []) {
      const project = { id: nextId++, owner, collaborators: new Set(collaborators), title, created: stamp(), modified: stamp() };
      state.projects.set(project.id, project);
      return project;
    },
    addArticle(owner, title, projectId, files = {}, flags = {}) {
      const article: FigshareArticle = {
        id: nextId++, owner, projectId, title, description: '', definedType: 'dataset', created: stamp(), modified: stamp(), isPublic: Boolean(flags.public), files: [], described: {},
      };
      for (const [name, content] of Object.entries(files)) {
        const bytes = Buffer.isBuffer(content) ? content : Buffer.from(content);
        article.files.push({
          id: nextId++, articleId: article.id, name, size: bytes.length, suppliedMd5: md5(bytes), computedMd5: flags.processing ? '' : md5(bytes),
          status: flags.processing ? 'moving_to_final' : 'available', uploadToken: randomUUID(), bytes, parts: [], pendingReads: flags.processing ? Number.POSITIVE_INFINITY : 0,
        });
      }
      state.articles.set(article.id, article);
      return article;
    },
    addLinkFile(article, name, url) {
      const file: FigshareFile = {
        id: nextId++, articleId: article.id, name, size: 0, suppliedMd5: '', computedMd5: '', status: 'available', uploadToken: randomUUID(), bytes: Buffer.alloc(0), link: url, parts: [], pendingReads: 0,
      };
      article.files.push(file);
      return file;
    },
    processAll() {
      for (const article of state.articles.values()) for (const file of article.files) if (file.status === 'moving_to_final') finishProcessing(file);
    },
  };

  const seen = new Map<string, number[]>();
  let api = '';
  let upload = '';
  let download = '';
  let elsewhere = '';

  function exchange(host: FigshareExchange['host'], req: IncomingMessage, url: URL): void {
    const credential = req.headers.authorization !== undefined || url.searchParams.has('token') || url.searchParams.has('access_token');
    state.exchanges.push({ host, method: req.method ?? 'GET', path: url.pathname, query: url.search, credential, at: Date.now() });
  }

  /** Owner, or a collaborator on the project the article sits in. */
  function canRead(article: FigshareArticle, account: number): boolean {
    if (article.owner === account) return true;
    const project = article.projectId === null ? undefined : state.projects.get(article.projectId);
    return project !== undefined && project.collaborators.has(account);
  }
  const member = (project: FigshareProject, account: number) => project.owner === account || project.collaborators.has(account);

  function finishProcessing(file: FigshareFile): void {
    file.pendingReads = 0;
    file.computedMd5 = md5(file.bytes);
    file.status = 'available';
  }

  /** A read of a file advances its processing by one step. */
  function observe(file: FigshareFile): void {
    if (file.status !== 'moving_to_final') return;
    if (file.pendingReads <= 0) finishProcessing(file);
    else file.pendingReads--;
  }

  function serializeFile(file: FigshareFile): Record<string, unknown> {
    return {
      status: file.status,
      is_link_only: file.link !== undefined,
      name: file.name,
      viewer_type: '',
      preview_state: 'preview_not_available',
      download_url: file.link ?? `${download}/files/${file.id}`,
      supplied_md5: file.suppliedMd5,
      computed_md5: file.status === 'available' ? file.computedMd5 : '',
      upload_token: file.uploadToken,
      upload_url: file.status === 'created' ? `${upload}/upload/${file.uploadToken}` : '',
      id: file.id,
      size: file.size,
      is_attached_to_public_version: false,
      mimetype: 'application/octet-stream',
    };
  }

  function serializeArticleSummary(a: FigshareArticle): Record<string, unknown> {
    const url = a.projectId ? `${api}/account/projects/${a.projectId}/articles/${a.id}` : `${api}/account/articles/${a.id}`;
    return {
      id: a.id, title: a.title, doi: '', handle: '', url, url_public_html: `https://figshare.com/articles/_/${a.id}`, url_public_api: `${api}/articles/${a.id}`,
      url_private_html: `https://figshare.com/account/articles/${a.id}`, url_private_api: `${api}/account/articles/${a.id}`,
      published_date: a.isPublic ? a.modified : null, timeline: { posted: a.isPublic ? a.modified : null, firstOnline: a.isPublic ? a.modified : null, ...a.described.timeline },
      thumb: '', defined_type: 3, defined_type_name: a.definedType, group_id: null, resource_title: null, resource_doi: null,
      created_date: a.created, modified_date: a.modified,
    };
  }

  function serializeArticle(a: FigshareArticle): Record<string, unknown> {
    for (const file of a.files) observe(file);
    return {
      ...serializeArticleSummary(a),
      group_resource_id: null, embargo_date: null, citation: `${a.title}. figshare.`, embargo_reason: '', references: a.described.references ?? [], custom_fields: [],
      size: a.files.reduce((s, f) => s + f.size, 0), metadata_reason: '', funding: '', figshare_url: `https://figshare.com/articles/_/${a.id}`,
      embargo_type: null, is_embargoed: false, version: a.isPublic ? 1 : 0, confidential_reason: '',
      files: a.files.map(serializeFile), description: a.description, tags: a.described.keywords ?? [], keywords: a.described.keywords ?? [], is_active: true,
      // without authors sent, figshare names the account's owner
      authors: a.described.authors?.length
        ? a.described.authors.map((author, i) => ({ url_name: '_', is_active: false, id: 100 + i, full_name: author.name ?? '', orcid_id: author.orcid_id ?? '' }))
        : [{ url_name: '_', is_active: true, id: 1, full_name: 'Jane Doe', orcid_id: '' }],
      is_public: a.isPublic, categories: [],
      is_confidential: false, license: FIGSHARE_LICENSES.find((l) => l.value === (a.described.license ?? 1)),
      funding_list: (a.described.funding_list ?? []).map((f, i) => ({ id: 200 + i, title: f.title, grant_code: '', funder_name: '', is_user_defined: 1, url: '' })),
      has_linked_file: false, status: a.isPublic ? 'public' : 'draft', is_metadata_record: false, download_disabled: false,
    };
  }

  function serializeProject(p: FigshareProject, complete: boolean, viewer: number): Record<string, unknown> {
    const summary = { id: p.id, title: p.title, url: `${api}/account/projects/${p.id}`, published_date: null, role: p.owner === viewer ? 'Owner' : 'Collaborator', storage: 'individual', group_id: null, created_date: p.created, modified_date: p.modified };
    if (!complete) return summary;
    return { ...summary, description: '', funding: '', quota: 0, used_quota: 0, used_quota_private: 0, used_quota_public: 0, collaborators: [], figshare_url: `https://figshare.com/projects/_/${p.id}`, account_id: p.owner };
  }

  // ---------------------------------------------------------------- API server
  async function handleApi(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', api);
    const method = req.method ?? 'GET';
    state.requests.push(`${method} ${url.pathname}${url.search}`);
    exchange('api', req, url);
    const body = await readBody(req);
    if (state.throttle.count > 0) {
      state.throttle.count--;
      return sendJson(res, 429, { message: 'Too many requests', code: 'TooManyRequests' });
    }
    const token = /^token\s+(.+)$/i.exec(req.headers.authorization ?? '')?.[1] ?? url.searchParams.get('access_token');
    const owner = token ? state.tokens[token] : undefined;
    if (owner === undefined) return sendJson(res, 403, { message: 'Invalid or expired token', code: 'Forbidden' });
    // A second, less a little for the jitter between a client's send and our receipt.
    const times = (seen.get(token as string) ?? []).filter((t) => Date.now() - t < 900);
    times.push(Date.now());
    seen.set(token as string, times);
    if (times.length > state.options.maxPerSecond) return sendJson(res, 429, { message: 'Too many requests', code: 'TooManyRequests' });

    const path = url.pathname.replace(/^\/v2/, '').replace(/\/+$/, '');
    let m: RegExpExecArray | null;
    const json = (): Record<string, unknown> | null => {
      if (body.length === 0) return {};
      try {
        return JSON.parse(body.toString('utf8')) as Record<string, unknown>;
      } catch {
        return null;
      }
    };

    if (path === '/account') return sendJson(res, 200, { id: owner, first_name: 'Jane', last_name: 'Doe', used_quota_private: 0, quota: 20 * 1024 ** 3 });

    if (path === '/account/licenses' && method === 'GET') return sendJson(res, 200, FIGSHARE_LICENSES);
    if (path === '/account/projects' && method === 'GET') {
      const page = paginate(url, res, [...state.projects.values()].filter((p) => member(p, owner)).sort((a, b) => a.id - b.id));
      return void (page && sendJson(res, 200, page.map((p) => serializeProject(p, false, owner))));
    }
    if (path === '/account/projects' && method === 'POST') {
      const data = json();
      if (!data) return sendJson(res, 400, { message: 'Invalid JSON', code: 'BadRequest' });
      const title = String(data.title ?? '');
      if (title.length < 3 || title.length > 1000) return sendJson(res, 422, { message: 'Title must be between 3 and 1000 characters', code: 'InvalidParams' });
      const project = state.addProject(owner, title);
      return sendJson(res, 201, { entity_id: project.id, location: `${api}/account/projects/${project.id}` });
    }
    if ((m = /^\/account\/projects\/(\d+)$/.exec(path)) && method === 'GET') {
      const project = state.projects.get(Number(m[1]));
      if (!project || !member(project, owner)) return notFound(res, 'Project');
      return sendJson(res, 200, serializeProject(project, true, owner));
    }
    if ((m = /^\/account\/projects\/(\d+)\/articles$/.exec(path))) {
      const project = state.projects.get(Number(m[1]));
      if (!project || !member(project, owner)) return notFound(res, 'Project');
      if (method === 'GET') {
        const page = paginate(url, res, [...state.articles.values()].filter((a) => a.projectId === project.id).sort((a, b) => a.id - b.id));
        return void (page && sendJson(res, 200, page.map(serializeArticleSummary)));
      }
      // an item made in a project belongs to the project's owner
      if (method === 'POST') return createArticle(project.owner, project.id, json(), res);
    }
    // The project-scoped item routes, for the project's owner and its collaborators.
    if ((m = /^\/account\/projects\/(\d+)\/articles\/(\d+)(\/files(?:\/(\d+))?)?$/.exec(path))) {
      const project = state.projects.get(Number(m[1]));
      const article = state.articles.get(Number(m[2]));
      if (!project || !member(project, owner)) return notFound(res, 'Project');
      if (!article || article.projectId !== project.id) return notFound(res, 'Article');
      if (!m[3] && method === 'GET') return sendJson(res, 200, serializeArticle(article));
      if (!m[3] && method === 'DELETE') {
        state.articles.delete(article.id);
        res.statusCode = 204;
        return void res.end();
      }
      if (m[3] && !m[4] && method === 'GET') {
        for (const file of article.files) observe(file);
        const page = paginate(url, res, article.files);
        return void (page && sendJson(res, 200, page.map(serializeFile)));
      }
      if (m[4] && method === 'GET') {
        const file = article.files.find((f) => f.id === Number(m?.[4]));
        if (!file) return notFound(res, 'File');
        observe(file);
        return sendJson(res, 200, serializeFile(file));
      }
    }
    if (path === '/account/articles' && method === 'GET') {
      // Includes articles that sit in projects (the client must not list them twice).
      const page = paginate(url, res, [...state.articles.values()].filter((a) => a.owner === owner).sort((a, b) => a.id - b.id));
      return void (page && sendJson(res, 200, page.map(serializeArticleSummary)));
    }
    if (path === '/account/articles/search' && method === 'POST') {
      // "Search own articles" (user_documentation docs/api/articles.md): the token owner's
      // items only; `search_for` at least 4 characters; `page` at most 100 and `page_size` at
      // most 100; spaces are OR and a term matches any metadata field (docs/Search/search.md
      // "Quick Search"; stemming is not modelled: shared/query-string.ts). A bare array.
      const body = json() ?? {};
      const searchFor = typeof body.search_for === 'string' ? body.search_for : '';
      const page = Number(body.page ?? 1);
      const size = Number(body.page_size ?? 10);
      if (searchFor.trim().length < 4) return sendJson(res, 400, { message: 'search_for must have at least 4 characters', code: 'InvalidParams' });
      if (!Number.isInteger(page) || page < 1 || page > 100 || !Number.isInteger(size) || size < 1 || size > 100) {
        return sendJson(res, 400, { message: 'Max page reached. Please narrow down your search', code: 'InvalidParams' });
      }
      const mine = [...state.articles.values()].filter((a) => a.owner === owner && matchesQueryString(searchFor, [a.title, a.description])).sort((a, b) => b.modified.localeCompare(a.modified) || b.id - a.id);
      return sendJson(res, 200, mine.slice((page - 1) * size, page * size).map(serializeArticleSummary));
    }
    if (path === '/account/articles' && method === 'POST') return createArticle(owner, null, json(), res);
    if ((m = /^\/account\/articles\/(\d+)$/.exec(path)) && (method === 'GET' || method === 'DELETE')) {
      // Owner-scoped: a collaborator on the item's project gets 404 here (swagger: "Article
      // details" of the account's own items, separate "Project article details" routes, and
      // 404 for what a token may not read — docs/api/index.md). docs/targets/figshare.md.
      const article = state.articles.get(Number(m[1]));
      if (!article || article.owner !== owner) return notFound(res, 'Article');
      if (method === 'GET') return sendJson(res, 200, serializeArticle(article));
      // swagger "Delete article": 204
      state.articles.delete(article.id);
      res.statusCode = 204;
      return void res.end();
    }
    if ((m = /^\/account\/articles\/(\d+)\/files$/.exec(path))) {
      const article = state.articles.get(Number(m[1]));
      if (!article || article.owner !== owner) return notFound(res, 'Article');
      if (method === 'GET') {
        for (const file of article.files) observe(file);
        const page = paginate(url, res, article.files);
        return void (page && sendJson(res, 200, page.map(serializeFile)));
      }
      if (method === 'POST') {
        const data = json();
        if (!data) return sendJson(res, 400, { message: 'Invalid JSON', code: 'BadRequest' });
        const name = String(data.name ?? '');
        const size = Number(data.size);
        if (!name || !Number.isInteger(size) || size < 0) return sendJson(res, 422, { message: 'Missing or invalid name or size', code: 'InvalidParams' });
        const file: FigshareFile = {
          id: nextId++, articleId: article.id, name, size, suppliedMd5: typeof data.md5 === 'string' ? data.md5 : '', computedMd5: '', status: 'created',
          uploadToken: randomUUID(), bytes: Buffer.alloc(0), parts: [], pendingReads: 0,
        };
        for (let start = 0, no = 1; start < size; start += state.options.partSize, no++) {
          file.parts.push({ partNo: no, startOffset: start, endOffset: Math.min(size, start + state.options.partSize) - 1, status: 'PENDING', locked: false });
        }
        article.files.push(file);
        article.modified = stamp();
        return sendJson(res, 201, { location: `${api}/account/articles/${article.id}/files/${file.id}` });
      }
    }
    if ((m = /^\/account\/articles\/(\d+)\/files\/(\d+)$/.exec(path))) {
      const article = state.articles.get(Number(m[1]));
      if (!article || article.owner !== owner) return notFound(res, 'Article');
      const file = article.files.find((f) => f.id === Number(m?.[2]));
      if (!file) return notFound(res, 'File');
      if (method === 'GET') {
        observe(file);
        return sendJson(res, 200, serializeFile(file));
      }
      if (method === 'DELETE') {
        article.files = article.files.filter((f) => f !== file);
        res.statusCode = 204;
        return void res.end();
      }
      if (method === 'POST') {
        if (file.status !== 'created') return sendJson(res, 400, { message: 'File upload already completed', code: 'BadRequest' });
        if (file.parts.some((p) => p.status !== 'COMPLETE')) return sendJson(res, 400, { message: 'Not all parts were uploaded', code: 'BadRequest' });
        file.bytes = Buffer.concat(file.parts.map((p) => p.data as Buffer));
        file.parts = [];
        file.status = 'moving_to_final';
        file.pendingReads = state.options.processingReads;
        if (file.pendingReads <= 0) finishProcessing(file);
        res.statusCode = 202;
        res.setHeader('content-type', 'text/html; charset=utf-8');
        return void res.end('<html><body><h1>202 Accepted</h1></body></html>');
      }
    }
    return sendJson(res, 404, { message: 'Resource not found', code: 'NotFound' });
  }

  function createArticle(owner: number, projectId: number | null, data: Record<string, unknown> | null, res: ServerResponse): void {
    if (!data) return sendJson(res, 400, { message: 'Invalid JSON', code: 'BadRequest' });
    const title = String(data.title ?? '');
    if (title.length < 3 || title.length > 1000) return sendJson(res, 422, { message: 'Title must be between 3 and 1000 characters', code: 'InvalidParams' });
    const article = state.addArticle(owner, title, projectId);
    article.description = String(data.description ?? '');
    if (typeof data.defined_type === 'string') article.definedType = data.defined_type;
    const refused = describedFields(data);
    if (typeof refused === 'string') {
      state.articles.delete(article.id);
      return sendJson(res, 422, { message: refused, code: 'InvalidParams' });
    }
    article.described = refused;
    const location = projectId ? `${api}/account/projects/${projectId}/articles/${article.id}` : `${api}/account/articles/${article.id}`;
    sendJson(res, 201, { entity_id: article.id, location, warnings: [] });
  }

  /**
   * ArticleCreate's descriptive fields (swagger `ArticleCreate`): `authors` objects of id, name,
   * first_name, last_name, email, orcid_id, at most 10; `keywords` strings; `license` one of the
   * account's licence values; `references` URLs; `funding_list` `{id?, title}`; `timeline`
   * dates YYYY-MM-DD. Anything else in them: a sentence, as figshare's 422.
   */
  function describedFields(data: Record<string, unknown>): FigshareArticle['described'] | string {
    const described: FigshareArticle['described'] = {};
    if (data.authors !== undefined) {
      if (!Array.isArray(data.authors) || data.authors.length > 10) return 'authors: at most 10 authors';
      const allowed = new Set(['id', 'name', 'first_name', 'last_name', 'email', 'orcid_id']);
      if (data.authors.some((a) => !a || typeof a !== 'object' || Object.keys(a as object).some((k) => !allowed.has(k)))) return 'authors: unknown author field';
      described.authors = data.authors as { name?: string; orcid_id?: string }[];
    }
    if (data.keywords !== undefined) {
      if (!Array.isArray(data.keywords) || data.keywords.some((k) => typeof k !== 'string')) return 'keywords: a list of strings';
      described.keywords = data.keywords as string[];
    }
    if (data.license !== undefined) {
      if (!FIGSHARE_LICENSES.some((l) => l.value === data.license)) return 'license: invalid license value';
      described.license = data.license as number;
    }
    if (data.references !== undefined) {
      if (!Array.isArray(data.references) || data.references.some((r) => typeof r !== 'string' || !/^https?:\/\//.test(r))) return 'references: each must be a URL';
      described.references = data.references as string[];
    }
    if (data.funding_list !== undefined) {
      if (!Array.isArray(data.funding_list) || data.funding_list.some((f) => typeof (f as { title?: unknown })?.title !== 'string')) return 'funding_list: each needs a title';
      described.funding_list = data.funding_list as { title: string }[];
    }
    if (data.timeline !== undefined) {
      const timeline = data.timeline as Record<string, unknown>;
      const keys = ['firstOnline', 'publisherPublication', 'publisherAcceptance'];
      if (!timeline || typeof timeline !== 'object' || Object.entries(timeline).some(([k, v]) => !keys.includes(k) || typeof v !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(v))) return 'timeline: dates YYYY-MM-DD';
      described.timeline = timeline as Record<string, string>;
    }
    return described;
  }

  function paginate<T>(url: URL, res: ServerResponse, items: T[]): T[] | null {
    const p = url.searchParams;
    const pageMode = p.has('page') || p.has('page_size');
    const offsetMode = p.has('limit') || p.has('offset');
    if (pageMode && offsetMode) {
      sendJson(res, 422, { message: 'Pagination parameters page/page_size and limit/offset cannot be mixed', code: 'InvalidParams' });
      return null;
    }
    const size = Number(p.get(pageMode ? 'page_size' : 'limit') ?? 10);
    const offset = pageMode ? (Number(p.get('page') ?? 1) - 1) * size : Number(p.get('offset') ?? 0);
    if (!Number.isInteger(size) || size < 1 || size > 1000 || !Number.isInteger(offset) || offset < 0 || offset > 1000) {
      sendJson(res, 422, { message: 'Invalid pagination: offset may not exceed 1000', code: 'InvalidParams' });
      return null;
    }
    return items.slice(offset, offset + size);
  }

  // ---------------------------------------------------------------- upload host (+ fake S3)
  async function handleUpload(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', upload);
    const method = req.method ?? 'GET';
    state.requests.push(`UPLOAD ${method} ${url.pathname}`);
    exchange(url.pathname.startsWith('/s3/') ? 's3' : 'upload', req, url);
    const body = await readBody(req);
    let m: RegExpExecArray | null;
    if ((m = /^\/s3\/(\d+)$/.exec(url.pathname))) {
      // A presigned URL used after X-Amz-Date + X-Amz-Expires: S3 answers 403 AccessDenied
      // "Request has expired" (AWS S3 user guide, "Sharing objects with presigned URLs";
      // figshare's links expire after 10 s: recordings/figshare/ndownloader-private-file.302.empty).
      const signedAt = Number(url.searchParams.get('X-Amz-Date-Ms') ?? NaN);
      const expires = Number(url.searchParams.get('X-Amz-Expires') ?? NaN);
      if (!(Date.now() <= signedAt + expires * 1000)) {
        res.statusCode = 403;
        res.setHeader('content-type', 'application/xml');
        return void res.end('<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>');
      }
      if (req.headers.authorization) {
        res.statusCode = 400;
        res.setHeader('content-type', 'application/xml');
        return void res.end('<?xml version="1.0" encoding="UTF-8"?><Error><Code>InvalidArgument</Code><Message>Unsupported Authorization Type</Message></Error>');
      }
      const file = findFile(Number(m[1]));
      if (!file) return sendJson(res, 404, { message: 'NoSuchKey' });
      res.setHeader('content-length', String(file.bytes.length));
      return void res.end(file.bytes);
    }
    m = /^\/upload\/([0-9a-f-]+)(?:\/(\d+))?$/.exec(url.pathname);
    const file = m ? findByUploadToken(m[1] as string) : undefined;
    if (!m || !file) return sendJson(res, 404, { message: 'Upload not found', code: 'NotFound' });
    if (!m[2] && method === 'GET') {
      return sendJson(res, 200, {
        token: file.uploadToken, md5: file.suppliedMd5, size: file.size, name: `${file.id}/${file.name}`, status: file.parts.every((p) => p.status === 'COMPLETE') ? 'COMPLETED' : 'PENDING',
        parts: file.parts.map(({ partNo, startOffset, endOffset, status, locked }) => ({ partNo, startOffset, endOffset, status, locked })),
      });
    }
    const part = file.parts.find((p) => p.partNo === Number(m?.[2]));
    if (!part) return sendJson(res, 404, { message: 'Part not found', code: 'NotFound' });
    if (method === 'PUT') {
      if (part.locked) return sendJson(res, 409, { message: 'Part is locked', code: 'Conflict' });
      if (body.length !== part.endOffset - part.startOffset + 1) return sendJson(res, 400, { message: 'Part size mismatch', code: 'BadRequest' });
      part.data = body;
      part.status = 'COMPLETE';
      res.setHeader('content-type', 'text/plain');
      return void res.end('OK');
    }
    if (method === 'DELETE') {
      part.data = undefined;
      part.status = 'PENDING';
      res.setHeader('content-type', 'text/plain');
      return void res.end('OK');
    }
    if (method === 'GET') return sendJson(res, 200, { partNo: part.partNo, startOffset: part.startOffset, endOffset: part.endOffset, status: part.status, locked: part.locked });
    return sendJson(res, 405, { message: 'Method not allowed' });
  }

  // ---------------------------------------------------------------- download host
  async function handleDownload(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', download);
    state.requests.push(`DOWNLOAD ${req.method} ${url.pathname}`);
    exchange('download', req, url);
    await readBody(req);
    const m = /^\/files\/(\d+)$/.exec(url.pathname);
    const file = m ? findFile(Number(m[1])) : undefined;
    const article = file ? state.articles.get(file.articleId) : undefined;
    if (!file || !article || file.status === 'created' || file.link !== undefined) return sendJson(res, 404, { message: 'File not found', code: 'NotFound' });
    if (!article.isPublic) {
      const token = url.searchParams.get('token') ?? /^token\s+(.+)$/i.exec(req.headers.authorization ?? '')?.[1];
      const account = token ? state.tokens[token] : undefined;
      if (account === undefined || !canRead(article, account)) return sendJson(res, 403, { message: 'Forbidden', code: 'Forbidden' });
    }
    // Private and public alike: 302 to S3, signed for a few seconds (recorded: X-Amz-Expires=10;
    // the signing time travels as X-Amz-Date-Ms here so the emulator can check it to the ms).
    res.statusCode = 302;
    res.setHeader('content-disposition', `attachment;filename=${file.name}`);
    res.setHeader('location', `${upload}/s3/${file.id}?X-Amz-Date-Ms=${Date.now()}&X-Amz-Expires=${state.options.signedUrlSeconds}&X-Amz-Signature=fake`);
    res.end();
  }

  // ---------------------------------------------------------------- a host that is not figshare's
  async function handleElsewhere(req: IncomingMessage, res: ServerResponse): Promise<void> {
    exchange('elsewhere', req, new URL(req.url ?? '/', elsewhere));
    await readBody(req);
    res.setHeader('content-type', 'text/plain');
    res.end('bytes kept somewhere else');
  }

  function findFile(id: number): FigshareFile | undefined {
    for (const article of state.articles.values()) for (const file of article.files) if (file.id === id) return file;
    return undefined;
  }
  function findByUploadToken(token: string): FigshareFile | undefined {
    for (const article of state.articles.values()) for (const file of article.files) if (file.uploadToken === token && file.status === 'created') return file;
    return undefined;
  }

  const servers = [serve(handleApi), serve(handleUpload), serve(handleDownload), serve(handleElsewhere)];
  ['api', 'upload', 'download', 'elsewhere'].forEach((name, i) => options.faults?.install(servers[i]!, name, ERROR_SHAPES.figshare));
  const bases = await Promise.all(servers.map(listenOnLoopback));
  api = `${bases[0]}/v2`;
  upload = bases[1]!;
  download = bases[2]!;
  elsewhere = bases[3]!;
  return {
    url: api,
    uploadUrl: upload,
    downloadUrl: download,
    elsewhereUrl: elsewhere,
    state,
    close: () => closeServers(...servers),
  };
}

function serve(handler: (req: IncomingMessage, res: ServerResponse) => Promise<void>): Server {
  return http.createServer((req, res) => {
    handler(req, res).catch((error: unknown) => sendJson(res, 500, { message: `emulator error: ${String(error)}`, code: 'InternalError' }));
  });
}


const notFound = (res: ServerResponse, what: string) => sendJson(res, 404, { message: `${what} not found`, code: 'EntityNotFound', data: null });
