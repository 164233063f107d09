import { createHash, randomBytes, randomUUID } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { closeServers, listenOnLoopback, readBody, sendJson } from '../shared/http.js';
import { matchesQueryString } from '../shared/query-string.js';
import { ERROR_SHAPES, type FaultPlan } from '../shared/faults.js';
import type { Latency } from '../shared/latency.js';

/**
 * A loopback model of an InvenioRDM instance's records API, built from docs/targets/invenio.md
 * (inveniosoftware/invenio-rdm-records 1f23bb9, invenio-drafts-resources 36fe82e,
 * invenio-records-resources 9cc7539, August 2026). What it models, quirks included:
 * - `GET /api/user/records` (drafts-resources `search_user_records`): the user's drafts and
 *   latest records, `{hits:{hits,total},links:{next}}`; a new draft shows up there only after
 *   the search index refreshes (`indexLagSearches`: create registers no index refresh);
 * - `POST /api/records` → 201 draft, saved even when fields required for publishing are
 *   missing (listed in `errors`);
 * - files: `POST …/draft/files [{key}]` (400 "File with key … already exists."), `PUT
 *   …/content` (status stays `pending`), `POST …/commit` (now `completed`, `checksum:
 *   "md5:<hex>"`), `DELETE`; at most `maxFiles` (RDM_RECORDS_MAX_FILES_COUNT, 100); empty files
 *   refused when `allowEmptyFiles` is false (RECORDS_RESOURCES_ALLOW_EMPTY_FILES, Zenodo);
 * - `POST /api/records/{id}/versions` → the new version's draft, or the one already made
 *   (drafts-resources `new_version`); `POST …/draft/actions/files-import` copies the latest
 *   version's files, refused with "Please remove all files first." when the draft has files;
 * - Bearer tokens; a bad one is 401, none is 403; errors `{status, message}`;
 * - the draft's `metadata` kept as sent (POST /api/records), served back on the record;
 * - communities (invenio-communities `user-prefix` `/user/communities`: the user's, as a
 *   search; `GET /api/communities/{id}`; rdm-records `community-records`
 *   `/communities/{id}/records`: the community's published records, anyone's).
 * Instance settings are options: Zenodo's (test/emulators/zenodo/emulator.ts) are numeric
 * record ids, no empty files and `retry-after: 60` on every response.
 * Publishing is a fixture only (`addRecord(..., {published: true})`): Ferry never publishes.
 */
export interface InvenioFile {
  key: string;
  bytes: Buffer | null;
  committed: boolean;
  created: string;
  updated: string;
}

export interface InvenioRecord {
  id: string;
  parent: string;
  owner: number;
  title: string;
  published: boolean;
  /** the draft exists (unpublished record, or new version not yet published) */
  draft: boolean;
  versionIndex: number;
  /** id of the next version's draft, once made */
  nextDraft: string | null;
  files: InvenioFile[];
  /** the record's `metadata` as the client sent it (title aside) */
  metadata: Record<string, unknown>;
  created: string;
  updated: string;
  /** user searches left before the search index shows it */
  hiddenSearches: number;
}

export interface InvenioCommunity {
  id: string;
  slug: string;
  title: string;
  /** users who are members */
  members: Set<number>;
  /** ids of published records included in it */
  records: Set<string>;
}

export interface InvenioEmulatorOptions {
  maxFiles?: number;
  allowEmptyFiles?: boolean;
  /** searches a new draft stays out of /api/user/records */
  indexLagSearches?: number;
  /** record ids as digits (Zenodo: "1234567") instead of "abcde-12345" */
  numericIds?: boolean;
  /** a `retry-after` header on every response, 2xx included (Zenodo: 60) */
  retryAfterAlways?: number;
  /** token → user id */
  tokens?: Record<string, number>;
  /** faults played in front of the server ('api') */
  faults?: FaultPlan;
  /** a round trip added to every request, in front of the faults (the bench's latency rows) */
  latency?: Latency;
}

