import type { Readable } from 'node:stream';
import { discardBody } from '../../remote/answer-body.js';
import { RemoteClient } from '../../remote/http.js';
import type { InvenioAccount } from './credentials.js';

/** The records API shapes Ferry reads (invenio-rdm-records RDMRecordSchema, records-resources FileSchema). */
export interface InvenioRecord {
  id: string;
  created: string;
  updated: string;
  is_draft: boolean;
  is_published: boolean;
  status?: string;
  parent?: { id: string };
  versions?: { index?: number; is_latest?: boolean };
  pids?: { doi?: { identifier?: string } };
  metadata?: { title?: string };
  links: { self?: string; self_html?: string; [key: string]: string | undefined };
}

/** A community (invenio-communities CommunitySchema): `id` is a UUID, `slug` its short name. */
export interface InvenioCommunity {
  id: string;
  slug?: string;
  created?: string;
  updated?: string;
  metadata?: { title?: string };
  links?: { self_html?: string };
}

export interface InvenioFile {
  key: string;
  status: 'pending' | 'completed' | string;
  /** `md5:<hex>` once committed */
  checksum?: string;
  size?: number;
  created?: string;
  updated?: string;
  links?: { content?: string };
}

export interface InvenioApiOptions {
  ratePerSecond?: number;
  retries?: number;
  maxRetryAfterMs?: number;
  timeoutMs?: number;
  /** records per page of /api/user/records */
  pageSize?: number;
  /** the instance's name in messages ("InvenioRDM" for any; "Zenodo") */
  serviceName?: string;
}

export class InvenioApi {
  readonly client: RemoteClient;
  private readonly pageSize: number;

  constructor(readonly account: InvenioAccount, options: InvenioApiOptions = {}) {
    const service = options.serviceName ?? 'InvenioRDM';
    this.client = new RemoteClient({
      baseUrl: `${account.url}api/`,
      serviceName: service,
      ratePerSecond: options.ratePerSecond ?? 2,
      retries: options.retries,
      maxRetryAfterMs: options.maxRetryAfterMs,
      timeoutMs: options.timeoutMs,
      messages: {
        unauthorized: `${new URL(account.url).host} does not accept this ${service} token; it may have been revoked. Make a new personal access token (scope deposit:write).`,
        forbidden: `The ${service} token has no permission for this`,
      },
    });
    this.pageSize = Math.max(1, Math.min(100, options.pageSize ?? 50));
  }

  /** The user's drafts and latest published records, following `links.next`. */
  userRecords(signal?: AbortSignal): AsyncIterable<InvenioRecord> {
    return this.pages<InvenioRecord>(`user/records?size=${this.pageSize}&page=1&sort=newest`, signal);
  }

  /**
   * The draft of a record, or null when it has none the user may see: a published record not
   * being edited (404), or someone else's record (403: its draft is not the user's to read).
   */
  async draft(id: string, signal?: AbortSignal): Promise<InvenioRecord | null> {
    const response = await this.client.request(`records/${id}/draft`, { token: this.account.token, signal, allow: [403, 404], headers: { accept: 'application/json' } });
    if (response.status === 404 || response.status === 403) {
      await discardBody(response);
      return null;
    }
    return (await response.json()) as InvenioRecord;
  }

  published(id: string, signal?: AbortSignal): Promise<InvenioRecord> {
    return this.client.json<InvenioRecord>(`records/${id}`, { token: this.account.token, signal });
  }

  async files(id: string, draft: boolean, signal?: AbortSignal): Promise<InvenioFile[]> {
    const list = await this.client.json<{ entries?: InvenioFile[] }>(`records/${id}${draft ? '/draft' : ''}/files`, { token: this.account.token, signal });
    return list.entries ?? [];
  }

  createDraft(body: unknown, signal?: AbortSignal): Promise<InvenioRecord> {
    return this.client.json<InvenioRecord>('records', { method: 'POST', json: body, token: this.account.token, signal });
  }

