import { createHash, randomBytes, type Hash } from 'node:crypto';
import { badRequest, CancelledError, conflict, FerryError, notFound, throwIfAborted } from '../../errors.js';
import type { FileError } from '../../../../shared/api.js';
import { fileOperations, fullActions, type CopyFromOptions, type DeleteOutcome, type MoveOutcome, type MoveTo, type Entry, type ListScope, type ReadResult, type ResourceInfo, type ResourceNode, type SearchPage, type SearchQuery, type Target, type TargetContext, type TargetInfo, type WriteOptions, type WriteOutcome } from '../../target.js';
import { pageOfNameMatches } from '../../search.js';
import { isComputableHash } from '../../hashing.js';
import { formatDate } from '../../time.js';
import { rcFailure, type RcClient, type RcItem } from './rc-client.js';
import { serverSideCopy } from './server-copy.js';
import { removedOnFailure, type NewRecord } from '../../remote/new-record.js';
import { judgedEntries } from '../../plan/write-plan.js';

// One rclone remote (an S3 bucket, an SFTP login, a Google Drive ...) as a Ferry target,
// every action through rclone's remote control (rc-client.ts). The remote's own secrets stay
// in rclone's config; Ferry's access key guards the target like the local ones.
//
// Requests (rclone.org/rc/ and rclone's fs/operations/rc.go): a listing is one
// `operations/list` per folder (recursive for the flat collection); detail is
// `operations/stat` with `showHash`; bytes stream from rcd's `--rc-serve`; a file is written
// with `operations/uploadfile` under a temporary name, checked with `operations/stat` against
// the digest Ferry computed while sending it, then renamed into place with
// `operations/movefile` (a replace is then never half-done).

/** The hash names of rclone's that mean the same as everywhere else (hex of the bytes). */
const STANDARD_HASHES = ['md5', 'sha1', 'sha256', 'sha512', 'crc32'] as const;
/** Ferry's temporary names: a prefix no listing shows, no extension any server reserves (not `.part`). */
const TEMP_PREFIX = '.ferry-upload-';
/** nodes per batch handed to the HTTP listing */
const LIST_BATCH = 1000;

export interface RemoteDescription {
  /** the rclone remote's name, as in its config ("hpc") */
  remote: string;
  /** rclone's backend type ("sftp", "s3", "drive", "local" ...) */
  type: string;
  /** rclone's `operations/fsinfo` answer for "<remote>:" */
  hashes: string[];
  /** hashing takes reading the whole object (local, sftp): not asked for in bulk listings */
  slowHash: boolean;
  /**
   * rclone's `CanHaveEmptyDirectories` feature: false for bucket stores (S3, B2 ...), where a
   * folder exists only while something is in it, so a new empty folder could not be made.
   */
  emptyFolders?: boolean;
  /** the remote's root as rclone states it in its messages (may be a path of this machine) */
  root: string | null;
  /** who runs rclone: "this computer" or the remote engine's host */
  engine: string;
}

export class RcloneTarget implements Target {
  readonly info: TargetInfo;
  private readonly fs: string;
  /** the hashes shown in listings and detail, in rclone's names */
  private readonly hashes: string[];

  constructor(
    name: string,
    private readonly client: RcClient,
    private readonly remote: RemoteDescription,
  ) {
    this.fs = `${remote.remote}:`;
    this.hashes = STANDARD_HASHES.filter((hash) => remote.hashes.includes(hash));
    this.info = {
      name,
      readable_name: `${remote.remote} (rclone ${remote.type}${remote.engine === 'this computer' ? '' : `, on ${remote.engine}`})`,
      supported_actions: fullActions(),
      supported_hash_algorithms: [...this.hashes],
      credential: 'access-key',
      plainIds: true,
      supported_operations: { ...fileOperations(), create_folder: remote.emptyFolders === true },
    };
  }

  async *list(ctx: TargetContext, scope?: ListScope): AsyncIterable<ResourceNode> {
    for await (const batch of this.listBatches(ctx, scope)) yield* batch;
  }

