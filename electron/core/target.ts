import type { Readable } from 'node:stream';
import type { NodeColumns } from './node-columns.js';
import type {
  DescriptiveMetadata,
  FileError,
  FileOperation,
  ResourceKind,
  ResourceKindName,
  TargetAction,
  WriteDuplicateAction,
} from '../../shared/api.js';
import type { NamingRules } from './plan/naming-rules.js';
import type { WritePlan } from './plan/write-plan.js';

/**
 * The one interface every storage target implements (modelled on rclone's backends).
 * A target says what it cannot do through `supported_actions`; nothing above the core
 * ever asks a target's name to decide behaviour.
 */
export interface Target {
  readonly info: TargetInfo;
  /** What the target can do beyond the contract, for fast paths to rely on (see TargetCapabilities); absent: nothing. */
  readonly capabilities?: TargetCapabilities;
  /** Resources the token can see. `scope` (see ListScope) narrows the walk. */
  list(ctx: TargetContext, scope?: ListScope): AsyncIterable<ResourceNode>;
  /**
   * Optional: the same nodes as list(), in order, a batch at a time. Listings run to
   * 100,000 rows; a caller that can take batches (the HTTP listing) then pays one await per
   * batch rather than one per row. (Which batches a caller may keep: capabilities.cacheableListings.)
   */
  listBatches?(ctx: TargetContext, scope?: ListScope): AsyncIterable<readonly ResourceNode[]>;
  detail(ctx: TargetContext, id: string): Promise<ResourceInfo>;
  /** The resource and everything below it, as a stream of entries (see Entry.path). */
  read(ctx: TargetContext, id: string): Promise<ReadResult>;
  /**
   * Writes entries into `containerId`, or, with `containerId === null`, creates a new
   * top-level resource from entries that all sit under one top folder (its name is the
   * new resource's title; if taken, the target picks a distinct one and reports it).
   */
  write(ctx: TargetContext, containerId: string | null, entries: AsyncIterable<Entry>, options: WriteOptions): Promise<WriteOutcome>;
  /**
   * Optional: one page of the resources whose names (or titles and metadata, where the
   * service has an index) match `query.text`, within what the token can see — the service's
   * own search where it has one, else a bounded name filter over list() (see core/search.ts).
   * A target without it answers `?q=` with 405 and describes itself with `search: false`.
   * Searching "survey" on Zenodo yields the depositions Zenodo's index finds for it; on a
   * local folder, "survey.csv", "Survey 2024/" and the like below the workspace.
   */
  search?(ctx: TargetContext, query: SearchQuery): Promise<SearchPage>;
  /**
   * Optional: what the resource says of itself beyond its files (title, description,
   * creators …), in the common model below; null when it says nothing. A transfer to a new
   * top-level resource passes it on in WriteOptions.metadata.
   */
  describe?(ctx: TargetContext, id: string): Promise<DescriptiveMetadata | null>;
  /**
   * Optional: a copy of `source`'s resource `sourceId` into `containerId` (null: a new
   * top-level resource, as write() makes it) that this target makes without the bytes
   * passing through Ferry (rclone's server-side copy between two remotes of one engine).
   * Returns null when it cannot for this source or resource; the caller then reads and
   * writes. The outcome holds what write() would report: a file counts as created or
   * updated only once the destination shows it with the source's size and every hash both
   * sides list alike; any other file is a fileError. Cancelling `options.signal` stops the
   * copy where it runs before the promise settles.
   */
  copyFrom?(ctx: TargetContext, source: Target, sourceId: string, containerId: string | null, options: CopyFromOptions): Promise<WriteOutcome> | null;
  /** Optional: re-check stored bytes against recorded hashes (the offline library). */
  verify?(ctx: TargetContext, id: string, options: VerifyOptions): Promise<VerifyOutcome>;
  /** Optional: release handles (file watchers, sockets) at shutdown. */
  close?(): Promise<void>;

