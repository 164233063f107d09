import type { FigshareFields, FigshareLicense } from '../../metadata/figshare.js';
import type { Readable } from 'node:stream';
import { FerryError, unauthorized } from '../../errors.js';
import { RemoteClient, type RequestOptions } from '../../remote/http.js';

/** Shapes Ferry reads from figshare API v2 (remote-targets.md §4; waterbutler fixtures). */
export interface FigshareProject {
  id: number;
  title: string;
  created_date?: string;
  modified_date?: string;
  figshare_url?: string;
  quota?: number;
  used_quota?: number;
  role?: string;
}

export interface FigshareArticle {
  id: number;
  title: string;
  created_date?: string;
  modified_date?: string;
  published_date?: string | null;
  status?: string;
  is_public?: boolean;
  defined_type_name?: string;
  size?: number;
  doi?: string;
  figshare_url?: string;
  version?: number;
  files?: FigshareFile[];
}

export interface FigshareFile {
  id: number;
  name: string;
  size: number;
  is_link_only?: boolean;
  download_url?: string;
  supplied_md5?: string;
  /** "" until figshare has processed the upload */
  computed_md5?: string;
  status?: string;
  upload_url?: string;
  upload_token?: string;
  mimetype?: string;
}

export interface UploadSession {
  token: string;
  size: number;
  status: string;
  parts: { partNo: number; startOffset: number; endOffset: number; status: string; locked: boolean }[];
}

export interface FigshareApiOptions {
  baseUrl: string;
  /**
   * figshare's download host, the one other host that may see the token (default: the API
   * host with `api.` replaced by `ndownloader.`: https://ndownloader.figshare.com).
   */
  downloadUrl?: string;
  /** figshare asks for at most one request a second */
  ratePerSecond?: number;
  retries?: number;
  maxRetryAfterMs?: number;
  timeoutMs?: number;
  /** items per list page (figshare's default is 10) */
  pageSize?: number;
}

const UNAUTHORIZED = 'The figshare token is invalid or expired.';
const FORBIDDEN = 'figshare refused this request (HTTP 403) although the token is valid: the account may not do this here';

/**
 * An item as Ferry addresses it: on its own (`/account/articles/<id>`, the owner's routes),
 * or inside a project (`/account/projects/<project>/articles/<id>`, the routes a project's
 * collaborators can read through; swagger "Project article details").
 */
export interface ArticleRef {
  id: number;
  project: number | null;
}

/**
 * figshare's own auth scheme is `Authorization: token <t>`, so it goes in per request on
 * API calls only (the API never redirects). The upload host authenticates by the token in
 * its URL; file downloads carry the token as `?token=`, and only to figshare's download host
 * (RemoteClient `credentialOrigins`): a link-only file's URL on another host gets nothing,
 * and neither does the 302 to S3. On the API, figshare answers 403 for a bad or missing
 * token (its docs say 401) and hides what a token cannot read behind 404, so a 403 there
 * means the token is the problem unless `GET /account` says otherwise (`refusal`); a 403
 * from S3 is an expired signed link (http.ts).
 */
export class FigshareApi {
  readonly client: RemoteClient;
  private readonly pageSize: number;

  constructor(options: FigshareApiOptions) {
    this.client = new RemoteClient({
      baseUrl: options.baseUrl,
      credentialOrigins: [options.downloadUrl ?? downloadHostOf(options.baseUrl)],
      serviceName: 'figshare',
      ratePerSecond: options.ratePerSecond ?? 1,
      retries: options.retries,
      maxRetryAfterMs: options.maxRetryAfterMs,
      timeoutMs: options.timeoutMs,
      messages: { unauthorized: UNAUTHORIZED, forbidden: FORBIDDEN },
    });
    this.pageSize = Math.min(1000, Math.max(1, options.pageSize ?? 100));
  }

