// The renderer's only way to the core: HTTP on the local API, authorised with the access
// key. With the key as Bearer, remote targets use the token stored in the keychain, so the
// renderer never holds a service token after the Accounts form sent it.
import type {
  Acknowledgement,
  ApiError as ApiErrorBody,
  ConflictsReport,
  CreateFolderResult,
  DeleteResult,
  DescriptiveMetadata,
  DuplicateFileAction,
  FolderMode,
  Job,
  MoveResult,
  QueueMove,
  QueueSettings,
  QueueState,
  ResourceDetail,
  ResourceSummary,
  TargetDescription,
  UndoRequest,
} from '../../../shared/api.js';
import type { Connection } from '../../../shared/ipc.js';
import type { LocalRoot, LocalRootsAnswer, RcloneRemote, RcloneRemotesAnswer, Session } from './app-types.js';

/** An API failure, carrying the server's sentence. */
export class ApiRequestError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string,
    readonly retryAfterSeconds: number | null = null,
  ) {
    super(message);
  }
}

export function messageOf(error: unknown): string {
  if (error instanceof ApiRequestError) return error.message;
  if (error instanceof DOMException && error.name === 'AbortError') return 'Cancelled.';
  if (error instanceof Error && error.message) return error.message;
  return 'Something went wrong.';
}

const STATUS_SENTENCES: Record<number, string> = {
  400: 'The request was not understood.',
  401: 'The token is missing, invalid or expired.',
  403: 'Access was refused.',
  404: 'It was not found; it may have been moved or deleted.',
  405: 'This target does not support that action.',
  409: 'That is no longer possible.',
  413: 'It is larger than the limit allows.',
  429: 'The service is rate limiting requests; try again shortly.',
  502: 'The remote service answered with an error.',
  503: 'The remote service is unavailable right now.',
};

async function errorFrom(response: Response): Promise<ApiRequestError> {
  let body: Partial<ApiErrorBody> | null = null;
  try {
    body = (await response.json()) as Partial<ApiErrorBody>;
  } catch {
    body = null;
  }
  const retry = Number(response.headers.get('retry-after'));
  const sentence =
    typeof body?.error === 'string' && body.error
      ? body.error
      : (STATUS_SENTENCES[response.status] ?? `The local service answered ${response.status}.`);
  return new ApiRequestError(
    sentence,
    response.status,
    typeof body?.code === 'string' ? body.code : 'http_' + response.status,
    Number.isFinite(retry) && retry > 0 ? retry : null,
  );
}

const seg = (value: string) => encodeURIComponent(value);

export type ContainerRef = string | null;

export function resourcesPath(target: string, containerId: ContainerRef): string {
  return containerId === null
    ? `/api_v1/targets/${seg(target)}/resources/`
    : `/api_v1/targets/${seg(target)}/resources/${seg(containerId)}/`;
}

export function downloadPath(target: string, id: string, keepOffline: boolean): string {
  return `/api_v1/targets/${seg(target)}/resources/${seg(id)}.zip/${keepOffline ? '?keep=1' : ''}`;
}

/** Options every upload and transfer takes. */
export interface WriteOptions {
  /** false sends `ferry-provenance: off`: no ferry-provenance.json is written or extended */
  provenance: boolean;
  /** per file (a transfer: by the source's path; an upload: by its path in the ZIP), the action instead of the one for all */
  duplicateChoices?: Record<string, DuplicateFileAction>;
  /** how a destination that keeps no folders keeps them (`ferry-folders`; absent: the server's default) */
  folders?: FolderMode;
}

const DEFAULT_WRITE: WriteOptions = { provenance: true };

/** A transfer's options: a new top-level record may carry the descriptive metadata a person reviewed. */
export interface TransferOptions extends WriteOptions {
  /** sent as the body's `metadata`, used instead of the source's (docs/api.md "Descriptive metadata") */
  metadata?: DescriptiveMetadata;
}

/** An upload's file as the ZIP will hold it, for the duplicates preview (docs/api.md "Duplicate files"). */
export interface DescribedFile {
  path: string;
  size: number;
  date_modified: string;
  /** where cheap to compute here: by algorithm (sha256), lowercase hex */
  hashes?: Record<string, string>;
}