  // ---- File operations (docs/api.md "File operations"). Each is offered only when its
  // flag in `info.supported_operations` is true and the method is there (operations/
  // supported.ts says so in one place). Names reach a target already checked against the
  // core's rule (operations/names.ts) and the target's own checkName.

  /**
   * Optional: deletes the resource and everything below it, nothing else. A target on this
   * machine hands it to `env.trash` instead of removing it; a remote deletes for good.
   * Deleting folder "Data" removes "Data" and "Data/a.txt", never a sibling.
   */
  deleteResource?(ctx: TargetContext, id: string, env: OperationEnv): Promise<DeleteOutcome>;
  /**
   * Optional: gives the resource a new title and/or parent (`to.container`: an id, or null
   * for the top level; undefined keeps the parent). Never replaces an existing resource of
   * that name unless `to.overwrite`: without it, a taken name is a 409 naming what is there.
   * Renaming "Data/a.txt" to "b.txt" leaves "Data/b.txt"; its id may change.
   */
  moveResource?(ctx: TargetContext, id: string, to: MoveTo, env: OperationEnv): Promise<MoveOutcome>;
  /** Optional: makes an empty folder `title` in `containerId` (null: the top level); 409 if the name is taken. */
  createFolder?(ctx: TargetContext, containerId: string | null, title: string): Promise<ResourceNode>;
  /**
   * Optional: puts an item of Ferry's trash back where it was (`item.originalPath`), never
   * over anything that is there now (409), and only into a folder that still exists.
   */
  restoreTrashed?(ctx: TargetContext, item: TrashedItem, trash: RestorableTrash): Promise<ResourceNode>;
  /** Optional: why `name` cannot be a name on this target (its own reserved names), or null. */
  checkName?(name: string): string | null;
  /**
   * Optional: what the service forbids in names (reserved names, characters, a flat
   * namespace), from its docs/targets/*.md evidence. The core's write planner refuses a write
   * that breaks them before this target is called (plan/write-plan.ts); unset: none.
   */
  readonly namingRules?: NamingRules;
  /**
   * Optional, for a target whose records keep no folders (namingRules.flattenWith): true when
   * a write into `containerId` makes or joins one record per top-level folder (a figshare
   * project's items) rather than writing into one record. A folder mode then packs below
   * each of those folders (remote/packed-folders.ts); unset: false.
   */
  recordPerTopFolder?(containerId: string): boolean;
}

// ---- Capabilities. Everything a fast path relies on beyond the contract is declared in the
// types below, and nowhere else: no symbol, no probe for a method by name, no flag read off
// an object's state. Each is optional, and the contract's own path gives the same bytes and
// the same outcome without it (the shared target suite checks so, hiding each in turn). A
// caller reads a target's through capabilitiesOf() (core/capabilities.ts), which also hides
// each one whose fast path (core/fast-paths.ts) is switched off.

/** A target's abilities beyond the contract (as rclone's backends declare `Features`). */
export interface TargetCapabilities {
  /** write() honours StagedWriteOptions.beforeCommit (jobs/staged-write.ts). Fast path 'staged-bag-check'. */
  readonly stagedWrites?: true;
  /** Some batches of listBatches() come again, as they are, while unchanged. Fast path 'kept-listings'. */
  readonly cacheableListings?: CacheableListings;
  /** The full listing also as columns of bytes. Fast path 'columnar-listing'. */
  readonly columnarListing?: ColumnarListing;
}

export interface CacheableListings {
  /**
   * True for a batch this target will hand out again, as this very array and unchanged,
   * while what it lists is unchanged (the array's identity is the listing's version): a
   * caller may keep what it made of it, keyed by the array. A kept batch is frozen.
   */
  isKept(batch: readonly ResourceNode[]): boolean;
}

export interface ColumnarListing {
  /** listBatches()' rows, in the same order, where a batch may come as NodeColumns (no node object per row). */
  listColumns(ctx: TargetContext, scope?: ListScope): AsyncIterable<readonly ResourceNode[] | NodeColumns>;
}