  /**
   * rclone answers a listing as one JSON array (`operations/list` has no paging): Ferry parses
   * it once and hands it on LIST_BATCH nodes at a time, made as they are sent, so the whole
   * listing is never held a second time as nodes (or as the HTTP answer's JSON).
   */
  async *listBatches(ctx: TargetContext, scope?: ListScope): AsyncIterable<readonly ResourceNode[]> {
    const folder = scope === undefined || scope.container === null || scope.container === undefined ? '' : this.folderPathOf(scope.container);
    if (folder !== '') await this.requireFolder(folder, ctx);
    const opt = scope === undefined ? { recurse: true } : {};
    const answer = await this.rc<{ list: RcItem[] }>('operations/list', { fs: this.fs, remote: folder, opt }, `list '${folder || '/'}'`, ctx.signal);
    const items = answer.list;
    for (let start = 0; start < items.length; start += LIST_BATCH) {
      throwIfAborted(ctx.signal);
      const batch: ResourceNode[] = [];
      for (let index = start; index < Math.min(items.length, start + LIST_BATCH); index++) {
        const item = items[index]!;
        // rclone lists paths relative to `fs`; below a folder they start with it
        if (folder !== '' && !item.Path.startsWith(`${folder}/`)) item.Path = joinPath(folder, item.Path);
        if (!isTemporary(item.Path)) batch.push(this.node(item));
      }
      yield batch;
    }
  }

  /** Not an index: a name match over one recursive operations/list, looked at up to the walk limit (core/search.ts). */
  search(ctx: TargetContext, query: SearchQuery): Promise<SearchPage> {
    return pageOfNameMatches(this.list(ctx), query);
  }

  async detail(ctx: TargetContext, id: string): Promise<ResourceInfo> {
    const remotePath = pathOf(id);
    const item = await this.stat(remotePath, ctx, this.hashes);
    if (!item) throw notFound(`Nothing is at '${remotePath}' on the rclone remote '${this.remote.remote}' any more; refresh the listing.`);
    const node = this.node(item);
    return {
      ...node,
      date_created: null,
      date_modified: modTime(item),
      hashes: item.IsDir ? {} : this.knownHashes(item),
      extra: {
        materialized_path: `/${item.Path}${item.IsDir ? '/' : ''}`,
        size: item.IsDir ? null : item.Size,
        mime_type: item.MimeType ?? null,
        rclone_remote: this.remote.remote,
        rclone_type: this.remote.type,
        engine: this.remote.engine,
      },
    };
  }

  async read(ctx: TargetContext, id: string): Promise<ReadResult> {
    const rootPath = pathOf(id);
    const item = await this.stat(rootPath, ctx, this.remote.slowHash ? [] : this.hashes);
    if (!item) throw notFound(`Nothing is at '${rootPath}' on the rclone remote '${this.remote.remote}' any more; refresh the listing.`);
    const title = item.Name;
    const root = this.node(item);
    const parentLength = rootPath.length - title.length;
    const entries = async function* (self: RcloneTarget): AsyncGenerator<Entry> {
      yield self.entryOf(item!, title, ctx);
      if (!item!.IsDir) return;
      // one recursive listing; slow hashes (read the whole object) are left to the reader
      const below = await self.listFolder(rootPath, ctx, { recurse: true, hashes: !self.remote.slowHash });
      below.sort((a, b) => (a.Path < b.Path ? -1 : a.Path > b.Path ? 1 : 0));
      for (const child of below) {
        throwIfAborted(ctx.signal);
        yield self.entryOf(child, child.Path.slice(parentLength), ctx);
      }
    };
    return { title, root, entries: entries(this) };
  }

