// The /api_v1/ contract of docs/api.md as types. Pure data: no IO, no Node globals,
// so both the service core and the renderer can import it.

export type ResourceKind = 'container' | 'item';
export type ResourceKindName = 'folder' | 'file';

export type TargetAction = 'resource_collection' | 'resource_detail' | 'resource_download' | 'resource_upload';

export interface TargetDescription {
  name: string;
  readable_name: string;
  supported_actions: Record<TargetAction, boolean>;
  supported_hash_algorithms: string[];
  /** `{base}/api_v1/target/<name>/` */
  detail: string;
  /** extension (docs/api.md "File operations"): which file operations the target offers */
  supported_operations?: Record<FileOperation, boolean>;
}

/** Extension: the file operations beside the contract's four actions. */
export type FileOperation = 'delete' | 'rename' | 'move' | 'create_folder';
export const FILE_OPERATIONS: readonly FileOperation[] = ['delete', 'rename', 'move', 'create_folder'];

/**
 * How to undo an operation, as a request the client can send as it is (with its token
 * headers), or null when the operation cannot be undone through Ferry.
 */
export interface UndoRequest {
  method: 'POST' | 'PATCH' | 'DELETE';
  url: string;
  /** the JSON body to send, when there is one */
  body?: Record<string, unknown>;
  /** headers to add (a DELETE's confirmation) */
  headers?: Record<string, string>;
  /** what the undo does, as a sentence */
  description: string;
}

/** Where a deleted resource went. */
export type DeletedInto = 'ferry_trash' | 'system_trash' | 'deleted';

/** Answer to DELETE /api_v1/targets/<t>/resources/<id>/. */
export interface DeleteResult {
  deleted: ResourceSummary;
  deleted_into: DeletedInto;
  /** a sentence saying what was deleted and where it went */
  message: string;
  /** set for Ferry's trash: the id of POST /api_v1/trash/<id>/restore/ */
  trash_id: string | null;
  undo: UndoRequest | null;
}

/** Answer to PATCH /api_v1/targets/<t>/resources/<id>/ (rename and/or move). */
export interface MoveResult {
  /** the resource as it is now (its id may have changed: path-based targets) */
  resource: ResourceSummary;
  previous: { id: string; title: string; container: string };
  /** what an `overwrite: true` replaced, and where it went */
  replaced: { title: string; deleted_into: DeletedInto; trash_id: string | null } | null;
  message: string;
  undo: UndoRequest | null;
}

/** Answer to POST …/folders/. */
export interface CreateFolderResult {
  resource: ResourceSummary;
  message: string;
  undo: UndoRequest | null;
}

/** One item in Ferry's own trash (GET /api_v1/trash/). */
export interface TrashItem {
  id: string;
  target: string;
  title: string;
  kind_name: ResourceKindName;
  /** where it was, relative to the target's top level ("Data/raw/a.txt") */
  original_path: string;
  trashed_at: string;
  restore_url: string;
}

/** Answer to POST /api_v1/trash/<id>/restore/. */
export interface RestoreResult {
  resource: ResourceSummary;
  message: string;
}

export interface ResourceSummary {
  kind: ResourceKind;
  kind_name: ResourceKindName;
  id: string;
  /** parent id, or the string "None" at the top level */
  container: string;
  title: string;
  /** `{base}/api_v1/targets/<t>/resources/<id>` */
  detail: string;
}

export interface ResourceDetail {
  kind: ResourceKind;
  kind_name: ResourceKindName;
  id: string;
  title: string;
  /** ISO 8601 UTC, six fraction digits and Z, or null when the target does not know */
  date_created: string | null;
  date_modified: string | null;
  hashes: Record<string, string>;
  extra: Record<string, unknown>;
  download_url: string;
}

export interface Acknowledgement {
  ticket_number: string;
  message: string;
}

export const ACKNOWLEDGEMENT_MESSAGE = 'The server is processing the request.';

export type DuplicateFileAction = 'ignore' | 'update';
export const DUPLICATE_FILE_ACTIONS: readonly DuplicateFileAction[] = ['ignore', 'update'];

export type JobKind = 'upload' | 'transfer' | 'verify' | 'download';
export type JobStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

export interface JobProgress {
  files_done: number;
  files_total: number | null;
  bytes_done: number;
  bytes_total: number | null;
}

export interface FileError {
  path: string;
  error: string;
}

export interface FixityFailure {
  path: string;
  algorithm: string;
  expected: string;
  actual: string;
}

export interface JobReport {
  /** paths (relative to the destination container) of what the job created */
  resources_created: string[];
  resources_updated: string[];
  resources_ignored: string[];
  failed_fixity: FixityFailure[];
  /** per-file errors a remote reported without failing the whole job */
  file_errors: FileError[];
  /** what the destination could not keep of files it wrote (e.g. modification times), as sentences */
  notes?: string[];
  /** for a top-level upload: the new resource (its title may differ from the folder's if taken) */
  new_resource?: { id: string; title: string } | null;
  /** verify jobs: files whose bytes matched every recorded hash, and files with none to check */
  verified?: string[];
  unverified?: string[];
}

export interface Job {
  ticket_number: string;
  kind: JobKind;
  status: JobStatus;
  target: string;
  resource_id: string | null;
  created: string;
  started: string | null;
  finished: string | null;
  progress: JobProgress;
  report: JobReport | null;
  error: string | null;
  /** transfer jobs: where the entries come from */
  source?: { target: string; resource_id: string } | null;
}

export interface TransferRequest {
  source_target_name: string;
  source_resource_id: string;
}

export type ErrorCode =
  | 'bad_request'
  | 'invalid_duplicate_action'
  | 'missing_file'
  | 'not_a_zip'
  | 'bad_bag'
  | 'unauthorized'
  | 'forbidden'
  | 'gate_refused'
  | 'target_not_found'
  | 'resource_not_found'
  | 'ticket_not_found'
  | 'not_found'
  | 'action_not_supported'
  | 'too_large'
  | 'unsupported_media_type'
  | 'conflict'
  | 'confirmation_required'
  | 'rate_limited'
  | 'upstream_error'
  | 'upstream_unavailable'
  | 'internal_error';

export interface ApiError {
  error: string;
  code: ErrorCode;
}

/** Server-Sent Event payload on GET /api_v1/jobs/events/ (event name: "job"). */
export type JobEvent = Job;
