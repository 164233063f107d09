import { createHash, randomUUID } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { closeServers, listenOnLoopback, readBody, sendJson } from '../shared/http.js';
import { ERROR_SHAPES, type FaultPlan } from '../shared/faults.js';
import { matchesQueryString } from '../shared/query-string.js';

/**
 * A loopback model of Zenodo's legacy deposit API as served since the 2023 move to
 * InvenioRDM (zenodo/zenodo-rdm `site/zenodo_rdm/legacy/**`), built from
 * /work/shared/reference/remote-targets.md §3 and checked against recorded bodies in
 * ./recorded/. What it models:
 * - `GET /api/deposit/depositions?page&size` → a bare JSON array (no total, no Link
 *   header by default — the InvenioRDM serializer unwraps `hits.hits`; `linkHeader: true`
 *   restores the pre-2023 Link header);
 * - deposition JSON with `links.bucket`, `files[]` whose `checksum` is bare hex (the legacy
 *   file serializer strips `md5:`), states `unsubmitted` / `done`;
 * - bucket `PUT /api/files/<bucket>/<key>` → 201 with `checksum: "md5:<hex>"`; refuses empty
 *   files, a locked (published) bucket, more than `maxFiles` files and the size quota;
 * - file content at `/api/records/<id>/draft/files/<key>/content` (only while the record has
 *   a draft) and `/api/records/<id>/files/<key>/content` (published); the legacy
 *   `links.download` is the `/draft/` one for every deposition, published or not (a quirk:
 *   see serializeLegacyFile);
 * - publish / newversion actions; 401 (bad token), 403 (anonymous, other owner, locked),
 *   404, 415 (JSON without Content-Type), 429 with Retry-After;
 * - the real quirk that ordinary 2xx responses carry `retry-after: 60` and X-RateLimit-*.
 */
export interface ZenodoFile {
  id: string;
  key: string;
  bytes: Buffer;
  md5: string;
  created: string;
  updated: string;
  versionId: string;
}

export interface ZenodoDeposition {
  id: number;
  conceptrecid: string;
  owner: number;
  created: string;
  modified: string;
  metadata: Record<string, unknown>;
  submitted: boolean;
  state: 'unsubmitted' | 'inprogress' | 'done';
  bucketId: string;
  files: ZenodoFile[];
}

export interface ZenodoEmulatorOptions {
  /** token → owner id */
  tokens?: Record<string, number>;
  maxFiles?: number;
  /** bytes per record (quota) */
  maxRecordBytes?: number;
  /** send the pre-2023 Link header on list pages */
  linkHeader?: boolean;
  /** requests per minute per token before 429 */
  ratePerMinute?: number;
  /** faults played in front of the server ('api') */
  faults?: FaultPlan;
}

export interface ZenodoState {
  depositions: Map<number, ZenodoDeposition>;
  tokens: Record<string, number>;
  options: Required<Omit<ZenodoEmulatorOptions, 'tokens' | 'faults'>>;
  /** the next N requests answer 429 with this Retry-After (seconds) */
  throttle: { count: number; retryAfter: number };
  /**
   * bucket keys whose bytes this storage damages on the way in (one byte flipped); like Zenodo
   * it answers the checksum of what it stored, so a client that compares learns of it
   */
  damageOnStore: Set<string>;
  /** every request, for assertions: "METHOD /path?query" */
  requests: string[];
  /** every request with whether it carried a credential (header or query) and when it came */
  exchanges: { method: string; path: string; query: string; credential: boolean; at: number }[];
  nextId: number;
  addDeposition(owner: number, title: string, files?: Record<string, string | Buffer>, published?: boolean): ZenodoDeposition;
}

export interface ZenodoEmulator {
  url: string;
  state: ZenodoState;
  close(): Promise<void>;
}

const now = () => new Date().toISOString().replace('Z', '+00:00');
const md5 = (bytes: Buffer) => createHash('md5').update(bytes).digest('hex');