  async write(ctx: TargetContext, containerId: string | null, source: AsyncIterable<Entry>, options: WriteOptions): Promise<WriteOutcome> {
    const entries = await judgedEntries(this, containerId, source, options);
    const base = containerId === null ? '' : this.folderPathOf(containerId);
    if (base !== '') await this.requireFolder(base, ctx);
    const run = async (made: (record: NewRecord) => void) => {
      const writer = new RcloneWrite(this, base, containerId === null, options, (top) =>
        made({
          label: `the new folder '${top}' on the rclone remote '${this.remote.remote}'`,
          howToRemove: `delete the folder '${top}' there (rclone purge ${this.remote.remote}:${top})`,
          // its own deadline: the job's signal may have fired (a cancel)
          remove: async () => {
            await this.rc('operations/purge', { fs: this.fs, remote: top }, `delete the folder '${top}'`, AbortSignal.timeout(30_000));
          },
        }),
      );
      for await (const entry of entries) {
        throwIfAborted(options.signal);
        await writer.take(entry);
      }
      return writer.outcome();
    };
    // a new top folder that a failed or cancelled upload made is deleted again (remote/new-record.ts)
    return containerId === null ? removedOnFailure(run) : run(() => {});
  }

  /** `operations/deletefile` for a file, `operations/purge` for a folder and everything below it (rclone.org/rc/). */
  async deleteResource(ctx: TargetContext, id: string): Promise<DeleteOutcome> {
    const remotePath = pathOf(id);
    const item = await this.stat(remotePath, ctx, []);
    if (!item) throw notFound(`Nothing is at '${remotePath}' on the rclone remote '${this.remote.remote}' any more; refresh the listing.`);
    if (item.IsDir) await this.rc('operations/purge', { fs: this.fs, remote: remotePath }, `delete the folder '${remotePath}'`, ctx.signal);
    else await this.rc('operations/deletefile', { fs: this.fs, remote: remotePath }, `delete '${remotePath}'`, ctx.signal);
    return { node: this.node(item), into: { kind: 'deleted' } };
  }

  /**
   * A file: `operations/movefile` (server-side where the backend can). A folder:
   * `sync/move` of the folder to its new path with `createEmptySrcDirs` and
   * `deleteEmptySrcDirs`, which rclone does as one server-side DirMove where the backend has
   * it. Neither refuses a taken name (movefile replaces, sync/move merges), so the
   * destination is looked up first: a taken name is a 409, and a folder is never merged into
   * or replaced, even with `overwrite`. The gap between the look and the move is said here.
   */
  async moveResource(ctx: TargetContext, id: string, to: MoveTo): Promise<MoveOutcome> {
    const source = pathOf(id);
    const item = await this.stat(source, ctx, []);
    if (!item) throw notFound(`Nothing is at '${source}' on the rclone remote '${this.remote.remote}' any more; refresh the listing.`);
    const before = this.node(item);
    let parent = source.includes('/') ? source.slice(0, source.lastIndexOf('/')) : '';
    if (to.container === null) parent = '';
    else if (to.container !== undefined) {
      parent = pathOf(to.container);
      await this.requireFolder(parent, ctx);
    }
    const destination = joinPath(parent, to.title ?? item.Name);
    if (destination === source) return { before, after: before, replaced: null };
    if (item.IsDir && destination.startsWith(`${source}/`)) throw badRequest(`'${source}' cannot be moved into itself.`);
    const existing = await this.stat(destination, ctx, []);
    if (existing && (!to.overwrite || existing.IsDir || item.IsDir)) {
      const why = to.overwrite ? ' rclone would merge folders rather than replace them; delete or rename it first.' : ' Choose another name, or send "overwrite": true to replace a file.';
      throw conflict(`'${destination}' already exists on the rclone remote '${this.remote.remote}'.${why}`);
    }
    if (item.IsDir) {
      await this.rc('sync/move', { srcFs: `${this.fs}${source}`, dstFs: `${this.fs}${destination}`, createEmptySrcDirs: true, deleteEmptySrcDirs: true }, `move the folder '${source}'`, ctx.signal);
    } else {
      await this.rc('operations/movefile', { srcFs: this.fs, srcRemote: source, dstFs: this.fs, dstRemote: destination }, `move '${source}'`, ctx.signal);
    }
    const after = this.node({ ...item, Path: destination, Name: destination.slice(destination.lastIndexOf('/') + 1) });
    return { before, after, replaced: existing ? { title: existing.Name, into: { kind: 'deleted' } } : null };
  }

