import type { DataverseLicense } from '../../metadata/dataverse.js';
import type { Readable } from 'node:stream';
import { FerryError } from '../../errors.js';
import { RemoteClient } from '../../remote/http.js';
import type { DataverseAccount } from './credentials.js';
import { formData, type FormPart } from './form-data.js';

/** The Native API shapes Ferry reads (util/json/JsonPrinter.java; docs/targets/dataverse.md). */
export interface DataFile {
  id: number;
  filename: string;
  contentType?: string;
  filesize: number;
  storageIdentifier?: string;
  originalFileFormat?: string;
  originalFileSize?: number;
  originalFileName?: string;
  md5?: string;
  checksum?: { type: string; value: string };
  tabularData?: boolean;
  creationDate?: string;
  directoryLabel?: string;
  lastUpdateTime?: string;
  previousDataFileId?: number;
}

export interface FileMetadata {
  label: string;
  directoryLabel?: string;
  restricted?: boolean;
  dataFile: DataFile;
}

export interface DatasetVersion {
  id: number;
  datasetId: number;
  datasetPersistentId: string;
  versionNumber?: number;
  versionMinorNumber?: number;
  versionState: 'DRAFT' | 'RELEASED' | 'DEACCESSIONED' | string;
  lastUpdateTime?: string;
  createTime?: string;
  releaseTime?: string;
  metadataBlocks?: { citation?: { fields?: { typeName: string; value: unknown }[] } };
  /** Dataverse 5.10+: the version's licence (`{name, uri}`), unset for custom terms */
  license?: { name?: string; uri?: string };
  files?: FileMetadata[];
  /** with `returnOwners`: the collection it is in (JsonPrinter.getOwnersFromDvObject) */
  isPartOf?: { type?: string; identifier?: string | number; displayName?: string };
}

/** A card of `/api/mydata/retrieve` (DataRetrieverAPI.formatSolrDocs). */
export interface MyDataItem {
  type: string;
  name: string;
  entity_id: number;
  global_id: string;
  versionState?: string;
  identifier_of_dataverse?: string;
  createdAt?: string;
  updatedAt?: string;
}

/** A collection (`GET /api/dataverses/{id}`, JsonPrinter `json(Dataverse)`). */
export interface Collection {
  id: number;
  alias: string;
  name: string;
  description?: string;
  creationDate?: string;
  ownerId?: number;
}

/**
 * An item of `GET /api/dataverses/{id}/contents` (Dataverses.java `listContent`): a
 * sub-collection with its title, or a dataset as JsonPrinter `json(Dataset)` writes it, with
 * ids and persistent id parts but no title.
 */
export type CollectionItem =
  | { type: 'dataverse'; id: number; title: string }
  | { type: 'dataset'; id: number; protocol?: string; authority?: string; separator?: string; identifier?: string; publicationDate?: string };

export interface User {
  firstName?: string;
  lastName?: string;
  displayName?: string;
  email?: string;
}

export type UploadUrls =
  | { url: string; partSize: number; storageIdentifier: string }
  | { urls: Record<string, string>; abort: string; complete: string; partSize: number; storageIdentifier: string };

export interface DataverseApiOptions {
  ratePerSecond?: number;
  retries?: number;
  maxRetryAfterMs?: number;
  timeoutMs?: number;
}

/**
 * The built-in roles (native-api.rst "MyData"): Admin, File Downloader, Dataverse + Dataset
 * Creator, Dataverse Creator, Dataset Creator, Contributor, Curator, Member. `role_ids` is
 * required; an installation's own roles have other ids and are not listed.
 */
const ROLE_IDS = [1, 2, 3, 4, 5, 6, 7, 8];
/** SearchConstants.NUM_SOLR_DOCS_TO_RETRIEVE: mydata pages are 10 cards, `per_page` is not read */
export const MYDATA_PAGE = 10;

/**
 * One Dataverse account's API. The token goes in `X-Dataverse-key`, set as a header of this
 * client's API origin only (RemoteClient adds its own headers on that origin and nowhere else),
 * so a redirect to a storage host, or a presigned S3 URL, never carries it. Presigned URLs go
 * through `storage`, a client with no credential at all.
 */
export class DataverseApi {
  readonly client: RemoteClient;
  private readonly storage: RemoteClient;

  constructor(readonly account: DataverseAccount, options: DataverseApiOptions = {}) {
    const common = { retries: options.retries, maxRetryAfterMs: options.maxRetryAfterMs, timeoutMs: options.timeoutMs };
    this.client = new RemoteClient({
      ...common,
      baseUrl: `${account.url}api/`,
      serviceName: 'Dataverse',
      // installations set their own rate limits (6.x: 429 when reached); five a second is polite
      ratePerSecond: options.ratePerSecond ?? 5,
      headers: { 'X-Dataverse-key': account.token },
      messages: {
        unauthorized: `${new URL(account.url).host} does not accept this Dataverse API token; it may be expired. Make a new one under Account → API Token.`,
        forbidden: 'The Dataverse account has no permission for this',
      },
    });
    this.storage = new RemoteClient({ ...common, baseUrl: account.url, serviceName: 'Dataverse storage', ratePerSecond: options.ratePerSecond ?? 5 });
  }