export interface InvenioState {
  records: Map<string, InvenioRecord>;
  communities: Map<string, InvenioCommunity>;
  tokens: Record<string, number>;
  options: Required<Omit<InvenioEmulatorOptions, 'tokens' | 'faults' | 'retryAfterAlways' | 'latency'>>;
  /** "METHOD /path?query" of every request */
  requests: string[];
  /** authorization header of every request, in order */
  authorizations: (string | undefined)[];
  /** every request with its headers, and its body when it is JSON */
  sent: { method: string; path: string; at: number; headers: Record<string, string | string[] | undefined>; json?: unknown }[];
  addRecord(owner: number, title: string, files?: Record<string, string | Buffer>, options?: { published?: boolean }): InvenioRecord;
  /** keys whose bytes are stored damaged (first byte flipped), checksum and all: a store that corrupts, for verify-after-write tests */
  damageOnStore: Set<string>;
  addCommunity(members: number[], slug: string, title: string, records?: InvenioRecord[]): InvenioCommunity;
}

export interface InvenioEmulator {
  url: string;
  state: InvenioState;
  close(): Promise<void>;
}

const now = () => new Date().toISOString().replace('Z', '+00:00');
const md5 = (bytes: Buffer) => createHash('md5').update(bytes).digest('hex');
/** InvenioRDM record ids: two groups of five lowercase letters and digits ("abcde-12345") */
const newId = () => `${randomBytes(8).toString('hex').slice(0, 5)}-${randomBytes(8).toString('hex').slice(0, 5)}`;
let nextNumericId = 1_000_000 + Math.floor(Math.random() * 1_000_000);

