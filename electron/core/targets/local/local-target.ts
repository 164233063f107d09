// The `local` target: folders and files under one workspace root on this machine.
// Ids: see ids.ts. Symlinks: never followed, never listed, refused by id (README.md says why).

import { constants, type BigIntStats } from 'node:fs';
import { lstatSync } from 'node:fs';
import { lstat, mkdir, open, realpath } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { badRequest, conflict, notFound } from '../../errors.js';
import { hashStream, MultiHash } from '../../hashing.js';
import { formatNanoseconds } from '../../time.js';
import type {
  DeleteOutcome,
  DescriptiveMetadata,
  Entry,
  ListScope,
  MoveOutcome,
  MoveTo,
  OperationEnv,
  RestorableTrash,
  TrashedItem,
  ReadResult,
  ResourceInfo,
  ResourceNode,
  Target,
  SearchPage,
  SearchQuery,
  TargetCapabilities,
  TargetContext,
  TargetInfo,
  WriteOptions,
  WriteOutcome,
} from '../../target.js';
import { fileOperations, fullActions, singleEntry } from '../../target.js';
import { WINDOWS_FORBIDDEN_CHARACTERS, WINDOWS_RESERVED_BASENAMES, type NamingRules } from '../../plan/naming-rules.js';
import { judgedEntries } from '../../plan/write-plan.js';
import { DestinationTaken, renameNoReplace } from '../../operations/no-replace.js';
import { pageOfNameMatches } from '../../search.js';
import { toFerryError } from './fs-errors.js';
import { HashCache, type FileVersion } from './hash-cache.js';
import { readRememberedDigests, writeRememberedDigests } from './remembered-digests-file.js';
import { decodeLocalId, encodeLocalId } from './ids.js';
import { joinInside } from './safe-path.js';
import { WorkspaceLister } from './listing.js';
import { isCode, walkFolders, type WalkNode } from './walk.js';
import { writeEntries } from './writer.js';
import { WHOLE_FILE_MAX_BYTES, withReadWhole } from '../../jobs/whole-entry.js';
import { keptThenRest } from '../../jobs/open-from.js';
import { ReadAhead, READ_AHEAD_BYTES, READ_AHEAD_FILE_BYTES, READ_AHEAD_FILES } from './read-ahead.js';
import { fastPathOn } from '../../fast-paths.js';
import { lendingReadStream } from '../../read-buffers.js';
import { readOnWorkerOrHere } from '../../jobs/file-write-workers.js';
import { METADATA_FILE_MAX_BYTES, metadataAtTop } from '../../metadata/found-at-top.js';
import { readToEnd, wholeFileBuffer, withRoom } from '../../whole-file-buffer.js';

export const LOCAL_HASH_ALGORITHMS = ['md5', 'sha256'] as const;
/**
 * Bytes per read of a file opened as a stream. 2 MiB, not 1: each read is a hop to libuv's
 * thread pool and back, and on a busy machine the hop's wait, not the copy, was most of a
 * large file's streaming time in a bag download (the reader waited on the next 1 MiB).
 */
const READ_CHUNK = 2 * 1024 * 1024;
/** lstat calls in flight at once while walking a folder for a read */
const STAT_BATCH = 64;
/**
 * A folder's nodes are lstat'ed synchronously, a run of STAT_BATCH at a time, while such a
 * run takes less than this: on a local disk one lstat is ~2-5 us, and an async one costs the
 * event loop ~10-15 us more (a hop to libuv's pool and a promise: 3,000 files measured 14 ms
 * sync, 40-50 ms of CPU async). A slower file system (a network mount, ~1 ms a call) gets
 * async calls from then on, so the event loop is held once, for well under 0.1 s. The bound
 * is wide because the run is timed by the clock: on a busy machine the thread is often
 * preempted for a few milliseconds (4 ms sent most of a 3,000-file download async).
 */
const SYNC_STAT_RUN_MS = 16;

/** How a read makes its entries: `direct` once the caller agreed to open files itself (ReadResult.directFiles). */
interface EntryMode {
  readAhead: boolean;
  direct: boolean;
}

/** O_NOFOLLOW where the platform has it (not on Windows, where symlinks need privileges anyway). */
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;