/** A file's bytes (all of them, checked as its source checks them) and their digests. */
export interface WholeFile {
  bytes: Buffer;
  /** hex digests: at least the algorithms asked for (lower case names) */
  hashes: Record<string, string>;
  /**
   * True when `bytes` start its own ArrayBuffer (not a slice of a larger read, not Node's
   * shared pool) that nothing else holds: the caller may move that ArrayBuffer to another
   * thread (a transfer), after which `bytes` are empty here. A second call reads them again.
   */
  movable?: boolean;
}

/** Reads the whole file and hashes it with `algorithms` in the same pass; fails as open()'s stream would. */
export type ReadWhole = (algorithms: readonly string[]) => Promise<WholeFile>;

/** A file on this machine that Ferry may open itself (ReadResult.directFiles). */
export interface DirectFile {
  absolutePath: string;
  /** lstat's size when listed */
  size: number;
  /** a Node fs error (with `code`) as the error the target's open() would have thrown */
  toError(error: unknown): unknown;
}

/** What the core lends a file operation. */
export interface OperationEnv {
  /** where a target on this machine puts what it deletes or replaces */
  trash: Trash;
}

export interface MoveTo {
  title?: string;
  container?: string | null;
  overwrite: boolean;
}

export interface DeleteOutcome {
  /** the resource as it was */
  node: ResourceNode;
  /** in Ferry's trash (restorable through it), the system's trash, or gone for good */
  into: TrashReceipt | { kind: 'deleted' };
}

export interface MoveOutcome {
  before: ResourceNode;
  after: ResourceNode;
  /** what `overwrite` replaced, and where it went */
  replaced: { title: string; into: TrashReceipt | { kind: 'deleted' } } | null;
}

/**
 * The trash port: the core cannot import Electron, so the desktop app hands in the system
 * trash (electron/main/system-trash.ts) and everything else uses Ferry's own trash folder
 * (operations/folder-trash.ts), which can also put things back.
 */
export interface Trash {
  /** Moves the file or folder at `absolutePath` (on this machine) out of the way; never deletes it. */
  put(absolutePath: string, origin: TrashOrigin): Promise<TrashReceipt>;
}

export interface RestorableTrash extends Trash {
  list(): Promise<TrashedItem[]>;
  find(id: string): Promise<TrashedItem>;
  /** Moves the item to `absolutePath` (which must not exist) and forgets it. */
  takeOut(id: string, absolutePath: string): Promise<void>;
}

export interface TrashOrigin {
  target: string;
  /** '/'-separated, relative to the target's top level */
  path: string;
  kind: 'file' | 'folder';
}

export type TrashReceipt = { kind: 'ferry_trash'; id: string } | { kind: 'system_trash' };

export interface TrashedItem {
  id: string;
  origin: TrashOrigin;
  /** when it went to the trash */
  trashedAt: Date;
}

export interface TargetInfo {
  name: string;
  readable_name: string;
  supported_actions: Record<TargetAction, boolean>;
  supported_hash_algorithms: string[];
  /**
   * Whose token the target takes. `access-key`: Ferry's own access key (local targets);
   * `remote`: the remote service's token, or the one kept in the keychain for it.
   */
  credential: 'access-key' | 'remote';
  /** Extension: which file operations the target declares (see Target.deleteResource …); absent: none. */
  supported_operations?: Record<FileOperation, boolean>;
  /**
   * Set when every id this target makes is base64url-alphabet text (A-Z a-z 0-9 - _), as
   * its own code builds them: the HTTP layer then writes ids into listings as they are,
   * without checking each of 100,000 for characters to escape.
   */
  plainIds?: boolean;
  /**
   * Set when a top-level write keeps WriteOptions.metadata (what it can hold of it, naming
   * the rest in its notes). Unset: the job reports that the metadata was not kept.
   */
  keepsMetadata?: boolean;
  /**
   * What one write keeps in flight on the write pipeline (jobs/ordered-pipeline.ts): files at
   * once and the sum of their sizes, within the service's documented limits (cited in
   * docs/targets/<name>.md). Unset: one file at a time. With the `parallel-writes` fast path
   * off every write runs one at a time. A target whose limit depends on what the destination
   * turns out to allow declares what every write starts with here, and its other limits beside
   * it, taken per write (OutcomePipeline.limitTo; Dataverse's DATAVERSE_IN_FLIGHT: more files
   * once the dataset's store takes direct uploads).
   */
  concurrency?: { files: number; bytes: number };
}

