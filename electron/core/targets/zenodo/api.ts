import type { Readable } from 'node:stream';
import { RemoteClient, nextLink } from '../../remote/http.js';

/** The legacy deposit API shapes Ferry reads (remote-targets.md §3; zenodo-rdm legacy serializers). */
export interface Deposition {
  id: number;
  record_id?: number;
  conceptrecid?: string;
  created: string;
  modified: string;
  title?: string;
  owner?: number;
  state: 'unsubmitted' | 'inprogress' | 'done';
  submitted: boolean;
  doi?: string;
  doi_url?: string;
  metadata?: { title?: string; upload_type?: string; [key: string]: unknown };
  files?: DepositionFile[];
  links: { bucket?: string; html?: string; self?: string; latest_draft?: string; [key: string]: string | undefined };
}

export interface DepositionFile {
  id: string;
  filename: string;
  filesize: number;
  /** bare hex on the legacy endpoints, `md5:<hex>` on others */
  checksum: string;
  links: { self?: string; download?: string };
}

/** `md5:<hex>` or `<hex>` → lowercase hex; anything else (another algorithm) → null. */
export function normaliseMd5(checksum: string | null | undefined): string | null {
  if (!checksum) return null;
  const match = /^(?:md5:)?([0-9a-f]{32})$/i.exec(checksum.trim());
  return match ? (match[1] as string).toLowerCase() : null;
}

/**
 * A file key in a record URL as Zenodo writes it: Python's quote(key,
 * safe="/!$&'()*+,;=:@") (zenodo-rdm legacyjson.py dump_files), so a key's '/' stays a '/'.
 */
export function quoteKey(key: string): string {
  return encodeURIComponent(key).replace(/%(2F|24|26|2B|2C|3B|3D|3A|40)/gi, (escape) => decodeURIComponent(escape));
}

export interface ZenodoApiOptions {
  baseUrl: string;
  ratePerSecond?: number;
  retries?: number;
  maxRetryAfterMs?: number;
  timeoutMs?: number;
  /** depositions per list page (Zenodo allows at most 100) */
  pageSize?: number;
}

export class ZenodoApi {
  readonly client: RemoteClient;
  private readonly pageSize: number;

  constructor(options: ZenodoApiOptions) {
    const root = options.baseUrl.replace(/\/+$/, '');
    this.client = new RemoteClient({
      baseUrl: `${root}/api/`,
      serviceName: 'Zenodo',
      // Zenodo allows 100 requests a minute per user; one a second stays under it.
      ratePerSecond: options.ratePerSecond ?? 1,
      retries: options.retries,
      maxRetryAfterMs: options.maxRetryAfterMs,
      timeoutMs: options.timeoutMs,
      messages: {
        unauthorized: 'The Zenodo token is invalid or expired.',
        forbidden: 'The Zenodo token has no access to this deposition (a personal token needs the deposit:write and deposit:actions scopes)',
      },
    });
    this.pageSize = Math.min(100, Math.max(1, options.pageSize ?? 100));
  }

  /**
   * Every deposition of the user, drafts and published. The current API answers a bare
   * array with no total and no Link header, so pages are fetched until one comes back
   * short; a Link header (older Zenodo) is followed when present.
   */
  async *depositions(token: string, signal?: AbortSignal): AsyncIterable<Deposition> {
    let url: string | null = 'deposit/depositions';
    let params: Record<string, string | number> | undefined = { page: 1, size: this.pageSize };
    for (let guard = 0; url && guard < 10_000; guard++) {
      const response: Response = await this.client.request(url, { token, signal, searchParams: params, headers: { accept: 'application/json' } });
      const page = (await response.json()) as Deposition[];
      yield* page;
      const next = nextLink(response.headers.get('link'));
      if (next) {
        url = next;
        params = undefined;
      } else if (page.length >= this.pageSize && params) {
        params = { ...params, page: Number(params.page) + 1 };
      } else {
        url = null;
      }
    }
  }

  deposition(token: string, id: number, signal?: AbortSignal): Promise<Deposition> {
    return this.client.json<Deposition>(`deposit/depositions/${id}`, { token, signal });
  }

  createDeposition(token: string, metadata: Record<string, unknown>, signal?: AbortSignal): Promise<Deposition> {
    return this.client.json<Deposition>('deposit/depositions', { method: 'POST', token, signal, json: { metadata } });
  }

  /**
   * A file's bytes. A published deposition's are read from the record
   * (`/api/records/<id>/files/<key>/content`), built here: Zenodo's legacy `links.download`
   * is the `/draft/` URL for every deposition, and for a published record without an open
   * draft that is a 404 (docs/targets/zenodo.md). A draft's come from `links.download`.
   */
  async download(token: string, file: DepositionFile, depositionId: number, published: boolean, signal?: AbortSignal): Promise<Readable> {
    const url = published || !file.links.download ? `records/${depositionId}${published ? '' : '/draft'}/files/${quoteKey(file.filename)}/content` : file.links.download;
    return (await this.client.stream(url, { token, signal })).body;
  }

  /**
   * Deletes an unpublished deposition (`DELETE /api/deposit/depositions/<id>` → 204,
   * zenodo-rdm legacy resources.py delete_draft). Without a signal: it cleans up after a
   * cancelled job.
   */
  async deleteDeposition(token: string, id: number): Promise<void> {
    const response = await this.client.request(`deposit/depositions/${id}`, { method: 'DELETE', token });
    await response.body?.cancel();
  }

  /**
   * Bucket PUT: the raw bytes, streamed, with their exact length (Zenodo wants Content-Length).
   * A PUT replaces the object, so it is retried (429/5xx, a broken connection) with the bytes
   * opened afresh by `open`; the client's timeout is the longest pause, not the whole upload.
   */
  async putIntoBucket(token: string, bucketUrl: string, key: string, open: () => Promise<Readable>, size: number, signal?: AbortSignal): Promise<{ checksum?: string; size?: number }> {
    const response = await this.client.request(`${bucketUrl.replace(/\/+$/, '')}/${encodeURIComponent(key)}`, {
      method: 'PUT',
      token,
      signal,
      body: open,
      headers: { 'content-type': 'application/octet-stream', 'content-length': String(size), accept: 'application/json' },
    });
    return (await response.json()) as { checksum?: string; size?: number };
  }
}