/** A transfer's source in its body: one resource, or (two or more ids) a selection. */
function sourceFields(source: { target: string; id: string; ids?: readonly string[] }) {
  return source.ids && source.ids.length > 1
    ? { source_target_name: source.target, source_resource_ids: source.ids }
    : { source_target_name: source.target, source_resource_id: source.id };
}

/** One page of a search, and whether the server offers a next one (its `Link: rel="next"`). */
export interface SearchPage {
  rows: ResourceSummary[];
  hasNext: boolean;
  /** `ferry-search-method`: the service's own index, or Ferry matching names */
  method: 'index' | 'names' | null;
  /** the name walk stopped at its limit (`ferry-search-truncated: true`) */
  truncated: boolean;
}

/** A rename, a move, or both (PATCH …/resources/<id>/). */
export interface MoveChange {
  title?: string;
  container?: string;
}

export function createApiClient(connection: Connection, fetchImpl: typeof fetch = (...a) => fetch(...a)) {
  const base = connection.url.replace(/\/+$/, '');
  const auth = { Authorization: `Bearer ${connection.accessKey}` };

  async function request(path: string, init: RequestInit = {}): Promise<Response> {
    let response: Response;
    try {
      response = await fetchImpl(base + path, {
        ...init,
        headers: { ...auth, ...(init.headers as Record<string, string> | undefined) },
      });
    } catch (error) {
      if (error instanceof DOMException && error.name === 'AbortError') throw error;
      throw new ApiRequestError("Ferry's local service did not answer. Is it still running?", 0, 'network_error');
    }
    if (!response.ok) throw await errorFrom(response);
    return response;
  }

  async function json<T>(path: string, init?: RequestInit): Promise<T> {
    return (await (await request(path, init)).json()) as T;
  }

  const jsonBody = (body: unknown): RequestInit => ({
    body: JSON.stringify(body),
    headers: { 'Content-Type': 'application/json' },
  });

  const provenanceHeader = (options: WriteOptions): Record<string, string> =>
    options.provenance ? {} : { 'ferry-provenance': 'off' };

  const resourcePath = (target: string, id: string) => `/api_v1/targets/${seg(target)}/resources/${seg(id)}/`;

  return {
    baseUrl: base,
    authHeaders: auth,
    session: () => json<Session>('/app/session'),
    saveToken: async (target: string, token: string) => {
      await request(`/app/tokens/${seg(target)}`, { method: 'PUT', ...jsonBody({ token }) });
    },
    forgetToken: async (target: string) => {
      await request(`/app/tokens/${seg(target)}`, { method: 'DELETE' });
    },
    /** tries `token` (in the body, never stored), else the stored one; throws the service's sentence */
    testToken: async (target: string, token?: string) => {
      await request(`/app/tokens/${seg(target)}/test`, { method: 'POST', ...jsonBody(token === undefined ? {} : { token }) });
    },
    localRoots: () => json<LocalRootsAnswer>('/app/local-roots'),
    /** adds a folder (or renames it: keyed by its path); throws the core's sentence when refused */
    putLocalRoot: (path: string, label?: string) =>
      json<LocalRoot>('/app/local-roots', { method: 'PUT', ...jsonBody(label ? { path, label } : { path }) }),
    removeLocalRoot: async (name: string) => {
      await request(`/app/local-roots/${seg(name)}`, { method: 'DELETE' });
    },
    targets: () => json<TargetDescription[]>('/api_v1/targets/'),
    /** one level of a target: its top-level resources, or a container's children */
    children: (target: string, containerId: ContainerRef, signal?: AbortSignal, withSizes = false) =>
      json<ResourceSummary[]>(
        `/api_v1/targets/${seg(target)}/resources/?container=${seg(containerId ?? 'None')}${withSizes ? '&fields=size,date_modified' : ''}`,
        { signal },
      ),
    detail: (target: string, id: string, signal?: AbortSignal) =>
      json<ResourceDetail>(`/api_v1/targets/${seg(target)}/resources/${seg(id)}.json/`, { signal }),
    jobs: () => json<Job[]>('/api_v1/jobs/'),
    job: (ticket: string) => json<Job>(`/api_v1/jobs/${seg(ticket)}/`),
    cancelJob: (ticket: string) => json<Job>(`/api_v1/jobs/${seg(ticket)}/`, { method: 'DELETE' }),
    pauseJob: (ticket: string) => json<Job>(`/api_v1/jobs/${seg(ticket)}/pause/`, { method: 'POST' }),
    moveJob: (ticket: string, to: QueueMove) =>
      json<QueueState>(`/api_v1/jobs/${seg(ticket)}/move/`, { method: 'POST', ...jsonBody({ to }) }),
    queue: () => json<QueueState>('/api_v1/queue/'),
    configureQueue: (settings: Partial<QueueSettings>) =>
      json<QueueState>('/api_v1/queue/', { method: 'PUT', ...jsonBody(settings) }),
    clearFinishedJobs: () => json<{ removed: number }>('/api_v1/jobs/', { method: 'DELETE' }),
    /** a new job for a finished job's failed files only (POST /api_v1/jobs/<ticket>/retry/) */
    retryFailedFiles: (ticket: string) => json<Acknowledgement>(`/api_v1/jobs/${seg(ticket)}/retry/`, { method: 'POST' }),
    /** a paused job going on, or a new job going on where a cancelled or failed transfer stopped (POST /api_v1/jobs/<ticket>/resume/) */
    resumeJob: (ticket: string) => json<Acknowledgement>(`/api_v1/jobs/${seg(ticket)}/resume/`, { method: 'POST' }),
    upload: (
      target: string,
      containerId: ContainerRef,
      zip: Blob,
      duplicateAction: DuplicateFileAction,
      options: WriteOptions = DEFAULT_WRITE,
    ) => {
      const form = new FormData();
      // before the ZIP, so a refused choice is refused before its bytes are read
      if (options.duplicateChoices) form.append('duplicate_choices', JSON.stringify(options.duplicateChoices));
      form.append('service-file', zip, 'upload.zip');
      return json<Acknowledgement>(resourcesPath(target, containerId), {
        method: 'POST',
        body: form,
        headers: { 'duplicate-file-action': duplicateAction, ...provenanceHeader(options), ...(options.folders ? { 'ferry-folders': options.folders } : {}) },
      });
    },
    transfer: (
      destination: string,
      containerId: ContainerRef,
      /** `ids` (two or more): the whole selection as one job, into a folder */
      source: { target: string; id: string; ids?: readonly string[] },
      duplicateAction: DuplicateFileAction,
      options: TransferOptions = DEFAULT_WRITE,
    ) =>
      json<Acknowledgement>(resourcesPath(destination, containerId), {
        method: 'POST',
        body: JSON.stringify({
          ...sourceFields(source),
          ...(options.metadata ? { metadata: options.metadata } : {}),
          ...(options.duplicateChoices ? { duplicate_choices: options.duplicateChoices } : {}),
          ...(options.folders ? { folders: options.folders } : {}),
        }),
        headers: {
          'Content-Type': 'application/json',
          'duplicate-file-action': duplicateAction,
          ...provenanceHeader(options),
        },
      }),
    /**
     * Which files of a transfer (its source) or an upload (its files as the ZIP will hold them)
     * into a folder are already there, both sides side by side (docs/api.md "Duplicate files").
     */
    conflicts: (destination: string, containerId: string, what: { target: string; id: string; ids?: readonly string[] } | { files: readonly DescribedFile[] }) =>
      json<ConflictsReport>(`/api_v1/targets/${seg(destination)}/resources/${seg(containerId)}/conflicts/`, {
        method: 'POST',
        body: JSON.stringify('files' in what ? { files: what.files } : sourceFields(what)),
        headers: { 'Content-Type': 'application/json' },
      }),
    /** one page of a target's search (docs/api.md "Search"); 405 where capabilities.search is off */
    search: async (target: string, text: string, page: number, signal?: AbortSignal): Promise<SearchPage> => {
      const query = new URLSearchParams({ q: text, page: String(page) });
      const response = await request(`/api_v1/targets/${seg(target)}/resources/?${query}`, { signal });
      const method = response.headers.get('ferry-search-method');
      return {
        rows: (await response.json()) as ResourceSummary[],
        hasNext: /rel="?next"?/.test(response.headers.get('link') ?? ''),
        method: method === 'index' || method === 'names' ? method : null,
        truncated: response.headers.get('ferry-search-truncated') === 'true',
      };
    },
    /** DELETE with the confirmation header the server demands (without it: 428, nothing deleted) */
    deleteResource: (target: string, id: string) =>
      json<DeleteResult>(resourcePath(target, id), { method: 'DELETE', headers: { 'ferry-confirm': 'delete' } }),
    /** rename and/or move; never over an existing name (the server answers 409 instead) */
    moveResource: (target: string, id: string, change: MoveChange) =>
      json<MoveResult>(resourcePath(target, id), { method: 'PATCH', ...jsonBody(change) }),
    createFolder: (target: string, containerId: ContainerRef, title: string) =>
      json<CreateFolderResult>(
        containerId === null ? `/api_v1/targets/${seg(target)}/folders/` : `${resourcePath(target, containerId)}folders/`,
        { method: 'POST', ...jsonBody({ title }) },
      ),
    /**
     * Sends an operation's `undo` request as the server wrote it. Its URL is absolute on the
     * base this client uses; only the path is taken, so the request goes to the same server.
     */
    undo: async (undo: UndoRequest) => {
      const url = new URL(undo.url);
      const init: RequestInit = undo.body ? { method: undo.method, ...jsonBody(undo.body) } : { method: undo.method };
      init.headers = { ...(init.headers as Record<string, string> | undefined), ...undo.headers };
      await request(url.pathname + url.search, init);
    },
    /** compares the destination resource with the source one, as a check job (docs/api.md "Check") */
    check: (destination: { target: string; id: string }, source: { target: string; id: string }, readBytes = false) =>
      json<Acknowledgement>(`${resourcePath(destination.target, destination.id)}check/`, {
        method: 'POST',
        ...jsonBody({ source_target_name: source.target, source_resource_id: source.id, ...(readBytes ? { read_bytes: true } : {}) }),
      }),
    /** a resource's descriptive metadata, to review before a transfer makes a new record of it (docs/api.md "Descriptive metadata") */
    metadata: (target: string, id: string, signal?: AbortSignal) =>
      json<DescriptiveMetadata>(`${resourcePath(target, id)}metadata/`, { signal }),
    rcloneRemotes: () => json<RcloneRemotesAnswer>('/app/rclone-remotes'),
    /** adds or replaces a remote; the server tries it first and answers its sentence when it fails (nothing kept) */
    putRcloneRemote: (name: string, type: string, options: Record<string, string>) =>
      json<RcloneRemote>(`/app/rclone-remotes/${seg(name)}`, { method: 'PUT', ...jsonBody({ type, options }) }),
    removeRcloneRemote: async (name: string) => {
      await request(`/app/rclone-remotes/${seg(name)}`, { method: 'DELETE' });
    },
    /**
     * Re-check a stored archive's bytes against its recorded hashes, as a job. No body and
     * no content type: the gate accepts a bodiless POST.
     */
    verify: (target: string, id: string) =>
      json<Acknowledgement>(`/api_v1/targets/${seg(target)}/resources/${seg(id)}/verify/`, { method: 'POST' }),
    /** names several resources to download as one bag; answers the app-relative path to GET */
    selection: async (target: string, ids: readonly string[]) =>
      (
        await json<{ download: string }>(`/api_v1/targets/${seg(target)}/selections/`, {
          method: 'POST',
          ...jsonBody({ resource_ids: ids }),
        })
      ).download,
    /** the first `maxBytes` of one file, raw (docs/api.md "A file's bytes"), and whether the file holds more */
    fileHead: async (target: string, id: string, maxBytes: number, signal?: AbortSignal): Promise<{ bytes: Uint8Array; truncated: boolean }> => {
      const response = await request(`${resourcePath(target, id)}content/?max_bytes=${maxBytes}`, { signal });
      return { bytes: new Uint8Array(await response.arrayBuffer()), truncated: response.headers.get('ferry-content-truncated') === 'true' };
    },
    /** a streamed download response (the caller saves the body) */
    download: (path: string, signal?: AbortSignal) => request(path, { signal }),
  };
}

export type ApiClient = ReturnType<typeof createApiClient>;