export interface TargetContext {
  /** The token for this target; for `access-key` targets, already checked by the caller. */
  token: string;
  signal: AbortSignal;
}

/**
 * `undefined`: everything, flat and recursive (the contract's collection).
 * `{container: null}`: the top level only. `{container: id}`: the direct children of id.
 */
export interface ListScope {
  container?: string | null;
}

export interface SearchQuery {
  /** what the user typed, trimmed, never empty */
  text: string;
  /** 1-based */
  page: number;
}

export interface SearchPage {
  /** the page's matches, in the service's order; a node's container may be outside the page */
  nodes: ResourceNode[];
  /** the next page's number, or null when this is the last */
  next: number | null;
  /**
   * `index`: the service's own search (its query syntax, its ranking, may match metadata);
   * `names`: a case-insensitive substring match on names, walked by Ferry, bounded.
   */
  method: 'index' | 'names';
  /** set when a bounded walk stopped before seeing everything: later matches may exist */
  truncated?: boolean;
}

/** A ResourceSummary without the URLs the HTTP layer adds. */
export interface ResourceNode {
  kind: ResourceKind;
  kind_name: ResourceKindName;
  id: string;
  /** parent id, or null at the top level */
  container: string | null;
  title: string;
}

/** A ResourceDetail without the URLs the HTTP layer adds. */
export interface ResourceInfo extends ResourceNode {
  /** contract format (see core/time.ts), or null */
  date_created: string | null;
  date_modified: string | null;
  /** only algorithms of info.supported_hash_algorithms; lowercase hex; {} for containers */
  hashes: Record<string, string>;
  extra: Record<string, unknown>;
}

export interface ReadResult {
  /** the resource's title; a download's payload sits under data/<title>/ */
  title: string;
  /** one of the target's nodes: what was read */
  root: ResourceNode;
  entries: AsyncIterable<Entry>;
  /**
   * Optional capability (fast path 'direct-file-reads'; ask through askDirectFiles in
   * zip/large-file-source.ts): the caller opens the files itself, by path (O_NOFOLLOW, on a
   * worker thread). Called before iterating; true when the target agrees: it then reads
   * nothing ahead for this read, and its file entries carry `direct`.
   */
  directFiles?(): boolean;
}

/**
 * One file or folder passing from a reader to a writer (a target, the ZIP writer).
 * `path` is '/'-separated and starts with the read resource's own title:
 * reading folder "Data" yields "Data", "Data/a.txt", "Data/sub/b.txt"; reading file
 * "a.txt" yields "a.txt". Writers create `path` inside their destination container.
 */
export interface Entry {
  path: string;
  kind: 'file' | 'folder';
  /** bytes, when known before reading */
  size: number | null;
  mtime: Date | null;
  /** hashes the source itself reports (lowercase hex), by algorithm; may be empty */
  hashes: Record<string, string>;
  /** opens the bytes (files only); each call gives a fresh stream */
  open(): Promise<Readable>;
  /**
   * Digests the target remembers of exactly this version of the file, with the CRC-32 of
   * the bytes they were computed from. A reader that computes the CRC-32 anyway (a bag
   * download) may take them instead of hashing again, when the CRC-32 of the bytes it reads
   * matches.
   */
  remembered?: RememberedDigests;
  /** Hands the digests of all of the file's bytes, as read now, back to be remembered. */
  remember?(digests: RememberedDigests): void;