export interface LocalTargetOptions {
  /** the workspace folder; its immediate children are the top-level resources */
  root: string;
  /** another folder of the person's choosing is another target: `local-<slug>` (default `local`) */
  name?: string;
  /** default 'Local folders' */
  readableName?: string;
  /** how many files' hashes to remember (LRU) */
  hashCacheSize?: number;
  /**
   * A download remembers a file's digests only when the file has not changed for this long
   * (ms, default 2000): a change within the same clock tick as the last one would not move
   * its ctime, so the digests could go on answering for bytes they were not computed from.
   */
  settledAfterMs?: number;
  /** where the digests downloads remembered are kept between runs (none: they last as long as the process) */
  digestsFile?: string;
}

/** A remembered digest is saved this long after the last one (a download remembers thousands in a burst). */
const SAVE_DIGESTS_AFTER_MS = 5000;

/** A node on disk, checked to be a real file or folder inside the root. */
interface ResolvedNode {
  relativePath: string;
  absolutePath: string;
  stat: BigIntStats;
  isFolder: boolean;
}

export class LocalTarget implements Target {
  readonly info: TargetInfo;
  /** write() keeps everything in temporaries until StagedWriteOptions.beforeCommit passes; unchanged folders' runs are kept */
  readonly capabilities: TargetCapabilities;
  /** exposed so tests (and a future verify) can see what is cached and how often bytes were read */
  readonly hashCache: HashCache;
  private readonly lister = new WorkspaceLister();
  private readonly root: string;
  private rootRealPath: string | null = null;
  private readonly settledAfterMs: number;
  private readonly digestsFile: string | null;
  private saveTimer: NodeJS.Timeout | null = null;
  private saving: Promise<void> = Promise.resolve();

  constructor(options: LocalTargetOptions) {
    this.info = {
      name: options.name ?? 'local',
      readable_name: options.readableName ?? 'Local folders',
      supported_actions: fullActions(true),
      supported_hash_algorithms: [...LOCAL_HASH_ALGORITHMS],
      credential: 'access-key',
      plainIds: true,
      supported_operations: fileOperations(),
    };
    this.capabilities = { stagedWrites: true, cacheableListings: this.lister.kept };
    this.root = options.root;
    this.hashCache = new HashCache(options.hashCacheSize);
    this.settledAfterMs = options.settledAfterMs ?? 2000;
    this.digestsFile = options.digestsFile ?? null;
    if (this.digestsFile) this.hashCache.restore(readRememberedDigests(this.digestsFile, path.resolve(this.root)));
  }

  /** Saves what is remembered and not saved yet. */
  async close(): Promise<void> {
    if (this.saveTimer) {
      clearTimeout(this.saveTimer);
      this.saveTimer = null;
      this.saveDigests();
    }
    await this.saving;
  }

  async *list(ctx: TargetContext, scope?: ListScope): AsyncIterable<ResourceNode> {
    for await (const batch of this.listBatches(ctx, scope)) yield* batch;
  }

  async *listBatches(ctx: TargetContext, scope?: ListScope): AsyncIterable<readonly ResourceNode[]> {
    const root = await this.realRoot();
    if (scope === undefined || scope.container === undefined) {
      if (root !== null) yield* this.lister.all(root, ctx.signal);
      return;
    }
    if (scope.container === null) {
      if (root !== null) yield* await this.lister.children(root, '');
      return;
    }
    const resolved = await this.resolve(scope.container);
    if (!resolved.isFolder) throw notFound(`'${resolved.relativePath}' is a file, not a folder: it has no children to list.`);
    yield* await this.lister.children(resolved.absolutePath, resolved.relativePath);
  }

  /** Not an index: a bounded name match over the whole listing (core/search.ts). */
  search(ctx: TargetContext, query: SearchQuery): Promise<SearchPage> {
    return pageOfNameMatches(this.list(ctx), query);
  }