export async function startZenodoEmulator(options: ZenodoEmulatorOptions = {}): Promise<ZenodoEmulator> {
  const state: ZenodoState = {
    depositions: new Map(),
    tokens: options.tokens ?? { 'zenodo-token': 1, 'zenodo-other': 2 },
    options: {
      maxFiles: options.maxFiles ?? 100,
      maxRecordBytes: options.maxRecordBytes ?? 50 * 10 ** 9,
      linkHeader: options.linkHeader ?? false,
      ratePerMinute: options.ratePerMinute ?? 100_000,
    },
    throttle: { count: 0, retryAfter: 1 },
    damageOnStore: new Set(),
    requests: [],
    exchanges: [],
    nextId: 1000,
    addDeposition(owner, title, files = {}, published = false) {
      const id = state.nextId++;
      const time = now();
      const deposition: ZenodoDeposition = {
        id,
        conceptrecid: String(id - 1),
        owner,
        created: time,
        modified: time,
        metadata: { title, upload_type: 'dataset', description: `${title} description`, creators: [{ name: 'Doe, Jane' }] },
        submitted: published,
        state: published ? 'done' : 'unsubmitted',
        bucketId: randomUUID(),
        files: [],
      };
      for (const [key, content] of Object.entries(files)) {
        const bytes = Buffer.isBuffer(content) ? content : Buffer.from(content);
        deposition.files.push({ id: randomUUID(), key, bytes, md5: md5(bytes), created: time, updated: time, versionId: randomUUID() });
      }
      state.depositions.set(id, deposition);
      return deposition;
    },
  };
  const windows = new Map<string, number[]>();

  const server = http.createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      sendJson(res, 500, { message: `emulator error: ${String(error)}`, status: 500 });
    });
  });

  let base = '';

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', base);
    const method = req.method ?? 'GET';
    state.requests.push(`${method} ${url.pathname}${url.search}`);
    state.exchanges.push({ method, path: url.pathname, query: url.search, credential: Boolean(req.headers.authorization ?? url.searchParams.get('access_token')), at: Date.now() });
    const body = await readBody(req);

    if (state.throttle.count > 0) {
      state.throttle.count--;
      res.setHeader('retry-after', String(state.throttle.retryAfter));
      return sendJson(res, 429, { message: 'Too Many Requests', status: 429 });
    }

    // Authorization: Bearer <token> or ?access_token=
    const header = req.headers.authorization ?? '';
    const token = /^Bearer\s+(.+)$/i.exec(header)?.[1] ?? url.searchParams.get('access_token');
    const owner = token ? state.tokens[token] : undefined;
    if (token && owner === undefined) {
      return sendJson(res, 401, { message: 'The server could not verify that you are authorized to access the URL requested. You either supplied the wrong credentials (e.g. a bad password), or your browser doesn\'t understand how to supply the credentials required.', status: 401 });
    }
    if (owner === undefined) return sendJson(res, 403, { message: "You don't have the permission to access the requested resource. It is either read-protected or not readable by the server.", status: 403 });

    // Rate limit per token, per rolling minute (docs: 100/min authenticated).
    const times = (windows.get(token as string) ?? []).filter((t) => Date.now() - t < 60_000);
    times.push(Date.now());
    windows.set(token as string, times);
    res.setHeader('x-ratelimit-limit', String(state.options.ratePerMinute));
    res.setHeader('x-ratelimit-remaining', String(Math.max(0, state.options.ratePerMinute - times.length)));
    res.setHeader('x-ratelimit-reset', String(Math.ceil(Date.now() / 1000) + 60));
    if (times.length > state.options.ratePerMinute) {
      res.setHeader('retry-after', '60');
      return sendJson(res, 429, { message: 'Too Many Requests', status: 429 });
    }
    // Real 2025 sandbox traffic carries retry-after on ordinary successes too.
    res.setHeader('retry-after', '60');

    const path = url.pathname.replace(/\/+$/, '');
    let match: RegExpExecArray | null;

    if (path === '/api/deposit/depositions') {
      if (method === 'GET') return listDepositions(url, owner, res);
      if (method === 'POST') {
        if (body.length > 0 && !isJson(req)) return unsupportedMediaType(res);
        const parsed = body.length ? (JSON.parse(body.toString('utf8')) as { metadata?: Record<string, unknown> }) : {};
        const deposition = state.addDeposition(owner, '');
        deposition.metadata = { ...(parsed.metadata ?? {}) };
        return sendJson(res, 201, serializeDeposition(deposition));
      }
      return methodNotAllowed(res);
    }

    if ((match = /^\/api\/deposit\/depositions\/(\d+)$/.exec(path))) {
      const deposition = own(Number(match[1]), owner, res);
      if (!deposition) return;
      if (method === 'GET') return sendJson(res, 200, serializeDeposition(deposition));
      if (method === 'PUT') {
        if (!isJson(req)) return unsupportedMediaType(res);
        if (deposition.submitted && deposition.state === 'done') return sendJson(res, 403, { message: 'You do not have permission to edit a published record without calling edit first.', status: 403 });
        const parsed = JSON.parse(body.toString('utf8')) as { metadata?: Record<string, unknown> };
        deposition.metadata = { ...(parsed.metadata ?? {}) };
        deposition.modified = now();
        return sendJson(res, 200, serializeDeposition(deposition));
      }
      if (method === 'DELETE') {
        if (deposition.submitted) return sendJson(res, 403, { message: 'You cannot delete a published record.', status: 403 });
        state.depositions.delete(deposition.id);
        res.statusCode = 204;
        return void res.end();
      }
      return methodNotAllowed(res);
    }

    if ((match = /^\/api\/deposit\/depositions\/(\d+)\/files$/.exec(path)) && method === 'GET') {
      const deposition = own(Number(match[1]), owner, res);
      if (!deposition) return;
      return sendJson(res, 200, deposition.files.map((file) => serializeLegacyFile(deposition, file)));
    }

    if ((match = /^\/api\/deposit\/depositions\/(\d+)\/actions\/(publish|newversion)$/.exec(path)) && method === 'POST') {
      const deposition = own(Number(match[1]), owner, res);
      if (!deposition) return;
      if (match[2] === 'publish') {
        const errors = ['title', 'upload_type', 'description', 'creators']
          .filter((field) => !deposition.metadata[field])
          .map((field) => ({ field: `metadata.${field}`, message: 'Missing data for required field.' }));
        if (deposition.files.length === 0) errors.push({ field: 'files', message: 'Missing uploaded files.' });
        if (errors.length) return sendJson(res, 400, { message: 'A validation error occurred.', status: 400, errors });
        deposition.submitted = true;
        deposition.state = 'done';
        deposition.modified = now();
        return sendJson(res, 202, serializeDeposition(deposition));
      }
      if (!deposition.submitted) return sendJson(res, 400, { message: 'The record is not published.', status: 400 });
      const draft = state.addDeposition(owner, String(deposition.metadata.title ?? ''));
      draft.conceptrecid = deposition.conceptrecid;
      draft.metadata = { ...deposition.metadata };
      draft.files = deposition.files.map((file) => ({ ...file, versionId: randomUUID() }));
      const serialized = serializeDeposition(deposition);
      (serialized.links as Record<string, string>).latest_draft = `${base}/api/deposit/depositions/${draft.id}`;
      return sendJson(res, 201, serialized);
    }

    if ((match = /^\/api\/files\/([0-9a-f-]+)\/(.+)$/.exec(url.pathname))) {
      const bucketId = match[1] as string;
      const key = decodeURIComponent(match[2] as string);
      const deposition = [...state.depositions.values()].find((d) => d.bucketId === bucketId);
      if (!deposition) return sendJson(res, 404, { message: 'Bucket does not exist.', status: 404 });
      if (deposition.owner !== owner) return forbidden(res);
      if (method === 'PUT') {
        // invenio-files-rest needs the length up front (no chunked uploads).
        if (req.headers['content-length'] === undefined) return sendJson(res, 411, { message: 'Content-Length required.', status: 411 });
        return putObject(deposition, key, body, res);
      }
      if (method === 'DELETE') {
        if (deposition.submitted) return sendJson(res, 403, { message: 'Bucket is locked.', status: 403 });
        const before = deposition.files.length;
        deposition.files = deposition.files.filter((file) => file.key !== key);
        if (before === deposition.files.length) return sendJson(res, 404, { message: 'Object does not exist.', status: 404 });
        res.statusCode = 204;
        return void res.end();
      }
      return methodNotAllowed(res);
    }

    if ((match = /^\/api\/records\/(\d+)(\/draft)?\/files\/(.+)\/content$/.exec(url.pathname)) && method === 'GET') {
      const deposition = own(Number(match[1]), owner, res);
      if (!deposition) return;
      const key = (match[3] as string).split('/').map(decodeURIComponent).join('/');
      const file = deposition.files.find((f) => f.key === key);
      // `/draft/` exists while the record has a draft: unpublished, or published and opened
      // for editing (state "inprogress"); a published record without one answers 404 here,
      // though its legacy links.download points here (zenodo-rdm issue #1196). The
      // published files live at /api/records/<id>/files/<key>/content.
      const hasDraft = !deposition.submitted || deposition.state === 'inprogress';
      const served = match[2] ? hasDraft : deposition.submitted;
      if (!file || !served) return sendJson(res, 404, { message: 'The requested file does not exist.', status: 404 });
      res.statusCode = 200;
      res.setHeader('content-type', 'application/octet-stream');
      res.setHeader('content-length', String(file.bytes.length));
      res.setHeader('content-disposition', `attachment; filename=${encodeURIComponent(file.key)}`);
      return void res.end(file.bytes);
    }

    return sendJson(res, 404, { message: 'The requested URL was not found on the server. If you entered the URL manually please check your spelling and try again.', status: 404 });
  }

  function listDepositions(url: URL, owner: number, res: ServerResponse): void {
    const page = Math.max(1, Number(url.searchParams.get('page') ?? 1) || 1);
    const size = Number(url.searchParams.get('size') ?? 10) || 10;
    if (size > 100) return sendJson(res, 400, { message: 'A validation error occurred.', status: 400, errors: [{ field: 'size', message: 'Must be between 1 and 100.' }] });
    // the search's result window: page·size past 10,000 is refused (invenio-records-resources
    // services/records/params/pagination.py, config.py default_max_results)
    if (page * size > 10_000) return sendJson(res, 400, { message: 'Invalid pagination parameters.', status: 400 });
    const mine = [...state.depositions.values()].filter((d) => d.owner === owner).sort((a, b) => b.id - a.id);
    const status = url.searchParams.get('status');
    const byStatus = status === 'draft' ? mine.filter((d) => !d.submitted) : status === 'published' ? mine.filter((d) => d.submitted) : mine;
    // `q`: the legacy list is zenodo-rdm's search_user_records over the user's drafts, its q a
    // query_string over every field (legacy/resources.py; shared/query-string.ts)
    const q = url.searchParams.get('q');
    const filtered = q === null ? byStatus : byStatus.filter((d) => matchesQueryString(q, [...textsOf(d.metadata), ...d.files.map((f) => f.key)]));
    const slice = filtered.slice((page - 1) * size, page * size);
    if (state.options.linkHeader && page * size < filtered.length) {
      const next = new URL(url);
      next.searchParams.set('page', String(page + 1));
      next.searchParams.set('size', String(size));
      res.setHeader('link', `<${base}${next.pathname}${next.search}>; rel="next"`);
    }
    sendJson(res, 200, slice.map(serializeDeposition));
  }

  function putObject(deposition: ZenodoDeposition, key: string, sent: Buffer, res: ServerResponse): void {
    const bytes = state.damageOnStore.has(key) && sent.length > 0 ? Buffer.from(sent.map((byte, i) => (i === 0 ? byte ^ 0xff : byte))) : sent;
    if (deposition.submitted) return sendJson(res, 403, { message: 'Bucket is locked.', status: 403 });
    if (bytes.length === 0) return sendJson(res, 400, { message: 'Empty files are not accepted.', status: 400 });
    const existing = deposition.files.find((f) => f.key === key);
    if (!existing && deposition.files.length >= state.options.maxFiles) {
      return sendJson(res, 400, { message: `Too many files: a record holds at most ${state.options.maxFiles}.`, status: 400 });
    }
    const used = deposition.files.reduce((sum, f) => sum + (f === existing ? 0 : f.bytes.length), 0);
    if (used + bytes.length > state.options.maxRecordBytes) return sendJson(res, 400, { message: 'Bucket quota exceeded.', status: 400 });
    const time = now();
    const file: ZenodoFile = existing ?? { id: randomUUID(), key, bytes, md5: '', created: time, updated: time, versionId: '' };
    Object.assign(file, { bytes, md5: md5(bytes), updated: time, versionId: randomUUID() });
    if (!existing) deposition.files.push(file);
    deposition.modified = time;
    const objectUrl = `${base}/api/files/${deposition.bucketId}/${encodeURIComponent(key)}`;
    sendJson(res, 201, {
      key,
      mimetype: 'application/octet-stream',
      checksum: `md5:${file.md5}`,
      version_id: file.versionId,
      size: bytes.length,
      created: file.created,
      updated: file.updated,
      links: { self: objectUrl, version: `${objectUrl}?versionId=${file.versionId}`, uploads: `${objectUrl}?uploads` },
      is_head: true,
      delete_marker: false,
    });
  }

  function own(id: number, owner: number, res: ServerResponse): ZenodoDeposition | null {
    const deposition = state.depositions.get(id);
    if (!deposition) {
      sendJson(res, 404, { message: 'PID does not exist.', status: 404 });
      return null;
    }
    if (deposition.owner !== owner) {
      forbidden(res);
      return null;
    }
    return deposition;
  }

  function serializeLegacyFile(deposition: ZenodoDeposition, file: ZenodoFile): Record<string, unknown> {
    // Quirk: the `/draft/` link for every deposition, published or not, the key quoted with
    // Python's quote(key, safe="/!$&'()*+,;=:@") (zenodo-rdm
    // site/zenodo_rdm/legacy/serializers/schemas/legacyjson.py LegacySchema.dump_files, its
    // test site/tests/legacy/test_file_link_serialization.py; recorded:
    // ../shared/reference/recordings/zenodo/rdm-2025-published-deposition-files-excerpt.200.json).
    const content = `${base}/api/records/${deposition.id}/draft/files/${quoteKey(file.key)}/content`;
    return {
      id: file.id,
      filename: file.key,
      filesize: file.bytes.length,
      checksum: file.md5,
      // self: `<record's links.files>/<file id>` (same dump_files; recorded excerpt above)
      links: { self: `${base}/api/records/${deposition.id}${deposition.submitted ? '' : '/draft'}/files/${file.id}`, download: content },
    };
  }

  function serializeDeposition(d: ZenodoDeposition): Record<string, unknown> {
    const self = `${base}/api/deposit/depositions/${d.id}`;
    const doi = `10.5072/zenodo.${d.id}`;
    const links: Record<string, string> = {
      self,
      html: `${base}/deposit/${d.id}`,
      badge: `${base}/badge/doi/${doi}.svg`,
      files: `${self}/files`,
      bucket: `${base}/api/files/${d.bucketId}`,
      latest_draft: self,
      latest_draft_html: `${base}/deposit/${d.id}`,
      publish: `${self}/actions/publish`,
      edit: `${self}/actions/edit`,
      discard: `${self}/actions/discard`,
      newversion: `${self}/actions/newversion`,
    };
    if (d.submitted) Object.assign(links, { record: `${base}/api/records/${d.id}`, record_html: `${base}/records/${d.id}`, latest: `${base}/api/records/${d.id}/versions/latest`, latest_html: `${base}/records/${d.id}/latest` });
    return {
      created: d.created,
      modified: d.modified,
      id: d.id,
      conceptrecid: d.conceptrecid,
      record_id: d.id,
      metadata: { ...d.metadata, prereserve_doi: { doi, recid: d.id } },
      title: String(d.metadata.title ?? ''),
      links,
      // a draft has an empty DOI (recorded: ./recorded/deposition-draft-with-files.json)
      doi: d.submitted ? doi : '',
      doi_url: d.submitted ? `https://doi.org/${doi}` : 'https://doi.org/',
      owner: d.owner,
      files: d.files.map((file) => serializeLegacyFile(d, file)),
      state: d.state,
      submitted: d.submitted,
    };
  }

  options.faults?.install(server, 'api', ERROR_SHAPES.zenodo);
  base = await listenOnLoopback(server);
  return {
    url: base,
    state,
    close: () => closeServers(server),
  };
}

/** Python's urllib.parse.quote(key, safe="/!$&'()*+,;=:@"), as the legacy serializer quotes keys. */
function quoteKey(key: string): string {
  return encodeURIComponent(key).replace(/%(2F|24|26|2B|2C|3B|3D|3A|40)/gi, (escape) => decodeURIComponent(escape));
}

function isJson(req: IncomingMessage): boolean {
  return /application\/json/i.test(req.headers['content-type'] ?? '');
}

const forbidden = (res: ServerResponse) => sendJson(res, 403, { message: "You don't have the permission to access the requested resource. It is either read-protected or not readable by the server.", status: 403 });
const methodNotAllowed = (res: ServerResponse) => sendJson(res, 405, { message: 'The method is not allowed for the requested URL.', status: 405 });
const unsupportedMediaType = (res: ServerResponse) => sendJson(res, 415, { message: 'Invalid Content-Type header. Expected application/json.', status: 415 });

/** Every string in a metadata value, as the search engine indexes them. */
function textsOf(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(textsOf);
  if (value !== null && typeof value === 'object') return Object.values(value).flatMap(textsOf);
  return [];
}
