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
  /** extension: optional features beyond the four actions (docs/api.md "Search") */
  capabilities: TargetCapabilities;
  /** extension (docs/api.md "Descriptive metadata"): a new top-level resource here keeps descriptive metadata */
  keeps_metadata: boolean;
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

export interface TargetCapabilities {
  /** `GET resources/?q=` answers matches; false: it answers 405 */
  search: boolean;
  /**
   * The folder modes (`ferry-folders`, a transfer's `folders`) a write here can choose among,
   * the first the default: all three where a record keeps no folders (Zenodo, InvenioRDM,
   * figshare); empty where folders are kept as they are.
   */
  folder_modes: FolderMode[];
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
  /** only in a listing asked for with `fields=size,date_modified`: bytes, null for a folder or when unknown */
  size?: number | null;
  /** only with `fields=size,date_modified`: contract timestamp, or null when unknown */
  date_modified?: string | null;
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

/**
 * What happens to a file the destination already holds (docs/api.md "Duplicate files"):
 * `ignore` leaves it; `update` replaces it when the bytes differ; `newer` replaces it only when
 * the source's modification time is later; `rename` keeps both, writing the new one as
 * `name (2).ext`. A target only ever sees `ignore` or `update` (WriteDuplicateAction): the core
 * resolves the other two before the write (electron/core/plan/duplicates.ts).
 */
export type DuplicateFileAction = 'ignore' | 'update' | 'newer' | 'rename';
export const DUPLICATE_FILE_ACTIONS: readonly DuplicateFileAction[] = ['ignore', 'update', 'newer', 'rename'];
/** The two actions a target's write() honours itself. */
export type WriteDuplicateAction = Extract<DuplicateFileAction, 'ignore' | 'update'>;

/**
 * How a write to a record that keeps no folders (Zenodo, figshare, InvenioRDM) keeps its
 * folders: `flatten` (the default) joins a path into the file name, `zip-per-folder` stores
 * each first-level folder as `<folder>.zip`, `bag` stores the whole write as one BagIt ZIP.
 */
export type FolderMode = 'flatten' | 'zip-per-folder' | 'bag';
export const FOLDER_MODES: readonly FolderMode[] = ['flatten', 'zip-per-folder', 'bag'];

export type JobKind = 'upload' | 'transfer' | 'verify' | 'download' | 'check';
/**
 * A job ends in exactly one of four states (docs/api.md "Job outcomes"; the core decides
 * which in electron/core/jobs/outcome.ts):
 * `succeeded` — every file arrived and every available check passed;
 * `completed_with_errors` — some files failed (report.failed_files), the rest arrived and checked;
 * `failed` — nothing arrived, or the job stopped (error says why, report what changed);
 * `cancelled` — stopped on request: incomplete, report says what changed before it stopped.
 * Before it ends a job is `queued` (waiting its turn), `running`, or `paused` (held by the
 * user; it keeps what it did so far and continues from there when resumed).
 */
export type JobStatus = 'queued' | 'running' | 'paused' | 'succeeded' | 'completed_with_errors' | 'failed' | 'cancelled';

export const FINISHED_JOB_STATUSES: readonly JobStatus[] = ['succeeded', 'completed_with_errors', 'failed', 'cancelled'];

/** True once a job has ended (it will not change again). */
export function isFinishedStatus(status: JobStatus): boolean {
  return FINISHED_JOB_STATUSES.includes(status);
}

/**
 * How the job queue runs (GET/PUT /api_v1/queue/, access key): at most `concurrency` jobs at
 * once, at most `per_target[t]` of them touching target t (as source or destination), and
 * all of them together reading at most `bandwidth_limit` bytes a second (null: no limit).
 */
export interface QueueSettings {
  concurrency: number;
  per_target: Record<string, number>;
  bandwidth_limit: number | null;
}

/** The queue as it stands: its settings, and the tickets waiting to run in the order they will. */
export interface QueueState {
  settings: QueueSettings;
  waiting: string[];
}

/** Where a waiting job moves in the queue (POST /api_v1/jobs/<ticket>/move/). */
export type QueueMove = 'first' | 'up' | 'down' | 'last';
export const QUEUE_MOVES: readonly QueueMove[] = ['first', 'up', 'down', 'last'];

export interface JobProgress {
  files_done: number;
  files_total: number | null;
  bytes_done: number;
  bytes_total: number | null;
  /** while the job waits to retry a request, why and until when, in words ("OSF is not answering (HTTP 503); retrying in 20 s (attempt 3 of 5)."); absent or null otherwise */
  note?: string | null;
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

/** What went wrong with one file: reading the source, writing the destination, the source's own check, or a verification. */
export type FileFailureStage = 'read' | 'write' | 'fixity' | 'verify';

/** One file that did not arrive, or did not pass a check. */
export interface FailedFile {
  /** as the source names it (Entry.path: starts with the read resource's title); verify: relative to the bag's data/ */
  path: string;
  stage: FileFailureStage;
  /** a sentence a person can act on */
  error: string;
  /** fixity and verify: the check that failed, what it should be and what the bytes gave (lowercase hex) */
  algorithm?: string;
  expected?: string;
  actual?: string;
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
  /**
   * Every file that did not arrive or did not pass a check, once per file: what decides
   * between succeeded, completed_with_errors and failed. (failed_fixity and file_errors are
   * the older, narrower lists, kept for existing clients.)
   */
  failed_files?: FailedFile[];
  /**
   * A job that stopped early (failed or cancelled): files handed to the destination in full
   * whose writing was not confirmed before it stopped; each may or may not be there.
   */
  unconfirmed?: string[];
  /** a resumed job (Job.resumed): files an earlier run completed with these same source bytes, not sent again */
  already_done?: string[];
  /**
   * upload and transfer jobs: each file written, checked against the destination's own record
   * of it after the write (a file whose check failed is also in failed_files, stage `verify`)
   */
  written_checks?: WrittenCheck[];
  /** verify jobs: files whose bytes matched every recorded hash, and files with none to check */
  verified?: string[];
  unverified?: string[];
  /** check jobs: what the comparison of the two resources found (docs/api.md "Check") */
  check?: CheckReport;
}

/** One written file against the destination's record of it: the size and hashes it reports for the stored file. */
export interface WrittenCheck {
  /** as in resources_created / resources_updated */
  path: string;
  result: 'verified' | 'not_verifiable' | 'failed';
  /** a sentence: what matched, why it could not be checked, or what differs */
  detail: string;
}

/**
 * A check's findings, like `rclone check`. Paths are as the source names them (starting with
 * the source resource's title); a destination path is mapped onto the source's title, so a
 * destination resource named differently (`Data (2)`) is compared file for file.
 */
export interface CheckReport {
  /** files on both sides found equal, by a hash or by size (compared_by says how many of each) */
  matched: number;
  /** files and folders in the source and not in the destination */
  missing: string[];
  /** files and folders in the destination only */
  extra: string[];
  different: CheckDifference[];
  /** files on both sides that could not be compared, each with the reason */
  not_comparable: { path: string; reason: string }[];
  /** files compared (matched or different) by a hash, and by size only */
  compared_by: { hash: number; size: number };
  /** of the files compared by a hash: how many by each algorithm */
  algorithms: Record<string, number>;
  /** whether the check was asked to read bytes where a side gives no common hash */
  read_bytes: boolean;
  /** what Ferry read to compute digests: files (a side of a file counts once) and bytes */
  read: { files: number; bytes: number };
}

/**
 * One file that differs. `hash`: both digests of one algorithm (lowercase hex); `read` names
 * the sides whose digest Ferry computed from the bytes rather than took from the target.
 * `size`: the byte counts differ (no hash needed). `kind`: a file on one side, a folder on the other.
 */
export type CheckDifference =
  | { path: string; by: 'hash'; algorithm: string; source: string; destination: string; read?: CheckSide[] }
  | { path: string; by: 'size'; source: number; destination: number }
  | { path: string; by: 'kind'; source: 'file' | 'folder'; destination: 'file' | 'folder' };

export type CheckSide = 'source' | 'destination';

/** POST /api_v1/targets/<dest>/resources/<id>/check/: the resource to compare the destination one with. */
export interface CheckRequest {
  source_target_name: string;
  source_resource_id: string;
  /** compute digests from the bytes where the two sides give no common hash (may be slow) */
  read_bytes?: boolean;
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
  /** a job made by POST /api_v1/jobs/<ticket>/retry/: the ticket whose failed files it retries */
  retry_of?: string | null;
  /**
   * A job that goes on from where an earlier run stopped (Ferry stopped or crashed while it
   * ran, or POST /api_v1/jobs/<ticket>/resume/ of a cancelled or failed one): how many files
   * that run had completed, which are not sent again, and the ticket resumed (`from`, null
   * for the same job after a restart). Null or absent: a first run.
   */
  resumed?: { files_already_done: number; from: string | null } | null;
}

/** One of `source_resource_id` (one resource) and `source_resource_ids` (a selection: one job). */
export interface TransferRequest {
  source_target_name: string;
  source_resource_id?: string;
  source_resource_ids?: string[];
  /** a new top-level resource's descriptive metadata, as reviewed (GET …/metadata/): used instead of the source's */
  metadata?: DescriptiveMetadata;
  /** per file, by its path as the source names it: the action for that file instead of the job's */
  duplicate_choices?: Record<string, DuplicateFileAction>;
  /** the same as the header `ferry-folders` (FolderMode); only for a destination that keeps no folders */
  folders?: FolderMode;
}

/** The source side of a conflicts preview: a transfer's source fields (docs/api.md "Duplicate files"). */
export type ConflictsRequest = Pick<TransferRequest, 'source_target_name' | 'source_resource_id' | 'source_resource_ids'>;

/** What one side knows of a file without reading its bytes. */
export interface FileFacts {
  /** bytes, or null when not known */
  size: number | null;
  /** contract timestamp, or null when not known */
  date_modified: string | null;
  /** what the side reports (lowercase hex by algorithm); may be empty */
  hashes: Record<string, string>;
}

/** A planned file the destination already holds, both sides side by side. */
export interface FileConflict {
  /** as the source names it: the key of duplicate_choices */
  path: string;
  /** where it would be written, relative to the destination folder */
  destination_path: string;
  source: FileFacts;
  /** null: the destination holds a folder of that name */
  destination: (FileFacts & { id: string }) | null;
}

/** POST …/resources/<container>/conflicts/: which planned files already exist there. */
export interface ConflictsReport {
  /** files the transfer would write */
  planned_files: number;
  conflicts: FileConflict[];
}

/**
 * Descriptive metadata in one model for every target (issue #21; docs/provenance.md). A field
 * left out is not known; nothing is filled in by guess.
 */
export interface DescriptiveMetadata {
  title?: string;
  /** plain text */
  description?: string;
  creators?: { name: string; orcid?: string; affiliation?: string }[];
  keywords?: string[];
  /** an SPDX identifier (e.g. "CC-BY-4.0") where known, else the licence's name */
  license?: string;
  /** YYYY-MM-DD */
  publication_date?: string;
  related_identifiers?: { identifier: string; relation: string }[];
  funding?: { funder: string; award?: string }[];
}

/** The most resources one transfer or download request may name (its JSON body must also stay under 1 MiB). */
export const MAX_RESOURCES_PER_REQUEST = 20_000;

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
  | 'fixity_failed'
  | 'retry_nothing'
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