  private async call(token: string, url: string, options: RequestOptions = {}): Promise<Response> {
    try {
      return await this.client.request(url, { ...options, headers: { accept: 'application/json', authorization: `token ${token}`, ...options.headers } });
    } catch (error) {
      if (error instanceof FerryError && error.status === 403) throw await this.refusal(token, error);
      throw error;
    }
  }

  /**
   * figshare answers 403 both to a token it rejects and to a valid token that may not do this
   * (docs/api/index.md: 403 "not permitted"; in practice also for a bad token). `GET /account`,
   * which any valid token may read, tells them apart: only a rejected token ends the job
   * (401); the other 403 belongs to this request (a file, an item) alone.
   */
  private async refusal(token: string, refused: FerryError): Promise<FerryError> {
    const probe = await this.client
      .request('account', { headers: { accept: 'application/json', authorization: `token ${token}` }, allow: [401, 403], retry: false })
      .catch(() => null);
    await probe?.body?.cancel();
    return probe?.ok ? refused : unauthorized(UNAUTHORIZED);
  }

  async json<T>(token: string, url: string, options: RequestOptions = {}): Promise<T> {
    return (await (await this.call(token, url, options)).json()) as T;
  }

  /** page + page_size until a short page (no totals or Link headers on figshare). */
  async *paged<T>(token: string, url: string, signal?: AbortSignal): AsyncIterable<T> {
    for (let page = 1; ; page++) {
      if ((page - 1) * this.pageSize > 1000) {
        throw new FerryError(502, 'upstream_error', 'figshare lists at most about 1000 entries per collection through its API; this account has more.');
      }
      const items = await this.json<T[]>(token, url, { signal, searchParams: { page, page_size: this.pageSize } });
      yield* items;
      if (items.length < this.pageSize) return;
    }
  }

  projects = (token: string, signal?: AbortSignal) => this.paged<FigshareProject>(token, 'account/projects', signal);
  projectArticles = (token: string, projectId: number, signal?: AbortSignal) => this.paged<FigshareArticle>(token, `account/projects/${projectId}/articles`, signal);
  articles = (token: string, signal?: AbortSignal) => this.paged<FigshareArticle>(token, 'account/articles', signal);
  files = (token: string, article: ArticleRef, signal?: AbortSignal) => this.paged<FigshareFile>(token, `${articlePath(article)}/files`, signal);
  project = (token: string, id: number, signal?: AbortSignal) => this.json<FigshareProject>(token, `account/projects/${id}`, { signal });
  article = (token: string, article: ArticleRef, signal?: AbortSignal) => this.json<FigshareArticle>(token, articlePath(article), { signal });
  file = (token: string, article: ArticleRef, fileId: number, signal?: AbortSignal) => this.json<FigshareFile>(token, `${articlePath(article)}/files/${fileId}`, { signal });

  /**
   * Deletes an item (swagger "Delete article" / "Delete project article": 204). It cleans up
   * after a cancel: `signal` is one the cancel does not fire (detachedSignal, remote/retry-notice.ts).
   */
  async deleteArticle(token: string, article: ArticleRef, signal?: AbortSignal): Promise<void> {
    const response = await this.call(token, articlePath(article), { method: 'DELETE', signal });
    await response.body?.cancel();
  }

  /** A new private article, in a project or standalone; its id. */
  /** The licences the account may choose (figshare's public ones and its institution's): `{value, name, url}`. */
  async licenses(token: string, signal?: AbortSignal): Promise<FigshareLicense[]> {
    return this.json<FigshareLicense[]>(token, 'account/licenses', { signal });
  }

  async createArticle(token: string, fields: { title: string; description: string; defined_type: string } & FigshareFields, projectId: number | null, signal?: AbortSignal): Promise<number> {
    const url = projectId === null ? 'account/articles' : `account/projects/${projectId}/articles`;
    const created = await this.json<{ entity_id?: number; location: string }>(token, url, { method: 'POST', json: fields, signal });
    return created.entity_id ?? Number(/(\d+)\/?$/.exec(created.location)?.[1]);
  }