  /**
   * A folder's own description: `ro-crate-metadata.json`, else `CITATION.cff`, at its top
   * (metadata/found-at-top.ts); null for a file or a folder with neither. Only a regular file
   * (never a link) up to 1 MiB is read.
   */
  async describe(_ctx: TargetContext, id: string): Promise<DescriptiveMetadata | null> {
    const resolved = await this.resolve(id);
    if (!resolved.isFolder) return null;
    return metadataAtTop(async (name) => {
      const file = joinInside(resolved.absolutePath, name);
      const stat = await lstat(file).catch(() => null);
      if (!stat?.isFile() || stat.size > METADATA_FILE_MAX_BYTES) return null;
      const handle = await open(file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
      try {
        return await handle.readFile('utf8');
      } finally {
        await handle.close();
      }
    });
  }

  async detail(_ctx: TargetContext, id: string): Promise<ResourceInfo> {
    const resolved = await this.resolve(id);
    const { stat, relativePath, isFolder } = resolved;
    const created = stat.birthtimeNs > 0n ? stat.birthtimeNs : stat.ctimeNs;
    const materializedPath = `/${relativePath}${isFolder ? '/' : ''}`;
    return {
      ...toResourceNode(relativePath, isFolder),
      date_created: formatNanoseconds(created),
      date_modified: formatNanoseconds(stat.mtimeNs),
      hashes: isFolder ? {} : await this.hashesOf(resolved),
      extra: {
        materialized_path: materializedPath,
        path: materializedPath,
        provider: 'local',
        size: isFolder ? null : Number(stat.size),
        tags: [],
        last_touched: null,
        mode: (Number(stat.mode) & 0o7777).toString(8).padStart(4, '0'),
      },
    };
  }

  async read(ctx: TargetContext, id: string): Promise<ReadResult> {
    const resolved = await this.resolve(id);
    const root = toResourceNode(resolved.relativePath, resolved.isFolder);
    const title = root.title;
    const prefixLength = resolved.relativePath.length - title.length;
    const mode: EntryMode = { readAhead: fastPathOn('read-ahead'), direct: false };
    const entries = resolved.isFolder
      ? this.folderEntries(resolved, prefixLength, ctx.signal, mode)
      : singleEntry(this.entryFor(resolved, title, mode));
    return {
      title,
      root,
      entries,
      directFiles: () => {
        mode.readAhead = false;
        mode.direct = true;
        return true;
      },
    };
  }

  async write(_ctx: TargetContext, containerId: string | null, source: AsyncIterable<Entry>, options: WriteOptions): Promise<WriteOutcome> {
    const entries = await judgedEntries(this, containerId, source, options);
    let root = await this.realRoot();
    if (root === null) {
      await mkdir(this.root, { recursive: true });
      root = await this.realRoot();
      if (root === null) throw notFound('The workspace folder could not be created.');
    }
    let containerPath = '';
    if (containerId !== null) {
      const container = await this.resolve(containerId);
      if (!container.isFolder) throw notFound(`'${container.relativePath}' is a file; files can only be written into a folder.`);
      containerPath = container.relativePath;
    }
    return writeEntries({
      rootRealPath: root,
      containerPath,
      topLevel: containerId === null,
      entries,
      options,
      hashCache: this.hashCache,
      algorithms: LOCAL_HASH_ALGORITHMS,
      idOf: encodeLocalId,
    });
  }

  /** Into the trash the core lends (never unlinked): the node and everything below it. */
  async deleteResource(_ctx: TargetContext, id: string, env: OperationEnv): Promise<DeleteOutcome> {
    const resolved = await this.resolve(id);
    const node = toResourceNode(resolved.relativePath, resolved.isFolder);
    try {
      const into = await env.trash.put(resolved.absolutePath, { target: this.info.name, path: resolved.relativePath, kind: resolved.isFolder ? 'folder' : 'file' });
      return { node, into };
    } catch (error) {
      throw toFerryError(error, resolved.relativePath);
    }
  }

  /**
   * A rename on disk that never replaces (operations/no-replace.ts); with `overwrite`, what
   * is in the way goes to the trash first, so even a replace loses nothing.
   */
  async moveResource(_ctx: TargetContext, id: string, to: MoveTo, env: OperationEnv): Promise<MoveOutcome> {
    const source = await this.resolve(id);
    const before = toResourceNode(source.relativePath, source.isFolder);
    const slash = source.relativePath.lastIndexOf('/');
    let parent = slash < 0 ? '' : source.relativePath.slice(0, slash);
    if (to.container === null) parent = '';
    else if (to.container !== undefined) {
      const folder = await this.resolve(to.container);
      if (!folder.isFolder) throw badRequest(`'${folder.relativePath}' is a file; move things into a folder.`);
      parent = folder.relativePath;
    }
    const destination = parent === '' ? (to.title ?? before.title) : `${parent}/${to.title ?? before.title}`;
    if (destination === source.relativePath) return { before, after: before, replaced: null };
    if (source.isFolder && destination.startsWith(`${source.relativePath}/`)) {
      throw badRequest(`'${source.relativePath}' cannot be moved into itself ('${parent}').`);
    }
    if (source.relativePath.startsWith(`${destination}/`)) {
      throw conflict(`'${destination}' holds '${source.relativePath}', so it cannot be replaced by it; choose another name.`);
    }
    const root = (await this.realRoot())!;
    const destinationPath = joinInside(root, destination);
    let replaced: MoveOutcome['replaced'] = null;
    try {
      try {
        await renameNoReplace(source.absolutePath, destinationPath);
      } catch (error) {
        if (!(error instanceof DestinationTaken)) throw error;
        if (!to.overwrite) {
          throw conflict(`'${destination}' already exists in the local workspace; choose another name, or send "overwrite": true to replace it (it goes to the trash).`);
        }
        const existing = await this.resolve(encodeLocalId(destination)).catch(() => {
          throw conflict(`'${destination}' is in the way and is not a plain file or folder (a link?); Ferry does not replace it. Move it away first.`);
        });
        const into = await env.trash.put(existing.absolutePath, { target: this.info.name, path: destination, kind: existing.isFolder ? 'folder' : 'file' });
        replaced = { title: to.title ?? before.title, into };
        await renameNoReplace(source.absolutePath, destinationPath);
      }
    } catch (error) {
      if (error instanceof DestinationTaken) throw conflict(`'${destination}' appeared in the local workspace while Ferry was moving; nothing was replaced.`);
      throw toFerryError(error, source.relativePath);
    }
    return { before, after: toResourceNode(destination, source.isFolder), replaced };
  }

  async createFolder(_ctx: TargetContext, containerId: string | null, title: string): Promise<ResourceNode> {
    let parent = '';
    if (containerId !== null) {
      const folder = await this.resolve(containerId);
      if (!folder.isFolder) throw badRequest(`'${folder.relativePath}' is a file; a new folder goes into a folder.`);
      parent = folder.relativePath;
    } else if ((await this.realRoot()) === null) {
      await mkdir(this.root, { recursive: true });
    }
    const relativePath = parent === '' ? title : `${parent}/${title}`;
    try {
      await mkdir(joinInside((await this.realRoot())!, relativePath));
    } catch (error) {
      if (isCode(error, 'EEXIST')) throw conflict(`'${relativePath}' already exists in the local workspace; choose another name.`);
      throw toFerryError(error, relativePath);
    }
    return toResourceNode(relativePath, true);
  }

  /** Back to where it was, into a folder that still exists (checked as any id is), never over anything. */
  async restoreTrashed(_ctx: TargetContext, item: TrashedItem, trash: RestorableTrash): Promise<ResourceNode> {
    const relativePath = decodeLocalId(encodeLocalId(item.origin.path));
    const slash = relativePath.lastIndexOf('/');
    let root = await this.realRoot();
    if (slash >= 0) {
      const parent = relativePath.slice(0, slash);
      const folder = await this.resolve(encodeLocalId(parent)).catch(() => null);
      if (!folder?.isFolder) throw conflict(`The folder '${parent}' that held '${relativePath}' is gone; restore or make it first, then restore this.`);
    } else if (root === null) {
      await mkdir(this.root, { recursive: true });
      root = await this.realRoot();
    }
    try {
      await trash.takeOut(item.id, joinInside(root!, relativePath));
    } catch (error) {
      if (error instanceof DestinationTaken) throw conflict(`'${relativePath}' exists again in the local workspace; rename or move it, then restore.`);
      throw toFerryError(error, relativePath);
    }
    return toResourceNode(relativePath, item.origin.kind === 'folder');
  }

  /** On Windows, what its file systems refuse; elsewhere nothing beyond the core's rules. */
  readonly namingRules: NamingRules | undefined =
    process.platform === 'win32'
      ? { forbiddenCharacters: WINDOWS_FORBIDDEN_CHARACTERS, reservedBasenames: WINDOWS_RESERVED_BASENAMES, noTrailingDotOrSpace: true, evidence: 'Win32 "Naming Files, Paths, and Namespaces"' }
      : undefined;

  /**
   * The entries of a folder read: the folder itself, then everything below it. Nodes are
   * stat'ed a folder's run at a time, and the bytes of the next few small files are read
   * ahead while the consumer works on the current one, so a folder of thousands of small
   * files does not wait on the disk (open, read, close) once per file.
   */
  private async *folderEntries(folder: ResolvedNode, prefixLength: number, signal: AbortSignal, mode: EntryMode): AsyncGenerator<Entry> {
    yield this.entryFor(folder, folder.relativePath.slice(prefixLength), mode);
    /** entries not yet yielded, with the bytes each may hold read ahead */
    const ahead: { entry: Entry; bytes: number }[] = [];
    let aheadBytes = 0;
    const readAhead = mode.readAhead ? new ReadAhead() : null;
    for await (const resolved of resolvedNodes(walkFolders(folder.absolutePath, folder.relativePath, signal))) {
      const small = mode.readAhead && !resolved.isFolder && resolved.stat.size <= BigInt(READ_AHEAD_FILE_BYTES);
      const bytes = small ? Number(resolved.stat.size) : 0;
      ahead.push({ entry: this.entryFor(resolved, resolved.relativePath.slice(prefixLength), mode, readAhead, small), bytes });
      aheadBytes += bytes;
      while (ahead.length > READ_AHEAD_FILES || aheadBytes > READ_AHEAD_BYTES) {
        const next = ahead.shift()!;
        aheadBytes -= next.bytes;
        yield next.entry;
      }
    }
    while (ahead.length > 0) yield ahead.shift()!.entry;
  }

  private entryFor(node: ResolvedNode, entryPath: string, mode: EntryMode, readAhead: ReadAhead | null = null, small = false): Entry {
    const version = versionOf(node);
    // The closures below keep these, not the node: its BigIntStats (~1.5 KB, most of an
    // entry) then dies young instead of living in the old generation for the whole read.
    const { absolutePath, relativePath, isFolder } = node;
    const size = Number(node.stat.size);
    const changedAtMs = Number(node.stat.ctimeNs / 1_000_000n);
    // Small files are read whole ahead, concurrently with the entries before them (ReadAhead
    // says when). Taken once (a second read reads the file again), and let go then: a job that
    // keeps its entries to the end (the provenance record) must not keep every small file's
    // bytes too.
    let bytes: Promise<SmallFile> | null = null;
    const index = isFolder
      ? -1
      : (readAhead?.add(small ? size : 0, () => {
          // hashed where it is read with the algorithms a whole read will most likely be asked
          // for (a job's check and record, this target's own digests); any others at readWhole
          bytes = readSmallFile(absolutePath, size, fastPathOn('whole-small-files') ? LOCAL_HASH_ALGORITHMS : []);
          bytes.catch(() => undefined); // surfaces at open(); an entry never opened must not crash Ferry
        }, small) ?? -1);
    const takeEarly = (): Promise<SmallFile> | null => {
      readAhead?.taken(index);
      const early = bytes;
      bytes = null;
      return early;
    };
    const entry: Entry = {
      path: entryPath,
      kind: isFolder ? 'folder' : 'file',
      size: isFolder ? null : size,
      mtime: new Date(Number(node.stat.mtimeNs / 1_000_000n)),
      hashes: isFolder ? {} : { ...(this.hashCache.get(version) ?? {}) },
      // each open() opens this entry's own file: a writer may stream it alongside the next ones
      ...(isFolder ? {} : { opensIndependently: true }),
      open: async () => {
        if (isFolder) throw new Error(`'${entryPath}' is a folder; only files have bytes to open.`);
        try {
          const early = takeEarly();
          return early ? readableOf((await early).bytes) : await openNoFollow(absolutePath);
        } catch (error) {
          throw toFerryError(error, relativePath);
        }
      },
    };
    // A small file goes to a job's writer as one buffer hashed once for every layer that asks
    // (the fixity check, the provenance record, the writer's hash cache: whole-entry.ts), not
    // as a chain of streams that each hash it again.
    if (!isFolder && size <= WHOLE_FILE_MAX_BYTES) {
      withReadWhole(entry, async (algorithms) => {
        try {
          const whole = await (takeEarly() ?? readSmallFile(absolutePath, size, algorithms));
          const missing = algorithms.filter((algorithm) => whole.hashes[algorithm] === undefined);
          const hashes = missing.length === 0 ? whole.hashes : { ...whole.hashes, ...digestsOf(whole.bytes, missing) };
          // readSmallFile's buffer is its own ArrayBuffer, and let go of here (takeEarly)
          return { bytes: whole.bytes, hashes, movable: true };
        } catch (error) {
          throw toFerryError(error, relativePath);
        }
      });
    }
    if (!isFolder && fastPathOn('remembered-digests')) {
      const remembered = this.hashCache.getWithCrc32(version);
      if (remembered) entry.remembered = { hashes: { ...remembered.hashes }, crc32: remembered.crc32 };
      const seenAt = Date.now();
      entry.remember = ({ hashes, crc32 }) => {
        if (changedAtMs > seenAt - this.settledAfterMs) return;
        this.hashCache.set(version, { ...hashes }, crc32);
        if (this.digestsFile && !this.saveTimer) {
          this.saveTimer = setTimeout(() => {
            this.saveTimer = null;
            this.saveDigests();
          }, SAVE_DIGESTS_AFTER_MS).unref();
        }
      };
    }
    // a large file resumed part-way reads only the bytes after those its writer kept (jobs/open-from.ts)
    if (!isFolder && size > WHOLE_FILE_MAX_BYTES) {
      entry.openFrom = async (offset, kept) =>
        keptThenRest(kept, async () => {
          try {
            return await openNoFollow(absolutePath, offset);
          } catch (error) {
            throw toFerryError(error, relativePath);
          }
        });
    }
    if (!isFolder && mode.direct) entry.direct = { absolutePath, size, toError: (error) => toFerryError(error, relativePath) };
    return entry;
  }

  private saveDigests(): void {
    const file = this.digestsFile;
    if (!file) return;
    // one write at a time, each of the entries as they are when it starts; a cache that cannot be saved is only slower next run
    this.saving = this.saving.then(() => writeRememberedDigests(file, path.resolve(this.root), this.hashCache.saved())).catch(() => undefined);
  }

  private hashesOf(node: ResolvedNode): Promise<Record<string, string>> {
    return this.hashCache.getOrCompute(versionOf(node), async () => {
      try {
        const { hashes } = await hashStream(await openNoFollow(node.absolutePath), LOCAL_HASH_ALGORITHMS);
        return hashes;
      } catch (error) {
        throw toFerryError(error, node.relativePath);
      }
    });
  }

  /**
   * The file or folder an id names, or 404: unknown ids, missing paths, symlinks (at the
   * node or any folder above it) and anything that is neither a regular file nor a folder.
   */
  private async resolve(id: string): Promise<ResolvedNode> {
    const relativePath = decodeLocalId(id);
    const missing = () => notFound(`There is no file or folder '${relativePath}' in the local workspace.`);
    const root = await this.realRoot();
    if (root === null) throw missing();
    const absolutePath = joinInside(root, relativePath);
    let stat: BigIntStats;
    try {
      stat = await lstat(absolutePath, { bigint: true });
      // The lexical path must be the real one: a symlinked folder anywhere above would differ.
      if (!(stat.isFile() || stat.isDirectory()) || (await realpath(absolutePath)) !== absolutePath) throw missing();
    } catch (error) {
      if (isCode(error, 'ENOENT', 'ENOTDIR', 'ELOOP', 'EACCES', 'ENAMETOOLONG')) throw missing();
      throw toFerryError(error, relativePath);
    }
    return { relativePath, absolutePath, stat, isFolder: stat.isDirectory() };
  }

  /** The root's real path (the root itself may sit behind a symlink, like /tmp on macOS); null while it does not exist. */
  private async realRoot(): Promise<string | null> {
    if (this.rootRealPath !== null) return this.rootRealPath;
    try {
      this.rootRealPath = await realpath(this.root);
      return this.rootRealPath;
    } catch (error) {
      if (isCode(error, 'ENOENT')) return null;
      throw error;
    }
  }
}

/** The walked nodes, lstat'ed a run of STAT_BATCH at a time (see SYNC_STAT_RUN_MS); those that vanished or changed kind are left out. A module generator: see singleEntry (target.ts). */
async function* resolvedNodes(walk: AsyncIterable<{ nodes: WalkNode[] }>): AsyncGenerator<ResolvedNode> {
  let statSync = fastPathOn('sync-lstat');
  for await (const { nodes } of walk) {
    for (let i = 0; i < nodes.length; i += STAT_BATCH) {
      const run = nodes.slice(i, i + STAT_BATCH);
      if (statSync) {
        const start = performance.now();
        const resolved = run.map((node) => statNodeSync(node));
        if (performance.now() - start > SYNC_STAT_RUN_MS) statSync = false;
        for (const node of resolved) if (node !== null) yield node;
      } else {
        for (const node of await Promise.all(run.map((node) => statNode(node)))) if (node !== null) yield node;
      }
    }
  }
}

/** lstat of a walked node; null when it vanished or turned into something else meanwhile. */
async function statNode(node: WalkNode): Promise<ResolvedNode | null> {
  try {
    const stat = await lstat(node.absolutePath, { bigint: true });
    if (node.isFolder ? !stat.isDirectory() : !stat.isFile()) return null;
    return { relativePath: node.relativePath, absolutePath: node.absolutePath, stat, isFolder: node.isFolder };
  } catch (error) {
    if (isCode(error, 'ENOENT', 'ENOTDIR')) return null;
    throw error;
  }
}

/** statNode's synchronous form (see SYNC_STAT_RUN_MS). */
function statNodeSync(node: WalkNode): ResolvedNode | null {
  try {
    const stat = lstatSync(node.absolutePath, { bigint: true });
    if (node.isFolder ? !stat.isDirectory() : !stat.isFile()) return null;
    return { relativePath: node.relativePath, absolutePath: node.absolutePath, stat, isFolder: node.isFolder };
  } catch (error) {
    if (isCode(error, 'ENOENT', 'ENOTDIR')) return null;
    throw error;
  }
}

function toResourceNode(relativePath: string, isFolder: boolean): ResourceNode {
  const slash = relativePath.lastIndexOf('/');
  return {
    kind: isFolder ? 'container' : 'item',
    kind_name: isFolder ? 'folder' : 'file',
    id: encodeLocalId(relativePath),
    container: slash < 0 ? null : encodeLocalId(relativePath.slice(0, slash)),
    title: relativePath.slice(slash + 1),
  };
}

function versionOf(node: ResolvedNode): FileVersion {
  return { path: node.relativePath, size: node.stat.size, mtimeNs: node.stat.mtimeNs, ino: node.stat.ino, ctimeNs: node.stat.ctimeNs };
}

/** A small file's bytes, and the digests (hex, by algorithm) computed where it was read. */
interface SmallFile {
  bytes: Buffer;
  hashes: Record<string, string>;
}

/**
 * The whole of a small file, opened without following a symlink, at the start of an
 * ArrayBuffer of its own (never Node's shared pool), so a writer may move it to another
 * thread (WholeFile.movable). Read and hashed with `algorithms` on a file worker thread
 * (fast path 'worker-reads'), or else read here and not hashed.
 */
function readSmallFile(absolutePath: string, expectedSize: number, algorithms: readonly string[]): Promise<SmallFile> {
  return readOnWorkerOrHere(
    (workers) => workers.readFile(absolutePath, expectedSize, algorithms),
    async () => ({ bytes: await readSmallFileHere(absolutePath, expectedSize), hashes: {} }),
  );
}

/** On this thread, as the compute threads' `read` (compute/file-work.ts) reads synchronously (core/whole-file-buffer.ts). */
async function readSmallFileHere(absolutePath: string, expectedSize: number): Promise<Buffer> {
  const handle = await open(absolutePath, constants.O_RDONLY | NOFOLLOW);
  try {
    let buffer = wholeFileBuffer(expectedSize);
    let filled = 0;
    for (;;) {
      buffer = withRoom(buffer, filled);
      const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled);
      filled += bytesRead;
      if (readToEnd(bytesRead, filled, buffer)) break;
    }
    return buffer.subarray(0, filled);
  } finally {
    await handle.close();
  }
}

/** Digests of bytes already in memory, in one pass. */
function digestsOf(bytes: Buffer, algorithms: readonly string[]): Record<string, string> {
  const hash = new MultiHash(algorithms);
  hash.update(bytes);
  return hash.digest();
}

/** A stream of bytes already in memory, in one chunk. */
function readableOf(bytes: Buffer): Readable {
  let sent = false;
  return new Readable({
    read() {
      if (sent) return;
      sent = true;
      if (bytes.length > 0) this.push(bytes);
      this.push(null);
    },
  });
}

async function openNoFollow(absolutePath: string, start = 0): Promise<Readable> {
  const handle = await open(absolutePath, constants.O_RDONLY | NOFOLLOW);
  if (fastPathOn('reused-read-buffers')) return lendingReadStream(handle, { start });
  return handle.createReadStream({ highWaterMark: READ_CHUNK, autoClose: true, start });
}