  /** `operations/mkdir`, which succeeds on an existing folder: the name is looked up first. */
  async createFolder(ctx: TargetContext, containerId: string | null, title: string): Promise<ResourceNode> {
    const parent = containerId === null ? '' : pathOf(containerId);
    if (parent !== '') await this.requireFolder(parent, ctx);
    const folder = joinPath(parent, title);
    if (await this.stat(folder, ctx, [])) throw conflict(`'${folder}' already exists on the rclone remote '${this.remote.remote}'; choose another name.`);
    await this.mkdir(folder, ctx.signal);
    return this.node({ Path: folder, Name: title, Size: -1, ModTime: '', IsDir: true });
  }

  /** Ferry's temporary upload names are hidden from listings: a file given one would vanish. */
  checkName(name: string): string | null {
    return name.startsWith(TEMP_PREFIX) ? `names starting '${TEMP_PREFIX}' are Ferry's temporary upload names, which listings hide` : null;
  }

  /**
   * A copy between two remotes of the same rclone engine is rclone's own job (server-copy.ts):
   * the bytes go from one remote to the other inside rclone, never through Ferry.
   */
  copyFrom(ctx: TargetContext, source: Target, sourceId: string, containerId: string | null, options: CopyFromOptions): Promise<WriteOutcome> | null {
    if (!(source instanceof RcloneTarget) || source.client.endpoint.url !== this.client.endpoint.url) return null;
    return serverSideCopy(source, this, pathOf(sourceId), containerId === null ? null : this.folderPathOf(containerId), ctx, options);
  }

  // ---- used by RcloneWrite and server-copy.ts ----

  /** "<remote>:" as rclone's fs parameters take it, followed by a path below the root */
  fsOf(remotePath: string): string {
    return `${this.fs}${remotePath}`;
  }

  /** the remote's hashes of rclone's standard names, and whether reading one costs the whole object */
  get hashNames(): { names: readonly string[]; slow: boolean } {
    return { names: this.hashes, slow: this.remote.slowHash };
  }

  /** Everything below `folder` (Path relative to `folder`); empty when the folder is not there. */
  async tree(folder: string, signal: AbortSignal, hashTypes: readonly string[]): Promise<RcItem[]> {
    const opt: Record<string, unknown> = { recurse: true };
    if (hashTypes.length > 0) Object.assign(opt, { showHash: true, hashTypes });
    try {
      const answer = await this.rc<{ list: RcItem[] }>('operations/list', { fs: this.fs, remote: folder, opt }, `list '${folder || '/'}'`, signal);
      // rclone's paths are relative to `fs`: below a folder they start with it
      const prefix = folder === '' ? '' : `${folder}/`;
      return answer.list.map((item) => ({ ...item, Path: item.Path.startsWith(prefix) ? item.Path.slice(prefix.length) : item.Path }));
    } catch (error) {
      if (error instanceof FerryError && error.status === 404) return [];
      throw error;
    }
  }

  /** for scrubPaths: the remote's name and its root as rclone prints it */
  get rootShown(): { name: string; root: string | null }[] {
    return [{ name: this.remote.remote, root: this.remote.root }];
  }

  /** `wanted`, or `wanted-2` ... when that name is taken in `folder` (a new top-level resource). */
  async distinctName(folder: string, wanted: string, signal: AbortSignal): Promise<string> {
    const taken = await this.folderItems(folder, signal, false);
    if (!taken.has(wanted)) return wanted;
    for (let n = 2; n <= 1000; n++) if (!taken.has(`${wanted}-${n}`)) return `${wanted}-${n}`;
    throw badRequest(`Every name from '${wanted}' to '${wanted}-1000' is taken on the rclone remote '${this.remoteName}'; rename the folder and upload again.`);
  }