  /** Step 1 of the upload protocol: announce the file; its new id. */
  async initiateUpload(token: string, articleId: number, file: { name: string; size: number; md5: string }, signal?: AbortSignal): Promise<FigshareFile> {
    const { location } = await this.json<{ location: string }>(token, `account/articles/${articleId}/files`, { method: 'POST', json: file, signal });
    return this.json<FigshareFile>(token, location, { signal });
  }

  /** Step 2: the part layout the upload host chose. */
  uploadSession(uploadUrl: string, signal?: AbortSignal): Promise<UploadSession> {
    return this.client.json<UploadSession>(uploadUrl, { signal });
  }

  /** Step 3: one part's exact bytes (a buffer, so a failed PUT can be retried). */
  async putPart(uploadUrl: string, partNo: number, bytes: Buffer, signal?: AbortSignal): Promise<void> {
    await this.client.request(`${uploadUrl}/${partNo}`, { method: 'PUT', body: bytes, signal, headers: { 'content-type': 'application/octet-stream' } });
  }

  /** Step 4: tell figshare the parts are all there (202, HTML body). */
  async completeUpload(token: string, articleId: number, fileId: number, signal?: AbortSignal): Promise<void> {
    const response = await this.call(token, `account/articles/${articleId}/files/${fileId}`, { method: 'POST', signal });
    await response.body?.cancel();
  }

  /** A file's detail: after an upload, `computed_md5` stays "" until figshare has processed it. */
  fileDetail(token: string, articleId: number, fileId: number, signal?: AbortSignal): Promise<FigshareFile> {
    return this.json<FigshareFile>(token, `account/articles/${articleId}/files/${fileId}`, { signal });
  }

  async deleteFile(token: string, articleId: number, fileId: number, signal?: AbortSignal): Promise<void> {
    const response = await this.call(token, `account/articles/${articleId}/files/${fileId}`, { method: 'DELETE', signal, allow: [404] });
    await response.body?.cancel();
  }

  /**
   * A file's bytes from its `download_url`: figshare's download host, with the token as
   * `?token=` (waterbutler's figshare provider does the same), then a 302 to S3 followed
   * without it. A link-only file keeps no bytes on figshare: its URL points elsewhere, and
   * Ferry does not fetch it. A 403 from the download host itself is this file's refusal (the
   * job carries on); one from S3 is an expired link, retried by the client.
   */
  async download(token: string, file: FigshareFile, signal?: AbortSignal): Promise<Readable> {
    if (file.is_link_only || !file.download_url) {
      const where = file.download_url ? ` (${safeHost(file.download_url)})` : '';
      throw new FerryError(404, 'resource_not_found', `The figshare file '${file.name}' is only a link to a page elsewhere${where}; figshare keeps no bytes for it, so there is nothing to download.`);
    }
    try {
      return (await this.client.stream(file.download_url, { token, tokenQuery: 'token', signal })).body;
    } catch (error) {
      if (error instanceof FerryError && error.status === 403) {
        throw new FerryError(403, 'forbidden', `figshare refused to hand out the file '${file.name}' (HTTP 403): the token has no access to it.`);
      }
      throw error;
    }
  }
}

/** The API path of an item: inside its project when Ferry reached it through one. */
function articlePath(article: ArticleRef): string {
  return article.project === null ? `account/articles/${article.id}` : `account/projects/${article.project}/articles/${article.id}`;
}

/** https://api.figshare.com/v2 → https://ndownloader.figshare.com (the same for staging hosts). */
export function downloadHostOf(apiUrl: string): string {
  const url = new URL(apiUrl);
  return `${url.protocol}//${url.host.replace(/^api\./, 'ndownloader.')}`;
}

function safeHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'an address Ferry cannot read';
  }
}