  /** `data` of an OK envelope; an ERROR envelope in a 2xx is an error all the same. */
  async data<T>(path: string, options: Parameters<RemoteClient['request']>[1] = {}): Promise<T> {
    const body = await this.client.json<{ status?: string; data?: T; message?: unknown }>(path, options);
    if (body.status !== 'OK') throw new FerryError(502, 'upstream_error', `Dataverse answered an error: ${messageOf(body.message)}.`);
    return body.data as T;
  }

  me(signal?: AbortSignal): Promise<User> {
    return this.data<User>('users/:me', { signal });
  }

  /**
   * The datasets the token's user has a role on, drafts included, from the My Data search.
   * It answers its own errors with HTTP 200 and `success:false`; "no results" was such an
   * error before 6.11 and is an empty success since.
   */
  async *myDatasets(signal?: AbortSignal): AsyncIterable<MyDataItem> {
    for (let page = 1; page < 100_000; page++) {
      const { items, more } = await this.myDataPage(page, signal);
      yield* items;
      if (!more) return;
    }
  }

  /** The collections the token's user has a role on, from the same My Data search. */
  async *myCollections(signal?: AbortSignal): AsyncIterable<MyDataItem> {
    for (let page = 1; page < 100_000; page++) {
      const { items, more } = await this.myDataPage(page, signal, undefined, 'Dataverse');
      yield* items;
      if (!more) return;
    }
  }

  /**
   * One My Data page (10 cards) of the user's datasets (or collections); with `searchTerm`,
   * only those the Solr query `mydata_search_term` matches (DataRetrieverAPI; blank means
   * every one).
   */
  async myDataPage(page: number, signal?: AbortSignal, searchTerm?: string, type: 'Dataset' | 'Dataverse' = 'Dataset'): Promise<{ items: MyDataItem[]; more: boolean }> {
    const params = new URLSearchParams();
    for (const role of ROLE_IDS) params.append('role_ids', String(role));
    params.append('dvobject_types', type);
    for (const state of ['Published', 'Unpublished', 'Draft', 'In Review']) params.append('published_states', state);
    params.set('selected_page', String(page));
    if (searchTerm !== undefined) params.set('mydata_search_term', searchTerm);
    const body = await this.client.json<{ success?: boolean; error_message?: string; message?: string; data?: { items?: MyDataItem[]; pagination?: { hasNextPageNumber?: boolean }; total_count?: number } }>(
      `mydata/retrieve?${params.toString()}`,
      { signal },
    );
    if (body.success !== true) {
      if (/no results/i.test(body.error_message ?? '') && !/select/i.test(body.error_message ?? '')) return { items: [], more: false };
      throw new FerryError(502, 'upstream_error', `Dataverse could not list your datasets: ${body.error_message ?? 'no reason given'}.`);
    }
    const cards = body.data?.items ?? [];
    const more = (body.data?.pagination?.hasNextPageNumber ?? cards.length >= MYDATA_PAGE) && cards.length > 0;
    return { items: cards.filter((item) => item.type === type.toLowerCase()), more };
  }

  collection(id: number, signal?: AbortSignal): Promise<Collection> {
    return this.data<Collection>(`dataverses/${id}`, { signal });
  }

  /** The direct sub-collections and datasets of a collection that the user may see. */
  contents(id: number, signal?: AbortSignal): Promise<CollectionItem[]> {
    return this.data<CollectionItem[]>(`dataverses/${id}/contents`, { signal });
  }

  /** The latest version the token may see: the draft when the user can edit one (`:latest`). */
  latestVersion(datasetId: number, signal?: AbortSignal, withOwners = false, withoutFiles = false): Promise<DatasetVersion> {
    const searchParams = { ...(withOwners ? { returnOwners: true } : {}), ...(withoutFiles ? { excludeFiles: true } : {}) };
    return this.data<DatasetVersion>(`datasets/${datasetId}/versions/:latest`, { signal, searchParams: withOwners || withoutFiles ? searchParams : undefined });
  }

  /** Lock types now on a dataset (Ingest, EditInProgress, InReview, finalizePublication, …). */
  /** Native API "Delete Dataset Draft": the draft version goes, and a dataset never published with it. */
  async deleteDraft(datasetId: number, signal?: AbortSignal): Promise<void> {
    await this.data(`datasets/${datasetId}/versions/:draft`, { method: 'DELETE', signal });
  }

  async locks(datasetId: number, signal?: AbortSignal): Promise<string[]> {
    const locks = await this.data<{ lockType: string }[]>(`datasets/${datasetId}/locks`, { signal });
    return locks.map((lock) => lock.lockType);
  }

  /** The installation's licences (GET /api/licenses, Dataverse 5.10+): a new dataset may name one of the active ones. */
  licenses(signal?: AbortSignal): Promise<DataverseLicense[]> {
    return this.data<DataverseLicense[]>('licenses', { signal });
  }