  /** invenio-drafts-resources "delete draft": a draft never published goes whole. */
  async deleteDraft(id: string, signal?: AbortSignal): Promise<void> {
    await this.client.request(`records/${id}/draft`, { method: 'DELETE', token: this.account.token, signal, allow: [404] }).then(discardBody);
  }

  /** The next version's draft of a published record; the one already made if there is one. */
  newVersion(id: string, signal?: AbortSignal): Promise<InvenioRecord> {
    // safe to repeat: the service answers the existing next draft (drafts-resources new_version)
    return this.client.json<InvenioRecord>(`records/${id}/versions`, { method: 'POST', token: this.account.token, signal, retry: true });
  }

  /** The communities the user is a member of (invenio-communities `/user/communities`), following `links.next`. */
  userCommunities(signal?: AbortSignal): AsyncIterable<InvenioCommunity> {
    return this.pages<InvenioCommunity>(`user/communities?size=${this.pageSize}&page=1&sort=newest`, signal);
  }

  community(id: string, signal?: AbortSignal): Promise<InvenioCommunity> {
    return this.client.json<InvenioCommunity>(`communities/${id}`, { token: this.account.token, signal });
  }

  /** A community's published records, anyone's (rdm-records `community-records`). */
  communityRecords(id: string, signal?: AbortSignal): AsyncIterable<InvenioRecord> {
    return this.pages<InvenioRecord>(`communities/${id}/records?size=${this.pageSize}&page=1&sort=newest`, signal);
  }

  private async *pages<T>(first: string, signal?: AbortSignal): AsyncIterable<T> {
    let url: string | null = first;
    for (let guard = 0; url && guard < 10_000; guard++) {
      const page: { hits?: { hits?: T[] }; links?: { next?: string } } = await this.client.json(url, { token: this.account.token, signal });
      yield* page.hits?.hits ?? [];
      url = page.links?.next ?? null;
    }
  }

  async importFiles(id: string, signal?: AbortSignal): Promise<void> {
    await this.client.request(`records/${id}/draft/actions/files-import`, { method: 'POST', token: this.account.token, signal }).then(discardBody);
  }

  /** Declares `keys` in the draft, all or none (records-resources `init_files` runs in one unit of work). */
  async initFiles(id: string, keys: readonly string[], signal?: AbortSignal): Promise<void> {
    await this.client.request(`records/${id}/draft/files`, { method: 'POST', json: keys.map((key) => ({ key })), token: this.account.token, signal }).then(discardBody);
  }

  /** The bytes, streamed with their length; a PUT replaces the content, so it is retried. */
  async putContent(id: string, key: string, open: () => Promise<Readable>, size: number, signal?: AbortSignal): Promise<void> {
    await this.client
      .request(`records/${id}/draft/files/${encodeURIComponent(key)}/content`, { method: 'PUT', body: open, token: this.account.token, signal, headers: { 'content-type': 'application/octet-stream', 'content-length': String(size) } })
      .then(discardBody);
  }

  commitFile(id: string, key: string, signal?: AbortSignal): Promise<InvenioFile> {
    return this.client.json<InvenioFile>(`records/${id}/draft/files/${encodeURIComponent(key)}/commit`, { method: 'POST', token: this.account.token, signal });
  }

  async deleteFile(id: string, key: string, signal?: AbortSignal): Promise<void> {
    await this.client.request(`records/${id}/draft/files/${encodeURIComponent(key)}`, { method: 'DELETE', token: this.account.token, signal, allow: [404] }).then(discardBody);
  }

  async download(id: string, draft: boolean, key: string, signal?: AbortSignal): Promise<Readable> {
    return (await this.client.stream(`records/${id}${draft ? '/draft' : ''}/files/${encodeURIComponent(key)}/content`, { token: this.account.token, signal })).body;
  }
}

/** `md5:<hex>` → lowercase hex; anything else → null. */
export function md5Of(checksum: string | undefined): string | null {
  const match = /^md5:([0-9a-f]{32})$/i.exec(checksum?.trim() ?? '');
  return match ? (match[1] as string).toLowerCase() : null;
}
