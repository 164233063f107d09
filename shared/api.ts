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
  /** extension: optional features beyond the four actions (docs/api.md "Search") */
  capabilities: TargetCapabilities;
}

export interface TargetCapabilities {
  /** `GET resources/?q=` answers matches; false: it answers 405 */
  search: boolean;
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