  /** POST a new dataset; a 400 is returned for the caller to explain (the fields it lacks). */
  async createDataset(collection: string, dataset: unknown, signal?: AbortSignal): Promise<{ id: number; persistentId: string } | { refused: string }> {
    const response = await this.client.request(`dataverses/${encodeURIComponent(collection).replace(/^%3A/i, ':')}/datasets`, { method: 'POST', json: dataset, signal, allow: [400] });
    const body = (await response.json()) as { status?: string; message?: unknown; data?: { id: number; persistentId: string } };
    if (response.status === 400 || body.status !== 'OK' || !body.data) return { refused: messageOf(body.message) };
    return body.data;
  }

  /** Native add: multipart `jsonData` + `file`, streamed. A 429 is retried with the bytes opened afresh. */
  addFile(datasetId: number, jsonData: Record<string, unknown>, file: Extract<FormPart, { filename: string }>, signal?: AbortSignal) {
    return this.multipart<{ files: FileMetadata[] }>(`datasets/${datasetId}/add`, jsonData, file, signal);
  }

  /** Native replace: the new file gets a new id and keeps the old one's history. */
  replaceFile(fileId: number, jsonData: Record<string, unknown>, file: Extract<FormPart, { filename: string }> | null, signal?: AbortSignal) {
    return this.multipart<{ files: FileMetadata[] }>(`files/${fileId}/replace`, jsonData, file, signal);
  }

  /** Direct upload's first step; null when the dataset's store does not allow it (404). */
  async uploadUrls(datasetId: number, size: number, signal?: AbortSignal): Promise<UploadUrls | null> {
    const response = await this.client.request(`datasets/${datasetId}/uploadurls`, { signal, searchParams: { size }, allow: [404], headers: { accept: 'application/json' } });
    const body = (await response.json()) as { status?: string; data?: UploadUrls; message?: unknown };
    if (response.status === 404) {
      if (/direct upload not supported/i.test(messageOf(body.message))) return null;
      throw new FerryError(404, 'resource_not_found', `Dataverse has no such dataset, or the token cannot see it (Dataverse said: ${messageOf(body.message)}).`);
    }
    if (body.status !== 'OK' || !body.data) throw new FerryError(502, 'upstream_error', `Dataverse gave no upload URLs: ${messageOf(body.message)}.`);
    return body.data;
  }

  /**
   * PUT bytes to a presigned storage URL, with no Dataverse credential, and the exact
   * Content-Length S3 requires (501 without). `tagged`: the single-part URL is signed with
   * `x-amz-tagging: dv-state=temp`. Answers the part's ETag as S3 sent it (quoted).
   */
  async putPresigned(url: string, size: number, open: () => Promise<Readable>, tagged: boolean, signal?: AbortSignal): Promise<string> {
    const headers: Record<string, string> = { 'content-length': String(size), 'content-type': 'application/octet-stream' };
    if (tagged) headers['x-amz-tagging'] = 'dv-state=temp';
    const response = await this.storage.request(url, { method: 'PUT', body: open, headers, signal });
    await response.body?.cancel();
    return response.headers.get('etag') ?? '';
  }

  /** Ends a multipart direct upload: the part ETags by part number. The URL is the API's own. */
  async completeMultipart(completeUrl: string, etags: Record<string, string>, signal?: AbortSignal): Promise<void> {
    await this.data(completeUrl.replace(/^\/?api\//, ''), { method: 'PUT', json: etags, signal });
  }

  /** Cleans up after a failure or a cancel: `signal` is one the cancel does not fire (detachedSignal, remote/retry-notice.ts). */
  async abortMultipart(abortUrl: string, signal?: AbortSignal): Promise<void> {
    await this.client.request(abortUrl.replace(/^\/?api\//, ''), { method: 'DELETE', allow: [400, 404], signal }).then((r) => r.body?.cancel());
  }

  /** Registers directly uploaded files. Per-file failures come back inside an HTTP 200. */
  addFiles(datasetId: number, files: Record<string, unknown>[], signal?: AbortSignal) {
    return this.multipart<{ Files: { storageIdentifier?: string; errorMessage?: string; warningMessage?: string; fileDetails?: FileMetadata }[] }>(`datasets/${datasetId}/addFiles`, files, null, signal);
  }

  /** The Data Access API; `original` asks for the uploaded bytes of an ingested tabular file. */
  async download(fileId: number, original: boolean, signal?: AbortSignal): Promise<Readable> {
    return (await this.client.stream(`access/datafile/${fileId}`, { signal, searchParams: original ? { format: 'original' } : undefined })).body;
  }

  private async multipart<T>(path: string, jsonData: unknown, file: Extract<FormPart, { filename: string }> | null, signal?: AbortSignal): Promise<T> {
    const body = formData([{ name: 'jsonData', text: JSON.stringify(jsonData) }, ...(file ? [file] : [])]);
    return this.data<T>(path, {
      method: 'POST',
      body: body.open,
      headers: { 'content-type': body.contentType, 'content-length': String(body.length) },
      signal,
    });
  }
}

export function messageOf(message: unknown): string {
  if (typeof message === 'string') return message.trim();
  if (message && typeof message === 'object' && typeof (message as { message?: unknown }).message === 'string') return ((message as { message: string }).message).trim();
  return 'no reason given';
}