  async requireFolder(folder: string, ctx: { signal: AbortSignal }): Promise<void> {
    const item = await this.stat(folder, ctx, []);
    if (!item) throw notFound(`The folder '${folder}' is not on the rclone remote '${this.remote.remote}' any more; refresh the listing.`);
    if (!item.IsDir) throw badRequest(`'${folder}' is a file on the rclone remote '${this.remote.remote}'; files can only be written into a folder.`);
  }

  get rcClient(): RcClient {
    return this.client;
  }

  /** The folder's items by name (an empty map for a folder that does not exist yet). */
  async folderItems(folder: string, signal: AbortSignal, withHashes: boolean): Promise<Map<string, RcItem>> {
    try {
      const items = await this.listFolder(folder, { signal }, { hashes: withHashes, keepTemporaries: true });
      return new Map(items.map((item) => [item.Name, item]));
    } catch (error) {
      // a folder this write is about to make
      if (error instanceof FerryError && error.status === 404) return new Map();
      throw error;
    }
  }

  async mkdir(remotePath: string, signal: AbortSignal): Promise<void> {
    await this.rc('operations/mkdir', { fs: this.fs, remote: remotePath }, `make the folder '${remotePath}'`, signal);
  }

  async upload(folder: string, name: string, bytes: AsyncIterable<Uint8Array>, signal: AbortSignal): Promise<void> {
    try {
      await this.client.uploadFile(this.fs, folder, name, bytes, signal);
    } catch (error) {
      if (signal.aborted) throw new CancelledError();
      throw rcFailure(error, `write '${joinPath(folder, name)}'`, this.remote.remote, this.rootShown);
    }
  }

  async move(from: string, to: string, signal: AbortSignal): Promise<void> {
    await this.rc('operations/movefile', { srcFs: this.fs, srcRemote: from, dstFs: this.fs, dstRemote: to }, `put '${to}' in place`, signal);
  }

  /**
   * Deletes a temporary of Ferry's, on its own deadline (never the job's signal). After a
   * failed upload (`afterFailure`) the request may have failed here while rclone's handler is
   * still finishing and creates the file after the delete came (seen with the local backend,
   * about one run in four), so the delete is repeated until two stats 300 ms apart find
   * nothing, for a few seconds at most.
   */
  async remove(remotePath: string, afterFailure = false): Promise<void> {
    const deadline = AbortSignal.timeout(30_000);
    if (!afterFailure) {
      await this.rc('operations/deletefile', { fs: this.fs, remote: remotePath }, `remove '${remotePath}'`, deadline).catch(() => undefined);
      return;
    }
    // gone twice in a row, 300 ms apart: a handler still finishing has had time to show its file
    for (let attempt = 0, gone = 0; attempt < 15 && gone < 2; attempt++) {
      await this.rc('operations/deletefile', { fs: this.fs, remote: remotePath }, `remove '${remotePath}'`, deadline).catch(() => undefined);
      const left = await this.stat(remotePath, { signal: deadline }, []).catch(() => null);
      gone = left ? 0 : gone + 1;
      if (gone < 2) await new Promise((resolve) => setTimeout(resolve, 300));
    }
  }

  async stat(remotePath: string, ctx: { signal: AbortSignal }, hashTypes: readonly string[]): Promise<RcItem | null> {
    const opt = hashTypes.length > 0 ? { showHash: true, hashTypes } : {};
    const answer = await this.rc<{ item: RcItem | null }>('operations/stat', { fs: this.fs, remote: remotePath, opt }, `look at '${remotePath}'`, ctx.signal);
    return answer.item;
  }

  /** md5 of an object's bytes, read through rclone (for a remote that keeps no hash). */
  async md5Of(remotePath: string, signal: AbortSignal): Promise<string> {
    const digest = createHash('md5');
    try {
      for await (const chunk of await this.client.openObject(this.fs, remotePath, signal)) digest.update(chunk as Buffer);
    } catch (error) {
      if (signal.aborted) throw new CancelledError();
      throw rcFailure(error, `read '${remotePath}'`, this.remote.remote, this.rootShown);
    }
    return digest.digest('hex');
  }

