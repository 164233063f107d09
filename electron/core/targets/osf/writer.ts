import { createReadStream } from 'node:fs';
import { mkdtemp, open, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { HashingPassThrough } from '../../hashing.js';
import { badRequest, CancelledError, FerryError, isFerryError, throwIfAborted } from '../../errors.js';
import type { Entry, StoredRecord, TargetContext, WriteOptions, WriteOutcome } from '../../target.js';
import { OrderedPipeline, pipelineLimits } from '../../jobs/ordered-pipeline.js';
import { reportedHashes, unescapeHtml, withoutQuery, type JsonApiResource } from './client.js';
import { removedOnFailure, type NewRecord } from '../../remote/new-record.js';
import { detachedSignal } from '../../remote/retry-notice.js';
import { nodeId, parseOsfId } from './ids.js';
import type { OsfTarget } from './osf-target.js';
import { judgedEntries } from '../../plan/write-plan.js';
import { osfNodeFields } from '../../metadata/osf.js';

/**
 * Uploads entries into an OSF container. OSF cannot unzip, so each folder is one
 * WaterButler `PUT <folder>/?kind=folder&name=` and each file one streamed
 * `PUT <folder>/?kind=file&name=` with Content-Length (osf.md §2.3, §3). An existing file
 * (found by listing its folder, exact name) is left alone (`ignore`) or gets a new version
 * `PUT <file>?kind=file` when its md5 differs (`update`). Per-file refusals (409, 507, ...)
 * are reported in fileErrors; 401 and 403 end the job.
 *
 * Every entry is a task on the write pipeline, several at a time (OsfTarget.info.concurrency),
 * results reported in entry order. Each folder is found or made once (`level`), by the first
 * task that needs it; a file's task waits for its folder, so no PUT goes into a folder that
 * does not exist yet, a new folder does not hold up the files of the folders before it, and
 * folder requests count within the requests in flight. Each folder level met for the first
 * time is a task of its own, in entry order, whose result says it was made.
 */
interface Existing {
  name: string;
  kind: 'file' | 'folder';
  md5: string | null;
  /** WaterButler entity URL, no query */
  wbUrl: string;
  /** v2 listing of a folder's children, when the API gave one */
  listHref: string | null;
}

/** One entry's result: a folder made, a file OSF confirmed (with its record), or a per-file failure. */
type EntryResult =
  | { path: string; list: 'created' | 'updated' | 'ignored'; file: boolean; stored?: StoredRecord }
  | { path: string; error: string }
  /** a folder that was there already: nothing to report */
  | { path: string; found: true };

interface FolderState {
  wbUrl: string;
  listHref: string | null;
  children: { files: Map<string, Existing>; folders: Map<string, Existing> } | null;
  /** the listing under way, so tasks at once list a folder once */
  listing?: Promise<NonNullable<FolderState['children']>> | null;
}

/** A folder below the destination, and whether this write made it. */
interface Level {
  state: FolderState;
  made: boolean;
}


/** The folder levels of an entry's path below the destination (`segments`): all of them for a folder, all but its name for a file. */
function foldersOf(entry: Entry, segments: string[]): string[] {
  return entry.kind === 'folder' ? segments : segments.slice(0, -1);
}

export class OsfWriter {
  private readonly outcome: WriteOutcome = { created: [], updated: [], ignored: [], fileErrors: [] };
  /** each folder found or made (or being so), by its path below the destination ('' itself) */
  private readonly levels = new Map<string, Promise<Level>>();
  /** the folder levels that have their task on the pipeline */
  private readonly scheduled = new Set<string>();
  /** the folder levels worked on ahead of their entries (prepare) */
  private readonly prepared = new Set<string>();
  private readonly pipeline: OrderedPipeline<EntryResult>;
  /** made once, by the first upload that needs it (several may run at once) */
  private spoolDir: Promise<string> | null = null;
  /** names the spooled copies apart */
  private spools = 0;

  constructor(
    private readonly target: OsfTarget,
    private readonly ctx: TargetContext,
    private readonly options: WriteOptions,
  ) {
    this.pipeline = new OrderedPipeline<EntryResult>(pipelineLimits(target.info.concurrency), (result) => this.reported(result), options.signal);
  }

  async run(containerId: string | null, source: AsyncIterable<Entry>): Promise<WriteOutcome> {
    const entries = await judgedEntries(this.target, containerId, source, this.options);
    try {
      if (containerId === null) await removedOnFailure((made) => this.throughPipeline(() => this.writeTopLevel(entries, made)), this.options.signal);
      else {
        await this.throughPipeline(async () => {
          this.levels.set('', Promise.resolve({ state: await this.destination(containerId), made: false }));
          for await (const entry of this.pipeline.withPreparation(entries, (ahead) => this.prepare(ahead, ahead.path))) {
            if (this.pipeline.stopped) break;
            await this.writeEntry(entry, entry.path, entry.path);
          }
        });
      }
      return this.outcome;
    } finally {
      if (this.spoolDir) await rm(await this.spoolDir, { recursive: true, force: true });
    }
  }

  /** `feed` hands the entries to the pipeline; then every upload has ended, or the first hard failure is thrown (never while a request is under way). */
  private async throughPipeline(feed: () => Promise<void>): Promise<void> {
    try {
      await feed();
    } finally {
      await this.pipeline.drain();
    }
    await this.pipeline.finish();
  }

  /** A result, in entry order: into the outcome, and a file told to the job (WriteOptions.onFileWritten). */
  private reported(result: EntryResult): void {
    if ('error' in result) return void this.outcome.fileErrors.push({ path: result.path, error: result.error });
    if ('found' in result) return;
    this.outcome[result.list].push(result.path);
    if (result.stored) (this.outcome.stored ??= new Map()).set(result.path, result.stored);
    if (result.file) this.options.onFileWritten?.(result.path);
  }

  /** The WaterButler folder and v2 listing a container id stands for. */
  private async destination(containerId: string): Promise<FolderState> {
    const ref = parseOsfId(containerId);
    if (ref.kind === 'node' || ref.kind === 'storage') {
      const provider = await this.target.provider(this.ctx, ref.node, ref.kind === 'node' ? 'osfstorage' : ref.provider);
      return this.providerFolder(provider.record, provider.filesHref);
    }
    const folder = await this.target.client.get(`files/${ref.fileId}/`, this.ctx.token, this.options.signal);
    if (folder.attributes.kind !== 'folder') {
      throw badRequest(`'${String(folder.attributes.name)}' is a file; OSF uploads go into a project, a component, a storage or a folder.`);
    }
    const upload = folder.links?.upload ?? folder.links?.move;
    if (!upload) throw badRequest(`OSF gave no upload link for the folder '${String(folder.attributes.name)}'.`);
    return { wbUrl: withoutQuery(upload), listHref: folder.relationships?.files?.links?.related?.href ?? null, children: null };
  }

  private providerFolder(record: JsonApiResource, filesHref: string): FolderState {
    const upload = record.links?.upload ?? record.links?.new_folder;
    if (!upload) throw new FerryError(403, 'forbidden', `OSF offers no upload link for the storage '${String(record.attributes.name)}'; it may be read-only.`);
    return { wbUrl: withoutQuery(upload), listHref: filesHref, children: null };
  }

  /**
   * A new private project titled by the entries' one top folder (the plan holds one, and
   * begins with its entry), then its content. The project is made first (OSF has no other
   * way), so `made` hears of it at once: a failure after that deletes it again (new-record.ts).
   */
  private async writeTopLevel(entries: AsyncIterable<Entry>, made: (record: NewRecord) => void): Promise<void> {
    let projectMade = false;
    const below = (entry: Entry) => entry.path.split('/').slice(1).join('/');
    for await (const entry of this.pipeline.withPreparation(entries, (ahead) => this.prepare(ahead, below(ahead)))) {
      if (this.pipeline.stopped) break;
      throwIfAborted(this.options.signal);
      const [top] = entry.path.split('/');
      if (!projectMade) {
        projectMade = true;
        // the source's description and keywords, where a transfer carries them; the rest is said (metadata/osf.ts)
        const described = osfNodeFields(this.options.metadata);
        if (described.notes.length > 0) this.outcome.notes = [...(this.outcome.notes ?? []), ...described.notes];
        const node = await this.target.client.createProject(top!, this.ctx.token, this.options.signal, described.fields);
        const title = unescapeHtml(String(node.attributes.title ?? top));
        this.outcome.newResource = { id: nodeId(node.id), title };
        this.options.onNewResource?.(this.outcome.newResource);
        made({
          label: `the new OSF project '${title}' (${node.id})`,
          howToRemove: `delete it in OSF at ${node.links?.html ?? `https://osf.io/${node.id}/`} (Settings, "Delete project")`,
          remove: () => this.target.client.deleteNode(node.id, this.ctx.token, detachedSignal(this.ctx.signal)),
        });
        // The upload host depends on the project's storage region: read it, don't build it.
        const provider = await this.target.provider(this.ctx, node.id, 'osfstorage');
        this.levels.set('', Promise.resolve({ state: this.providerFolder(provider.record, provider.filesHref), made: false }));
      }
      const relative = below(entry);
      if (relative === '') continue; // the top folder: the project itself
      await this.writeEntry(entry, relative, entry.path);
    }
  }

  /**
   * `relative`: where it goes below the destination; `reported`: the path in the outcome.
   * Each folder level met here for the first time gets its task (in entry order); a file's
   * upload starts on the pipeline (the same name twice never at once) and waits for its folder.
   */
  private async writeEntry(entry: Entry, relative: string, reported: string): Promise<void> {
    throwIfAborted(this.options.signal);
    const segments = relative.split('/');
    const prefix = reported.slice(0, reported.length - relative.length);
    const folders = foldersOf(entry, segments);
    for (let depth = 1; depth <= folders.length; depth++) {
      const key = folders.slice(0, depth).join('/');
      if (this.scheduled.has(key)) continue;
      this.scheduled.add(key);
      const shown = prefix + key;
      await this.pipeline.start(`${shown.toLowerCase()}/`, 0, async (): Promise<EntryResult> => {
        try {
          return (await this.level(key)).made ? { path: shown, list: 'created', file: false } : { path: shown, found: true };
        } catch (error) {
          return this.perFile(shown, error);
        }
      });
    }
    if (entry.kind === 'folder') return;
    await this.pipeline.startFile(entry, reported.toLowerCase(), async () => {
      try {
        const parent = (await this.level(folders.join('/'))).state;
        return await this.writeFile(entry, parent, segments.at(-1)!, reported);
      } catch (error) {
        return this.perFile(reported, error);
      }
    });
  }

  /**
   * Work ahead for an entry still to come (OrderedPipeline.withPreparation): its folder found
   * or made, and listed where it was there before, while the files before it are under way,
   * so its first file does not hold a place in the pipeline waiting for it. Only once the
   * destination is known (a new project is made at the first entry); a folder already under
   * way is left to that.
   */
  private async prepare(entry: Entry, relative: string): Promise<void> {
    if (relative === '' || !this.levels.has('')) return;
    const key = foldersOf(entry, relative.split('/')).join('/');
    if (key === '' || this.levels.has(key) || this.prepared.has(key)) return;
    this.prepared.add(key);
    const shown = entry.path.slice(0, entry.path.length - relative.length) + key;
    await this.pipeline.startAhead(`${shown.toLowerCase()}/`, async () => {
      const level = await this.level(key);
      if (!level.made) await this.children(level.state);
    });
  }

  /** 401/403 and cancellation end the job (thrown again); anything else OSF refuses is about this file. */
  private perFile(reported: string, error: unknown): EntryResult {
    if (error instanceof CancelledError || this.options.signal.aborted) throw error;
    if (!isFerryError(error) || error.status === 401 || error.status === 403) throw error;
    return { path: reported, error: error.message };
  }

  /** The folder at `key` below the destination: found in its parent's listing, or made; once a write (every task needing it waits for the same). */
  private level(key: string): Promise<Level> {
    let level = this.levels.get(key);
    if (!level) {
      level = this.findOrMake(key);
      this.levels.set(key, level);
    }
    return level;
  }

  private async findOrMake(key: string): Promise<Level> {
    const slash = key.lastIndexOf('/');
    const parent = (await this.level(slash < 0 ? '' : key.slice(0, slash))).state;
    const name = key.slice(slash + 1);
    let existing = (await this.children(parent)).folders.get(name);
    if (!existing) {
      const made = await this.makeFolder(parent, name);
      if (made) return { state: { wbUrl: made.wbUrl, listHref: null, children: { files: new Map(), folders: new Map() } }, made: true };
      // 409: someone made it meanwhile; look again.
      forgetListing(parent);
      existing = (await this.children(parent)).folders.get(name);
      if (!existing) throw new FerryError(409, 'conflict', `OSF refused to create the folder '${name}' and it cannot be found either.`);
    }
    return { state: { wbUrl: existing.wbUrl, listHref: existing.listHref, children: null }, made: false };
  }

  private async makeFolder(parent: FolderState, name: string): Promise<Existing | null> {
    const response = await this.target.client.fileRequest(`${parent.wbUrl}?kind=folder&name=${strictEncode(name)}`, {
      method: 'PUT',
      token: this.ctx.token,
      signal: this.options.signal,
      allow: [409],
    });
    if (response.status === 409) {
      await response.body?.cancel();
      return null;
    }
    return fromWaterbutler(((await response.json()) as { data: WaterbutlerEntity }).data);
  }

  /** The file `name` into `parent` (already listed): created, a new version, or left alone. */
  private async writeFile(entry: Entry, parent: FolderState, name: string, reported: string): Promise<EntryResult> {
    let existing = (await this.children(parent)).files.get(name);
    let spooled: Spooled | null = null;
    try {
      if (!existing) {
        if (entry.size === null) spooled = await this.spool(entry);
        const response = await this.upload(`${parent.wbUrl}?kind=file&name=${strictEncode(name)}`, entry, spooled, [409]);
        if (response.status !== 409) return { path: reported, list: 'created', file: true, stored: await storedRecord(response) };
        // The file appeared between our listing and the upload: treat it as existing.
        await response.body?.cancel();
        forgetListing(parent);
        existing = (await this.children(parent)).files.get(name);
        if (!existing) throw new FerryError(409, 'conflict', `OSF reported that '${name}' already exists, but it cannot be found in its folder.`);
      }
      if (this.options.duplicateAction === 'ignore') return { path: reported, list: 'ignored', file: true };
      const known = entry.hashes.md5?.toLowerCase();
      if (!known) spooled ??= await this.spool(entry);
      const incoming = known ?? spooled!.md5;
      if (existing.md5 !== null && existing.md5 === incoming) return { path: reported, list: 'ignored', file: true };
      if (entry.size === null) spooled ??= await this.spool(entry);
      const response = await this.upload(`${existing.wbUrl}?kind=file`, entry, spooled, []);
      const stored = await storedRecord(response);
      existing.md5 = incoming;
      return { path: reported, list: 'updated', file: true, stored };
    } finally {
      if (spooled) await rm(spooled.file, { force: true });
    }
  }

  /**
   * One streamed PUT with Content-Length (WaterButler answers 411 without it). Retries
   * (429/5xx, a broken connection) open the body afresh: the spooled copy, or the entry
   * again. The client's timeout is the longest pause, so a big file is never cut off.
   */
  private async upload(url: string, entry: Entry, spooled: Spooled | null, allow: number[]): Promise<Response> {
    const size = spooled ? spooled.size : entry.size!;
    const opened: Readable[] = [];
    try {
      return await this.target.client.upload(url, {
        method: 'PUT',
        token: this.ctx.token,
        signal: this.options.signal,
        body: async () => {
          throwIfAborted(this.options.signal);
          const body: Readable = spooled ? createReadStream(spooled.file) : await entry.open();
          opened.push(body);
          return body;
        },
        headers: { 'content-length': String(size), 'content-type': 'application/octet-stream' },
        allow,
      });
    } finally {
      for (const body of opened) if (!body.destroyed) body.destroy();
    }
  }

  /** Bytes of unknown size or md5 go to a temp file while hashing (never into memory). */
  private async spool(entry: Entry): Promise<Spooled> {
    this.spoolDir ??= mkdtemp(path.join(os.tmpdir(), 'ferry-osf-'));
    const file = path.join(await this.spoolDir, String(this.spools++));
    const hasher = new HashingPassThrough(['md5']);
    const handle = await open(file, 'wx', 0o600);
    try {
      await pipeline(await entry.open(), hasher, handle.createWriteStream(), { signal: this.options.signal });
    } catch (error) {
      await rm(file, { force: true });
      if (this.options.signal.aborted) throw new CancelledError();
      throw error;
    }
    return { file, size: hasher.bytes, md5: hasher.digests!.md5! };
  }

  /** A folder's files and folders by exact name (all pages), listed once (tasks at once share the listing) until forgotten (forgetListing). */
  private children(folder: FolderState): Promise<NonNullable<FolderState['children']>> {
    if (folder.children) return Promise.resolve(folder.children);
    folder.listing ??= this.listChildren(folder).then(
      (children) => (folder.children = children),
      (error: unknown) => {
        folder.listing = null;
        throw error;
      },
    );
    return folder.listing;
  }

  private async listChildren(folder: FolderState): Promise<NonNullable<FolderState['children']>> {
    const files = new Map<string, Existing>();
    const folders = new Map<string, Existing>();
    const add = (item: Existing) => (item.kind === 'folder' ? folders : files).set(item.name, item);
    if (folder.listHref) {
      for await (const item of this.target.client.list(folder.listHref, this.ctx.token, { sort: 'name' }, this.options.signal)) add(fromApi(item));
    } else {
      // A folder this job made: WaterButler lists it (one unpaged answer).
      const response = await this.target.client.fileRequest(folder.wbUrl, { token: this.ctx.token, signal: this.options.signal });
      for (const item of ((await response.json()) as { data: WaterbutlerEntity[] }).data) add(fromWaterbutler(item));
    }
    return { files, folders };
  }
}

/** Something appeared in `folder` meanwhile (a 409): its next listing asks OSF again. */
function forgetListing(folder: FolderState): void {
  folder.children = null;
  folder.listing = null;
}

interface Spooled {
  file: string;
  size: number;
  md5: string;
}

interface WaterbutlerEntity {
  attributes: { name: string; kind: 'file' | 'folder'; size?: number | null; extra?: { hashes?: { md5?: string | null; sha256?: string | null } } };
  links: Record<string, string>;
}

/**
 * WaterButler's answer to an upload is its record of the stored file (`extra.hashes` md5 and
 * sha256, `size`; osf.md): the job verifies the file against it (jobs/verify-written.ts).
 */
async function storedRecord(response: Response): Promise<StoredRecord> {
  let entity: WaterbutlerEntity | undefined;
  try {
    entity = ((await response.json()) as { data?: WaterbutlerEntity }).data;
  } catch {
    entity = undefined;
  }
  if (!entity) return { unverifiable: 'OSF answered the upload without its record of the stored file.' };
  const hashes = Object.fromEntries(Object.entries(entity.attributes.extra?.hashes ?? {}).filter((pair): pair is [string, string] => typeof pair[1] === 'string'));
  const size = entity.attributes.size;
  return { hashes, size: typeof size === 'number' ? size : null };
}

function fromApi(item: JsonApiResource): Existing {
  const link = item.links?.upload ?? item.links?.move;
  if (!link) throw new FerryError(502, 'upstream_error', `OSF listed '${String(item.attributes.name)}' without a file-server link.`);
  const { md5 } = reportedHashes(item);
  return {
    name: String(item.attributes.name),
    kind: item.attributes.kind === 'folder' ? 'folder' : 'file',
    md5: typeof md5 === 'string' ? md5 : null,
    wbUrl: withoutQuery(link),
    listHref: item.relationships?.files?.links?.related?.href ?? null,
  };
}

function fromWaterbutler(item: WaterbutlerEntity): Existing {
  const link = item.links.upload ?? item.links.move ?? item.links.new_folder;
  if (!link) throw new FerryError(502, 'upstream_error', `OSF answered without a file-server link for '${item.attributes.name}'.`);
  return { name: item.attributes.name, kind: item.attributes.kind, md5: item.attributes.extra?.hashes?.md5 ?? null, wbUrl: withoutQuery(link), listHref: null };
}

/** RFC 3986 percent-encoding: a '+' must not become a space (osf.md §5.6). */
export function strictEncode(name: string): string {
  return encodeURIComponent(name).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}