export async function startInvenioEmulator(options: InvenioEmulatorOptions = {}): Promise<InvenioEmulator> {
  const state: InvenioState = {
    records: new Map(),
    communities: new Map(),
    tokens: options.tokens ?? { 'invenio-token': 1, 'invenio-other': 2 },
    options: { maxFiles: options.maxFiles ?? 100, allowEmptyFiles: options.allowEmptyFiles ?? true, indexLagSearches: options.indexLagSearches ?? 0, numericIds: options.numericIds ?? false },
    requests: [],
    authorizations: [],
    sent: [],
    damageOnStore: new Set(),
    addRecord(owner, title, files = {}, { published = false } = {}) {
      const time = now();
      const makeId = () => (state.options.numericIds ? String(nextNumericId++) : newId());
      const id = makeId();
      const record: InvenioRecord = { id, parent: makeId(), owner, title, published, draft: !published, versionIndex: 1, nextDraft: null, files: [], metadata: {}, created: time, updated: time, hiddenSearches: 0 };
      for (const [key, content] of Object.entries(files)) record.files.push({ key, bytes: Buffer.isBuffer(content) ? content : Buffer.from(content), committed: true, created: time, updated: time });
      state.records.set(id, record);
      return record;
    },
    addCommunity(members, slug, title, records = []) {
      const community: InvenioCommunity = { id: randomUUID(), slug, title, members: new Set(members), records: new Set(records.map((r) => r.id)) };
      state.communities.set(community.id, community);
      return community;
    },
  };

  let base = '';
  const server = http.createServer((req, res) => {
    handle(req, res).catch((error: unknown) => sendJson(res, 500, { status: 500, message: `emulator error: ${String(error)}` }));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', base);
    const method = req.method ?? 'GET';
    state.requests.push(`${method} ${url.pathname}${url.search}`);
    state.authorizations.push(req.headers.authorization);
    const body = await readBody(req);
    if (options.retryAfterAlways !== undefined) res.setHeader('retry-after', String(options.retryAfterAlways));
    state.sent.push({ method, path: `${url.pathname}${url.search}`, at: Date.now(), headers: { ...req.headers }, ...(/application\/json/i.test(req.headers['content-type'] ?? '') && body.length ? { json: JSON.parse(body.toString('utf8')) as unknown } : {}) });
    const token = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '')?.[1];
    const owner = token ? state.tokens[token] : undefined;
    if (token && owner === undefined) return sendJson(res, 401, { status: 401, message: 'The server could not verify that you are authorized to access the URL requested.' });
    if (owner === undefined) return sendJson(res, 403, { status: 403, message: 'Permission denied.' });
    const path = url.pathname.replace(/\/+$/, '');
    let match: RegExpExecArray | null;

    if (path === '/api/user/records' && method === 'GET') return userRecords(url, owner, res);

    if (path === '/api/user/communities' && method === 'GET') {
      const mine = [...state.communities.values()].filter((c) => c.members.has(owner));
      return sendJson(res, 200, searchPage(url, '/api/user/communities', mine.map(communityJson)));
    }

    if ((match = /^\/api\/communities\/([0-9a-f-]+)(\/records)?$/.exec(path)) && method === 'GET') {
      const community = state.communities.get(match[1] as string);
      if (!community) return sendJson(res, 404, { status: 404, message: 'The persistent identifier does not exist.' });
      if (!match[2]) return sendJson(res, 200, communityJson(community));
      // CommunityRecordsService.search: the community's published records, whoever owns them
      const included = [...community.records].map((id) => state.records.get(id)).filter((r): r is InvenioRecord => Boolean(r?.published));
      return sendJson(res, 200, searchPage(url, `/api/communities/${community.id}/records`, included.map((r) => serialize(r, false))));
    }

    if (path === '/api/records' && method === 'POST') {
      if (!/application\/json/i.test(req.headers['content-type'] ?? '')) return sendJson(res, 415, { status: 415, message: 'Unsupported media type.' });
      const json = JSON.parse(body.toString('utf8') || '{}') as { metadata?: { title?: string; creators?: unknown[]; publication_date?: string; resource_type?: unknown } };
      const record = state.addRecord(owner, json.metadata?.title ?? '');
      const { title: _title, ...metadata } = json.metadata ?? {};
      record.metadata = metadata;
      record.hiddenSearches = state.options.indexLagSearches;
      // a draft is saved with what it lacks for publishing listed in `errors`
      const errors = [];
      if (!json.metadata?.creators?.length) errors.push({ field: 'metadata.creators', messages: ['Missing data for required field.'] });
      if (!json.metadata?.title) errors.push({ field: 'metadata.title', messages: ['Missing data for required field.'] });
      return sendJson(res, 201, { ...serialize(record, true), ...(errors.length ? { errors } : {}) });
    }

    if ((match = /^\/api\/records\/([a-z0-9-]+)(\/draft)?$/.exec(path)) && method === 'GET') {
      const record = own(match[1] as string, owner, res, method, Boolean(match[2]));
      if (!record) return;
      const wantDraft = Boolean(match[2]);
      if (wantDraft && !record.draft) return sendJson(res, 404, { status: 404, message: 'The persistent identifier is not registered.' });
      if (!wantDraft && !record.published) return sendJson(res, 404, { status: 404, message: 'The persistent identifier is not registered.' });
      return sendJson(res, 200, serialize(record, wantDraft));
    }

    if ((match = /^\/api\/records\/([a-z0-9-]+)\/draft$/.exec(path)) && method === 'DELETE') {
      // invenio-drafts-resources "delete draft" (DELETE /records/{id}/draft → 204): a draft never
      // published goes whole, its id with it; a published record's edit draft is discarded
      const record = own(match[1] as string, owner, res);
      if (!record) return;
      if (!record.draft) return sendJson(res, 404, { status: 404, message: 'The persistent identifier is not registered.' });
      if (record.published) record.draft = false;
      else state.records.delete(record.id);
      res.statusCode = 204;
      return void res.end();
    }

    if ((match = /^\/api\/records\/([a-z0-9-]+)\/versions$/.exec(path)) && method === 'POST') {
      const record = own(match[1] as string, owner, res);
      if (!record) return;
      if (!record.published) return sendJson(res, 404, { status: 404, message: 'The persistent identifier is not registered.' });
      // drafts-resources new_version: the next version's draft is returned if it exists
      const existing = record.nextDraft ? state.records.get(record.nextDraft) : undefined;
      if (existing) return sendJson(res, 201, serialize(existing, true));
      const next = state.addRecord(owner, record.title);
      Object.assign(next, { parent: record.parent, versionIndex: record.versionIndex + 1, metadata: { ...record.metadata } });
      record.nextDraft = next.id;
      return sendJson(res, 201, serialize(next, true));
    }

    if ((match = /^\/api\/records\/([a-z0-9-]+)\/draft\/actions\/files-import$/.exec(path)) && method === 'POST') {
      const draft = own(match[1] as string, owner, res);
      if (!draft) return;
      if (!draft.draft) return sendJson(res, 404, { status: 404, message: 'The persistent identifier is not registered.' });
      if (draft.files.length) return sendJson(res, 400, { status: 400, message: 'A validation error occurred.', errors: [{ field: 'files.enabled', messages: ['Please remove all files first.'] }] });
      const previous = [...state.records.values()].find((r) => r.parent === draft.parent && r.published && r.nextDraft === draft.id);
      if (!previous) return sendJson(res, 400, { status: 400, message: 'A validation error occurred.', errors: [{ field: 'files.enabled', messages: ['The record has no files.'] }] });
      draft.files = previous.files.map((file) => ({ ...file }));
      return sendJson(res, 201, filesList(draft, true));
    }

    if ((match = /^\/api\/records\/([a-z0-9-]+)(\/draft)?\/files$/.exec(path))) {
      const record = own(match[1] as string, owner, res, method, Boolean(match[2]));
      if (!record) return;
      const draft = Boolean(match[2]);
      if (draft ? !record.draft : !record.published) return sendJson(res, 404, { status: 404, message: 'The persistent identifier is not registered.' });
      if (method === 'GET') return sendJson(res, 200, filesList(record, draft));
      if (method === 'POST' && draft) {
        if (!/application\/json/i.test(req.headers['content-type'] ?? '')) return sendJson(res, 415, { status: 415, message: 'Unsupported media type.' });
        const wanted = JSON.parse(body.toString('utf8')) as { key: string }[];
        if (record.files.length + wanted.length > state.options.maxFiles) return sendJson(res, 400, { status: 400, message: `Uploading the selected files would result in ${record.files.length + wanted.length} files (max is ${state.options.maxFiles}).` });
        for (const { key } of wanted) {
          // records-resources FilesManager.create
          if (record.files.some((f) => f.key === key)) return sendJson(res, 400, { status: 400, message: `File with key ${key} already exists.` });
        }
        const time = now();
        for (const { key } of wanted) record.files.push({ key, bytes: null, committed: false, created: time, updated: time });
        return sendJson(res, 201, filesList(record, true));
      }
      return sendJson(res, 405, { status: 405, message: 'Method not allowed.' });
    }

    if ((match = /^\/api\/records\/([a-z0-9-]+)(\/draft)?\/files\/([^/]+)(\/content|\/commit)?$/.exec(path))) {
      const record = own(match[1] as string, owner, res, method, Boolean(match[2]));
      if (!record) return;
      const draft = Boolean(match[2]);
      const key = decodeURIComponent(match[3] as string);
      const action = match[4];
      if (draft ? !record.draft : !record.published) return sendJson(res, 404, { status: 404, message: 'The persistent identifier is not registered.' });
      const file = record.files.find((f) => f.key === key);
      if (!file) return sendJson(res, 404, { status: 404, message: `File with key ${key} not found.` });
      if (!action && method === 'GET') return sendJson(res, 200, fileJson(record, file, draft));
      if (!action && method === 'DELETE' && draft) {
        record.files.splice(record.files.indexOf(file), 1);
        res.statusCode = 204;
        return void res.end();
      }
      if (action === '/content' && method === 'PUT' && draft) {
        file.bytes = state.damageOnStore.has(key) && body.length > 0 ? Buffer.concat([Buffer.from([body[0]! ^ 0xff]), body.subarray(1)]) : body;
        file.committed = false;
        file.updated = now();
        return sendJson(res, 200, fileJson(record, file, true));
      }
      if (action === '/commit' && method === 'POST' && draft) {
        if (!file.bytes) return sendJson(res, 400, { status: 400, message: `File with key ${key} has no content yet.` });
        if (file.bytes.length === 0 && !state.options.allowEmptyFiles) return sendJson(res, 400, { status: 400, message: 'Empty files are not accepted.' });
        file.committed = true;
        record.updated = now();
        return sendJson(res, 200, fileJson(record, file, true));
      }
      if (action === '/content' && method === 'GET') {
        if (!file.committed || !file.bytes) return sendJson(res, 404, { status: 404, message: `File with key ${key} not found.` });
        res.statusCode = 200;
        res.setHeader('content-type', 'application/octet-stream');
        res.setHeader('content-length', String(file.bytes.length));
        return void res.end(file.bytes);
      }
      return sendJson(res, 405, { status: 405, message: 'Method not allowed.' });
    }

    return sendJson(res, 404, { status: 404, message: 'The requested URL was not found on the server.' });
  }

  function userRecords(url: URL, owner: number, res: ServerResponse): void {
    const size = Number(url.searchParams.get('size') ?? 10) || 10;
    const page = Number(url.searchParams.get('page') ?? 1) || 1;
    // the search's result window (records-resources params/pagination.py, default_max_results)
    if (page * size > 10_000) return sendJson(res, 400, { status: 400, message: 'Invalid pagination parameters.' });
    const mine = [...state.records.values()].filter((r) => r.owner === owner);
    for (const r of mine) if (r.hiddenSearches > 0) r.hiddenSearches--;
    // `q`: search_drafts runs it as an OpenSearch query_string over every field, title and
    // file keys included (invenio-records-resources args.py `q`, queryparser/query.py;
    // shared/query-string.ts); `links` carry it on (the search links keep every argument)
    const q = url.searchParams.get('q');
    const visible = mine
      .filter((r) => r.hiddenSearches === 0 || r.published)
      .filter((r) => q === null || matchesQueryString(q, [r.title, ...r.files.map((f) => f.key)]))
      .sort((a, b) => b.created.localeCompare(a.created));
    const hits = visible.slice((page - 1) * size, page * size).map((r) => serialize(r, r.draft));
    const qArg = q === null ? '' : `&q=${encodeURIComponent(q)}`;
    const links: Record<string, string> = { self: `${base}/api/user/records?page=${page}&size=${size}&sort=newest${qArg}` };
    if (page * size < visible.length) links.next = `${base}/api/user/records?page=${page + 1}&size=${size}&sort=newest${qArg}`;
    sendJson(res, 200, { hits: { hits, total: visible.length }, links, sortBy: 'newest', aggregations: {} });
  }

  /** A search answer of `hits` paged by `page`/`size`, with `links.next` while more remain. */
  function searchPage(url: URL, path: string, all: unknown[]): Record<string, unknown> {
    const size = Number(url.searchParams.get('size') ?? 10) || 10;
    const page = Number(url.searchParams.get('page') ?? 1) || 1;
    const links: Record<string, string> = { self: `${base}${path}?page=${page}&size=${size}` };
    if (page * size < all.length) links.next = `${base}${path}?page=${page + 1}&size=${size}`;
    return { hits: { hits: all.slice((page - 1) * size, page * size), total: all.length }, links, aggregations: {} };
  }

  function communityJson(community: InvenioCommunity): Record<string, unknown> {
    return {
      id: community.id,
      slug: community.slug,
      created: now(),
      updated: now(),
      metadata: { title: community.title, type: { id: 'organization' } },
      access: { visibility: 'public', members_visibility: 'public', record_submission_policy: 'open' },
      links: { self: `${base}/api/communities/${community.id}`, self_html: `${base}/communities/${community.slug}`, records: `${base}/api/communities/${community.id}/records` },
    };
  }

  /**
   * The record `id` for this request: its owner's for anything; anyone's published record to
   * read (public access); someone else's draft is 403 when it exists, else 404 (drafts-resources
   * read_draft resolves the draft before checking permission).
   */
  function own(id: string, owner: number, res: ServerResponse, method = 'POST', draft = true): InvenioRecord | null {
    const record = state.records.get(id);
    if (!record || (record.owner !== owner && method === 'GET' && draft && !record.draft)) {
      sendJson(res, 404, { status: 404, message: 'The persistent identifier does not exist.' });
      return null;
    }
    if (record.owner !== owner && !(method === 'GET' && !draft && record.published)) {
      sendJson(res, 403, { status: 403, message: 'Permission denied.' });
      return null;
    }
    return record;
  }

  function fileJson(record: InvenioRecord, file: InvenioFile, draft: boolean): Record<string, unknown> {
    const self = `${base}/api/records/${record.id}${draft ? '/draft' : ''}/files/${encodeURIComponent(file.key)}`;
    return {
      key: file.key,
      created: file.created,
      updated: file.updated,
      status: file.committed ? 'completed' : 'pending',
      metadata: null,
      access: { hidden: false },
      ...(file.committed && file.bytes ? { checksum: `md5:${md5(file.bytes)}`, size: file.bytes.length, mimetype: 'application/octet-stream', storage_class: 'L', file_id: `${record.id}-${file.key}`, version_id: randomBytes(8).toString('hex'), bucket_id: record.parent } : {}),
      transfer: { type: 'L' },
      links: { self, content: `${self}/content`, ...(draft ? { commit: `${self}/commit` } : {}) },
    };
  }

  function filesList(record: InvenioRecord, draft: boolean): Record<string, unknown> {
    const self = `${base}/api/records/${record.id}${draft ? '/draft' : ''}/files`;
    return { enabled: true, entries: record.files.map((file) => fileJson(record, file, draft)), default_preview: null, order: [], links: { self, archive: `${self}-archive` } };
  }

  function serialize(record: InvenioRecord, asDraft: boolean): Record<string, unknown> {
    const self = `${base}/api/records/${record.id}${asDraft ? '/draft' : ''}`;
    return {
      id: record.id,
      created: record.created,
      updated: record.updated,
      links: { self, self_html: `${base}/${asDraft ? 'uploads' : 'records'}/${record.id}`, files: `${self}/files`, versions: `${base}/api/records/${record.id}/versions`, ...(asDraft ? { publish: `${self}/actions/publish` } : { draft: `${base}/api/records/${record.id}/draft` }) },
      parent: { id: record.parent, access: { owned_by: { user: String(record.owner) } } },
      versions: { index: record.versionIndex, is_latest: !record.nextDraft, is_latest_draft: true },
      is_draft: asDraft,
      is_published: record.published,
      status: asDraft ? (record.versionIndex > 1 ? 'new_version_draft' : 'draft') : 'published',
      pids: record.published ? { doi: { identifier: `10.5281/emulator.${record.id}`, provider: 'datacite' } } : {},
      metadata: { resource_type: { id: 'dataset', title: { en: 'Dataset' } }, publication_date: record.created.slice(0, 10), ...record.metadata, title: record.title },
      access: { record: 'public', files: 'public', embargo: { active: false } },
      files: { enabled: true, count: record.files.length, total_bytes: record.files.reduce((sum, f) => sum + (f.bytes?.length ?? 0), 0) },
    };
  }

  options.faults?.install(server, 'api', ERROR_SHAPES.zenodo);
  options.latency?.install(server);
  base = await listenOnLoopback(server);
  return { url: base, state, close: () => closeServers(server) };
}