  // Optional capabilities of one entry (see TargetCapabilities); a writer that does not know
  // them uses open(), with the same result.

  /**
   * A small file (at most WHOLE_FILE_MAX_BYTES) offered as one buffer with its digests
   * instead of a stream (jobs/whole-entry.ts; fast path 'whole-small-files', ask through
   * readWholeOf). A wrapper of the entry that watches open() must wrap this too.
   */
  readWhole?: ReadWhole;
  /**
   * True when open()'s stream does not depend on the source's iteration: later entries may
   * be taken, opened and read while this one is still being read (a ZIP read by its central
   * directory). A writer may then write a large file alongside the files after it.
   */
  opensIndependently?: boolean;
  /** The file on this machine, when the read agreed to direct reads (ReadResult.directFiles). */
  direct?: DirectFile;
  /**
   * A source that can start a read mid-file (a file on this machine): the whole file's bytes
   * again, for a writer that already holds the first `offset` of them (a partial kept from an
   * interrupted run, see PartialFiles). The first `offset` bytes come from `kept` (the writer's
   * own copy, read back), the rest from the source read from `offset` on: whoever watches
   * the stream still hashes the whole file, while the source sends only what is missing. A
   * wrapper of the entry that watches open() wraps this the same way (jobs/open-from.ts, watchedReads).
   */
  openFrom?(offset: number, kept: Readable): Promise<Readable>;
}

export interface RememberedDigests {
  /** lowercase hex, by algorithm */
  hashes: Record<string, string>;
  /** unsigned */
  crc32: number;
}

export interface WriteOptions {
  /** `newer` and `rename` never reach a target: the core resolves them first (plan/duplicates.ts) */
  duplicateAction: WriteDuplicateAction;
  signal: AbortSignal;
  /** a short label naming the job, for commit messages and logs (e.g. "Ferry upload 1b2c…") */
  jobLabel: string;
  /**
   * For a top-level write: the source's descriptive metadata. A writer that keeps metadata
   * puts on the new resource what it can hold, and names in WriteOutcome.notes each field
   * it could not (never dropped silently). Others ignore it.
   */
  metadata?: DescriptiveMetadata;
  /**
   * Called once the destination has confirmed a file (created, updated, or found already
   * there), with its path as the entry named it; never for a file that may be partial, nor
   * before it would survive a power cut (a remote's confirmation is its own; the local writer
   * waits for a barrier: targets/local/durable-marks.ts). A job's resume journal listens
   * (jobs/resume-journal.ts).
   */
  onFileWritten?(path: string): void;
  /** A top-level write: called as soon as the new resource exists, before any file goes in. */
  onNewResource?(resource: { id: string; title: string }): void;
  /** Set by the core's jobs: the entries, already judged whole (plan/write-plan.ts); `entries` yields the same, in order. */
  plan?: WritePlan;
  /**
   * False where the caller reads no WriteOutcome.stored (the provenance record's own write): a
   * writer that asks the destination for those records in requests of their own once the files
   * are written (WebDAV's listings) leaves them out. Absent: wanted.
   */
  wantsStoredRecords?: boolean;
  /**
   * Set by a job that can resume: where a writer that stages large files on this machine
   * (targets/local) records the part of a file it has made durable, so that a later run of
   * the job goes on from there rather than from byte 0 (jobs/journaled-entries.ts).
   */
  partials?: PartialFiles;
}

/**
 * A job's record of large files written part-way, keyed by the entry's path as the writer is
 * handed it, and kept only for the same source bytes (the journal's identity of the file).
 */
export interface PartialFiles {
  /** What an earlier run made durable of this file from these same source bytes; null: start at byte 0. */
  kept(path: string): KeptPartial | null;
  /** Records a partial; call only once its first `bytes` are on disk (fdatasync'd). */
  keep(path: string, partial: KeptPartial): void;
}

/**
 * The first `bytes` of a file, on disk, and their CRC-32 (unsigned) to tell they were not
 * changed since; `file`, the partial on this machine (absent in a journal older than it), is
 * removed when the job ends.
 */