  /** The hashes both the remote and Ferry can compute, in rclone's names. */
  verifiableHashes(): string[] {
    return this.hashes.filter((hash) => isComputableHash(hash));
  }

  get remoteName(): string {
    return this.remote.remote;
  }

  // ---- private ----

  private async listFolder(folder: string, ctx: { signal: AbortSignal }, options: { recurse?: boolean; hashes?: boolean; keepTemporaries?: boolean }): Promise<RcItem[]> {
    const opt: Record<string, unknown> = {};
    if (options.recurse) opt.recurse = true;
    if (options.hashes && this.hashes.length > 0) Object.assign(opt, { showHash: true, hashTypes: this.hashes });
    const answer = await this.rc<{ list: RcItem[] }>('operations/list', { fs: this.fs, remote: folder, opt }, `list '${folder || '/'}'`, ctx.signal);
    // rclone lists paths relative to `fs`; below a folder they start with it
    const items = answer.list.map((item) => ({ ...item, Path: folder === '' || item.Path.startsWith(`${folder}/`) ? item.Path : joinPath(folder, item.Path) }));
    return options.keepTemporaries ? items : items.filter((item) => !isTemporary(item.Path));
  }

  private folderPathOf(id: string): string {
    return pathOf(id);
  }

  private node(item: RcItem): ResourceNode {
    const parent = item.Path.includes('/') ? item.Path.slice(0, item.Path.lastIndexOf('/')) : '';
    return {
      kind: item.IsDir ? 'container' : 'item',
      kind_name: item.IsDir ? 'folder' : 'file',
      id: idOf(item.Path),
      container: parent === '' ? null : idOf(parent),
      title: item.Name,
    };
  }

  private knownHashes(item: RcItem): Record<string, string> {
    const hashes: Record<string, string> = {};
    for (const hash of this.hashes) {
      const value = item.Hashes?.[hash];
      // rclone gives "" for a hash it does not know for this object (an S3 multipart upload's md5)
      if (value && /^[0-9a-f]+$/i.test(value)) hashes[hash] = value.toLowerCase();
    }
    return hashes;
  }

  private entryOf(item: RcItem, entryPath: string, ctx: TargetContext): Entry {
    const remotePath = item.Path;
    return {
      path: entryPath,
      kind: item.IsDir ? 'folder' : 'file',
      size: item.IsDir || item.Size < 0 ? null : item.Size,
      mtime: item.ModTime ? new Date(item.ModTime) : null,
      hashes: item.IsDir ? {} : this.knownHashes(item),
      open: async () => {
        try {
          return await this.client.openObject(this.fs, remotePath, ctx.signal);
        } catch (error) {
          throw rcFailure(error, `read '${remotePath}'`, this.remote.remote, this.rootShown);
        }
      },
    };
  }

  async rc<T>(command: string, params: Record<string, unknown>, doing: string, signal: AbortSignal): Promise<T> {
    try {
      return await this.client.call<T>(command, params, signal);
    } catch (error) {
      if (signal.aborted) throw new CancelledError();
      throw rcFailure(error, doing, this.remote.remote, this.rootShown);
    }
  }
}

/**
 * One write(): folders made as they come, each file sent to a temporary name in its folder,
 * checked against the digest computed while sending, then renamed over its final name. A
 * folder is listed once, when its first file arrives, to know what is there already.
 */
class RcloneWrite {
  private readonly created: string[] = [];
  private readonly updated: string[] = [];
  private readonly ignored: string[] = [];
  private readonly fileErrors: FileError[] = [];
  private readonly folders = new Map<string, Map<string, RcItem>>();
  private top: { claimed: string } | null = null;

  constructor(
    private readonly target: RcloneTarget,
    private readonly base: string,
    private readonly topLevel: boolean,
    private readonly options: WriteOptions,
    /** told of the top folder a top-level write made, as soon as it exists */
    private readonly onTopMade: (remotePath: string) => void = () => {},
  ) {}

  async take(entry: Entry): Promise<void> {
    const relative = await this.placed(entry);
    const remotePath = joinPath(this.base, relative);
    const folder = remotePath.includes('/') ? remotePath.slice(0, remotePath.lastIndexOf('/')) : '';
    const name = remotePath.slice(folder.length === 0 ? 0 : folder.length + 1);
    const existing = (await this.itemsOf(folder)).get(name);
    if (entry.kind === 'folder') {
      if (existing && !existing.IsDir) return void this.fileErrors.push({ path: entry.path, error: `A file named '${name}' is already there, so the folder could not be made.` });
      if (!existing) {
        await this.target.mkdir(remotePath, this.options.signal);
        if (this.top && relative === this.top.claimed) {
          this.onTopMade(remotePath);
          this.options.onNewResource?.({ id: idOf(remotePath), title: this.top.claimed });
        }
        this.created.push(relative);
        (await this.itemsOf(folder)).set(name, { Path: remotePath, Name: name, Size: -1, ModTime: '', IsDir: true });
        this.folders.set(remotePath, new Map());
      }
      return;
    }
    if (existing?.IsDir) return void this.fileErrors.push({ path: entry.path, error: `A folder named '${name}' is already there, so the file was not written.` });
    if (existing && (this.options.duplicateAction === 'ignore' || sameBytesKnown(entry, existing))) return this.confirmed(entry, relative, 'ignored');
    await this.send(entry, folder, name, relative, existing);
  }

  outcome(): WriteOutcome {
    return {
      created: this.created,
      updated: this.updated,
      ignored: this.ignored,
      fileErrors: this.fileErrors,
      ...(this.top ? { newResource: { id: idOf(joinPath(this.base, this.top.claimed)), title: this.top.claimed } } : {}),
    };
  }

  /**
   * A file the remote holds as the source has it (written and checked, or found there): in
   * its list, and told to the job, whose resume journal then never sends it again.
   */
  private confirmed(entry: Entry, relative: string, list: 'created' | 'updated' | 'ignored'): void {
    this[list].push(relative);
    this.options.onFileWritten?.(entry.path);
  }

  /** The entry's path in the destination: under a top-level write, with the top folder's claimed name. */
  private async placed(entry: Entry): Promise<string> {
    if (!this.topLevel) return entry.path;
    // the plan holds one top folder, and begins with it
    const [first, ...rest] = entry.path.split('/');
    this.top ??= { claimed: await this.distinctName(first!) };
    return [this.top.claimed, ...rest].join('/');
  }

  private async distinctName(wanted: string): Promise<string> {
    const taken = await this.itemsOf(this.base);
    if (!taken.has(wanted)) return wanted;
    return this.target.distinctName(this.base, wanted, this.options.signal);
  }

  private async itemsOf(folder: string): Promise<Map<string, RcItem>> {
    let items = this.folders.get(folder);
    if (!items) {
      items = await this.target.folderItems(folder, this.options.signal, this.options.duplicateAction === 'update');
      this.folders.set(folder, items);
    }
    return items;
  }