export interface KeptPartial {
  bytes: number;
  crc32: number;
  file?: string;
}

/** Descriptive metadata in one model for every target: declared in shared/api.ts, where the API's clients use it too. */
export type { DescriptiveMetadata };

export interface CopyFromOptions extends WriteOptions {
  /** the source target's token */
  sourceToken: string;
  /**
   * A job going on after Ferry stopped: the new top-level resource its first run made (the
   * copy goes on in it, rather than make another) and the engine job that run started (the
   * copy waits for it while it still runs, rather than start another).
   */
  resume?: { top: { id: string; title: string } | null; engineJob: EngineJob | null };
  /** called as soon as a job of the copying engine has started, so a resumed run can find it */
  onEngineJob?(job: EngineJob): void;
  /** called as files and bytes arrive; totals are null until known */
  onProgress(done: { files: number; bytes: number }, total: { files: number | null; bytes: number | null }): void;
}

/** A job an engine outside Ferry runs for a Ferry job (rclone rcd's `_async` job): it may outlive a crash of Ferry. */
export interface EngineJob {
  /** the engine's address (no credentials) */
  engine: string;
  jobid: number;
  /** the engine's stats group of this one copy, naming it beyond the job number */
  group: string;
}

export interface WriteOutcome {
  /** paths relative to the destination container, as in Entry.path */
  created: string[];
  updated: string[];
  ignored: string[];
  /** per-file failures the remote reported; the job still finishes */
  fileErrors: FileError[];
  /**
   * What the writer wrote but could not keep, in sentences a person can act on (e.g. a
   * server that does not let clients set modification times); the files still count as
   * written. Unset or empty when nothing was lost.
   */
  notes?: string[];
  /** set for a top-level write */
  newResource?: { id: string; title: string };
  /**
   * The destination's own record of each file written (key: the path as in `created`/
   * `updated`), as the service answered the write: the job compares it with the bytes it sent
   * (jobs/verify-written.ts). A written file with no record is reported not verifiable.
   */
  stored?: Map<string, StoredRecord>;
}

/**
 * What the service records of a stored file: its hashes (lowercase hex, by algorithm) and
 * size where it reports them; or, where it reports neither, why not, as a sentence.
 */
export type StoredRecord =
  | {
      hashes: Record<string, string>;
      size: number | null;
      /**
       * The hashes are those of the bytes as the writer wrote them (a local file: as rclone's
       * local backend keeps them), not read back from storage; the size is the stored file's.
       */
      hashedAsWritten?: true;
    }
  | { unverifiable: string };

export interface VerifyOptions {
  signal: AbortSignal;
  onProgress(done: { files: number; bytes: number }, total: { files: number; bytes: number }): void;
}

export interface VerifyOutcome {
  verified: string[];
  failed: { path: string; algorithm: string; expected: string; actual: string }[];
  /** files with no recorded hash to check against (now recorded, for plain ZIPs) */
  unverified: string[];
}

export function fullActions(upload = true): Record<TargetAction, boolean> {
  return { resource_collection: true, resource_detail: true, resource_download: true, resource_upload: upload };
}

/** Every file operation on, or those named. */
export function fileOperations(...only: FileOperation[]): Record<FileOperation, boolean> {
  const on = (operation: FileOperation) => only.length === 0 || only.includes(operation);
  return { delete: on('delete'), rename: on('rename'), move: on('move'), create_folder: on('create_folder') };
}

/**
 * The entries of a read of one file: that file's entry. A read's entries come from generators
 * written at module level or as methods, like this one, never from a generator function
 * written inside the call: each closure of a generator function gets a prototype of its own,
 * so the generators it makes get a map of their own, and a job's optimized `for await` over
 * them saw a new map at every job, deoptimized and was compiled again (docs/performance.md,
 * "Optimized code kept across jobs").
 */
export async function* singleEntry(entry: Entry): AsyncGenerator<Entry> {
  yield entry;
}