  private async send(entry: Entry, folder: string, name: string, relative: string, existing: RcItem | undefined): Promise<void> {
    const check = this.target.verifiableHashes();
    // `update` over a file the remote gives no hash for: its bytes are read and hashed, so an
    // identical file is reported ignored, not replaced (sizes that differ settle it without)
    const existingMd5 =
      existing && this.options.duplicateAction === 'update' && !check.some((hash) => existing.Hashes?.[hash]) && (entry.size === null || entry.size === existing.Size)
        ? await this.target.md5Of(joinPath(folder, name), this.options.signal)
        : null;
    const computing = existingMd5 && !check.includes('md5') ? [...check, 'md5'] : check;
    const digests = new Map<string, Hash>(computing.map((hash) => [hash, createHash(hash)]));
    let size = 0;
    const source = await entry.open();
    async function* counted(): AsyncGenerator<Uint8Array> {
      for await (const chunk of source as AsyncIterable<Buffer>) {
        size += chunk.length;
        for (const digest of digests.values()) digest.update(chunk);
        yield chunk;
      }
    }
    const temporary = `${TEMP_PREFIX}${randomBytes(8).toString('hex')}`;
    const temporaryPath = joinPath(folder, temporary);
    try {
      await this.target.upload(folder, temporary, counted(), this.options.signal);
      const computed = Object.fromEntries([...digests].map(([hash, digest]) => [hash, digest.digest('hex')]));
      if (entry.size !== null && entry.size !== size) {
        throw new Mismatch(`${size} bytes arrived from the source, which listed ${entry.size}; it changed or was cut short while being read.`);
      }
      const stored = await this.target.stat(temporaryPath, this.options, check);
      if (!stored) throw new Mismatch('the remote does not show the file Ferry just wrote.');
      if (stored.Size >= 0 && stored.Size !== size) throw new Mismatch(`the remote stored ${stored.Size} bytes of the ${size} sent.`);
      for (const [hash, value] of Object.entries(computed)) {
        const theirs = stored.Hashes?.[hash];
        if (theirs && theirs.toLowerCase() !== value) throw new Mismatch(`the remote's ${hash} ${theirs} differs from the ${value} of the bytes sent.`);
      }
      if (existing && this.options.duplicateAction === 'update' && (existingMd5 ? existingMd5 === computed.md5 : sameDigests(computed, existing))) {
        await this.target.remove(temporaryPath);
        return this.confirmed(entry, relative, 'ignored');
      }
      await this.target.move(temporaryPath, joinPath(folder, name), this.options.signal);
      this.confirmed(entry, relative, existing ? 'updated' : 'created');
    } catch (error) {
      await this.target.remove(temporaryPath, true);
      if (error instanceof Mismatch) return void this.fileErrors.push({ path: entry.path, error: `Not written: ${error.message}` });
      throw error;
    }
  }
}

class Mismatch extends Error {}

/** a path at or below one of Ferry's temporaries (never listed) */
function isTemporary(remotePath: string): boolean {
  return remotePath.includes(TEMP_PREFIX) && remotePath.split('/').some((segment) => segment.startsWith(TEMP_PREFIX));
}

/** True when the source's own hash and the remote's agree: the bytes are there already. */
function sameBytesKnown(entry: Entry, existing: RcItem): boolean {
  if (entry.size !== null && existing.Size >= 0 && entry.size !== existing.Size) return false;
  return sameDigests(entry.hashes, existing);
}

function sameDigests(ours: Record<string, string>, existing: RcItem): boolean {
  for (const [hash, value] of Object.entries(ours)) {
    const theirs = existing.Hashes?.[hash];
    if (theirs) return theirs.toLowerCase() === value.toLowerCase();
  }
  return false;
}

function modTime(item: RcItem): string | null {
  if (!item.ModTime) return null;
  const date = new Date(item.ModTime);
  return Number.isNaN(date.getTime()) ? null : formatDate(date);
}

export function joinPath(folder: string, name: string): string {
  return folder === '' ? name : `${folder}/${name}`;
}

/** Ids are the path below the remote's root, as base64url of its UTF-8 (one path segment, no dots). */
export function idOf(remotePath: string): string {
  return Buffer.from(remotePath, 'utf8').toString('base64url');
}

export function pathOf(id: string): string {
  if (!/^[A-Za-z0-9_-]+$/.test(id)) throw notFound('That id is not one this rclone remote gave out; refresh the listing.');
  const remotePath = Buffer.from(id, 'base64url').toString('utf8');
  if (remotePath === '' || remotePath.startsWith('/') || remotePath.split('/').some((segment) => segment === '' || segment === '.' || segment === '..')) {
    throw notFound('That id is not one this rclone remote gave out; refresh the listing.');
  }
  return remotePath;
}
