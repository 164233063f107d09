import { badRequest, conflict, FerryError, notFound, throwIfAborted } from '../../errors.js';
import { normalizeTimestamp } from '../../time.js';
import {
  fullActions,
  type Entry,
  type ListScope,
  type ReadResult,
  type ResourceInfo,
  type ResourceNode,
  type SearchPage,
  type SearchQuery,
  type DescriptiveMetadata,
  type Target,
  type TargetContext,
  type TargetInfo,
  type WriteOptions,
  type WriteOutcome,
  singleEntry,
} from '../../target.js';
import { isPerFileFailure } from '../../remote/file-failure.js';
import { writeBelowOneTopFolder } from '../../remote/flat-record.js';
import type { NamingRules } from '../../plan/naming-rules.js';
import { verifyAdvertised } from '../../remote/advertised-fixity.js';
import { DataverseApi, type DataverseApiOptions, type DatasetVersion, type FileMetadata } from './api.js';
import { parseDataverseToken } from './credentials.js';
import { uploadDirect } from './direct-upload.js';
import { datasetId, fileId, folderId, parseDataverseId } from './ids.js';
import { collectionChildren, collectionDetail, myCollectionNodes } from './collections.js';
import { searchMyData } from './search.js';
import { stageEntry, type StagedBytes } from './staged.js';
import { UploadJournal } from './upload-journal.js';
import { isZipName, wrapInZip } from './zip-wrap.js';
import { removedOnFailure } from '../../remote/new-record.js';
import { detachedSignal } from '../../remote/retry-notice.js';
import { OutcomePipeline, type FileResult, type Pending } from '../../remote/outcome-pipeline.js';
import { ONE_AT_A_TIME, type PipelineLimits } from '../../jobs/ordered-pipeline.js';
import { ChangeTurns, type Turn } from './change-turns.js';
import { isShutdownAbort } from '../../jobs/service.js';
import { dataverseFields, readDataverseMetadata } from '../../metadata/dataverse.js';

export interface DataverseTargetOptions extends DataverseApiOptions {
  /** the installation a bare token is for */
  defaultUrl: string;
  /**
   * files this big or bigger go by direct upload where the store allows it (default 1 byte:
   * every file with bytes). Storage PUTs change nothing in the dataset; one addFiles a batch
   * then registers them (REGISTER_BATCH), instead of one native add, one draft change and
   * perhaps one ingest lock per file. An empty file has nothing to send: it goes native.
   */
  directUploadBytes?: number;
  /** how long a write waits for an ingest (or other) lock to lift, ms (default 10 min) */
  lockWaitMs?: number;
  /** between lock checks, ms (default 2 s) */
  lockPollMs?: number;
  /** where multipart direct uploads are journaled for resuming (upload-journal.ts); null: not at all */
  journalDir?: string | null;
}

/**
 * New direct uploads are registered this many at a time, with one `addFiles`, the rest at the
 * end of the write: each registration is a change of the dataset's draft version, made one at
 * a time under the dataset's lock, and the maintainers' advice for many files is direct upload
 * with one addFiles (IQSS/dataverse#8700). The bound keeps one request's work on the server,
 * and what a stop leaves to register when the job resumes, to a size that answers in time.
 */
export const REGISTER_BATCH = 100;

/**
 * What one write into a dataset keeps in flight, by what the dataset's store allows; a write
 * starts with `native` and takes `direct` once `uploadurls` answered with URLs (WriteSession).
 * Either way the dataset takes one change at a time (change-turns.ts): each add, replace or
 * `addFiles` is a change of its draft version, made under a lock — changes sent together fail
 * (OptimisticLockException, a 500; IQSS/dataverse#11265) or leave the dataset locked for good
 * (#4011, #5979), and a tabular ingest locks it for a while after an add (dataverse.md Limits).
 * - native: one file at a time, since a native add is the file's bytes and its change at once;
 * - direct: 4 files, within 8 MiB of their sizes (a larger one alone), each `uploadurls` + its
 *   storage PUTs (+ `mpupload` completion) at once with the others': none of them changes the
 *   dataset (`Datasets.getMPUploadUrls` only checks permission and limits and presigns), and 4
 *   is what Dataverse's own upload page (`fileupload.js`), dvwebloader and DVUploader keep
 *   under way to storage (dataverse.md Limits).
 */
export const DATAVERSE_IN_FLIGHT: { native: PipelineLimits; direct: PipelineLimits } = {
  native: ONE_AT_A_TIME,
  direct: { files: 4, bytes: 8 * 1024 * 1024 },
};

/** Dataverse's checksum types (DataFile.ChecksumType) → Ferry's hash names. */
const HASH_NAMES: Record<string, string> = { MD5: 'md5', 'SHA-1': 'sha1', 'SHA-256': 'sha256', 'SHA-512': 'sha512' };

/**
 * Dataverse installations through the Native, Data Access and direct upload APIs. The
 * datasets the token's user has a role on are the top-level containers; each shows its latest
 * version (the draft when the user has one) with its files, folders made from `directoryLabel`.
 * The collections the user has a role on follow them, each holding its sub-collections and
 * datasets (collections.ts); an upload into a collection makes a new dataset there.
 *
 * An ingested tabular file (CSV, Stata, SPSS, … rewritten to `.tab` by Dataverse) is shown and
 * read as what was uploaded: its original name and size, downloaded with `format=original`,
 * which is also what the installation's checksum covers.
 *
 * Writing adds files to the dataset's draft (Dataverse makes a new draft of a published
 * dataset on the first change); `update` replaces a changed file through `/files/{id}/replace`
 * so its history is kept. Ferry never publishes: that stays the owner's act in Dataverse.
 */
/**
 * What Dataverse refuses or changes in a file's names (FileMetadata.java): a `label` (file
 * name) matching `[:<>;#/"*|?\\]` fails its @Pattern; a `directoryLabel` (the folder path) is
 * passed through StringUtil.sanitizeFileDirectory, which silently strips '.', '-' and ' '
 * from its start and end — the folder would then not be the one the source named.
 */
const DATAVERSE_NAMING_RULES: NamingRules = {
  forbiddenFileCharacters: ':<>;#"*|?',
  folderPath: (folder) => (/^[.\- ]|[.\- ]$/.test(folder) ? "Dataverse strips '.', '-' and spaces from the start and end of a folder path, so the folder would be renamed" : null),
  evidence: 'Dataverse FileMetadata.java (label @Pattern, setDirectoryLabel → StringUtil.sanitizeFileDirectory)',
};

export class DataverseTarget implements Target {
  readonly namingRules = DATAVERSE_NAMING_RULES;
  readonly info: TargetInfo = {
    name: 'dataverse',
    readable_name: 'Dataverse',
    supported_actions: fullActions(true),
    supported_hash_algorithms: ['md5', 'sha1', 'sha256', 'sha512'],
    credential: 'remote',
    // ids.ts builds every id from digits and base64url text
    plainIds: true,
    keepsMetadata: true,
    // a write's first files, and every file to a store without direct upload: one at a time
    // (DATAVERSE_IN_FLIGHT; a store that takes direct uploads raises it per write)
    concurrency: DATAVERSE_IN_FLIGHT.native,
  };

  private readonly clients = new Map<string, DataverseApi>();

  constructor(private readonly options: DataverseTargetOptions) {}

  /** One API client per account, kept for its rate budget; a handful of accounts at most. */
  private api(ctx: TargetContext): DataverseApi {
    const account = parseDataverseToken(ctx.token, this.options.defaultUrl);
    const key = `${account.url}\n${account.token}\n${account.collection}`;
    let api = this.clients.get(key);
    if (!api) {
      if (this.clients.size >= 16) this.clients.delete(this.clients.keys().next().value as string);
      api = new DataverseApi(account, this.options);
      this.clients.set(key, api);
    }
    return api;
  }

  async *list(ctx: TargetContext, scope?: ListScope): AsyncIterable<ResourceNode> {
    const api = this.api(ctx);
    if (scope?.container) {
      const parsed = parseDataverseId(scope.container);
      if (parsed.kind === 'file') return;
      if (parsed.kind === 'collection') return yield* collectionChildren(api, parsed.collectionId, ctx.signal);
      const version = await api.latestVersion(parsed.datasetId, ctx.signal);
      const prefix = parsed.kind === 'folder' ? parsed.path : '';
      for (const node of versionNodes(version)) if (node.parent === prefix) yield node.node;
      return;
    }
    for await (const item of api.myDatasets(ctx.signal)) {
      yield { kind: 'container', kind_name: 'folder', id: datasetId(item.entity_id), container: null, title: item.name };
      if (scope !== undefined) continue;
      const version = await api.latestVersion(item.entity_id, ctx.signal);
      for (const node of versionNodes(version)) yield node.node;
    }
    // their contents are listed when one is opened, never here: a dataset of the user's would
    // be listed twice, and a collection may hold thousands
    yield* myCollectionNodes(api, ctx.signal);
  }

  /** The user's datasets found by the installation's Solr index, through My Data (search.ts). */
  search(ctx: TargetContext, query: SearchQuery): Promise<SearchPage> {
    return searchMyData(this.api(ctx), ctx, query);
  }

  async detail(ctx: TargetContext, id: string): Promise<ResourceInfo> {
    const parsed = parseDataverseId(id);
    const api = this.api(ctx);
    if (parsed.kind === 'collection') return collectionDetail(api, parsed.collectionId, ctx.signal);
    const version = await api.latestVersion(parsed.datasetId, ctx.signal, parsed.kind === 'dataset');
    const common = datasetExtra(api, version);
    if (parsed.kind === 'dataset') {
      const files = version.files ?? [];
      const owner = version.isPartOf?.type === 'DATAVERSE' ? version.isPartOf : null;
      common.collection = owner ? { alias: String(owner.identifier ?? ''), name: owner.displayName ?? null } : null;
      return {
        ...datasetNode(version),
        date_created: normalizeTimestamp(version.createTime),
        date_modified: normalizeTimestamp(version.lastUpdateTime),
        hashes: {},
        extra: { ...common, file_count: files.length, size: files.reduce((sum, file) => sum + sizeOf(file), 0) },
      };
    }
    if (parsed.kind === 'folder') {
      const node = versionNodes(version).find((n) => n.node.id === id);
      if (!node) throw notFound(`The Dataverse dataset '${titleOf(version)}' has no folder '${parsed.path}'.`);
      return { ...node.node, date_created: null, date_modified: null, hashes: {}, extra: { ...common, path: parsed.path } };
    }
    const file = findFile(version, parsed.fileId);
    return {
      ...fileNode(version, file),
      // a file's own date is its creation day; the version's update time is not the file's
      date_created: normalizeTimestamp(file.dataFile.creationDate),
      date_modified: null,
      hashes: hashesOf(file),
      extra: {
        ...common,
        size: sizeOf(file),
        file_id: file.dataFile.id,
        path: pathOf(file),
        restricted: file.restricted ?? false,
        content_type: file.dataFile.contentType ?? null,
        checksum_type: file.dataFile.checksum?.type ?? (file.dataFile.md5 ? 'MD5' : null),
        tabular: isIngested(file)
          ? { ingested: true, stored_as: file.label, stored_size: file.dataFile.filesize, original_format: file.dataFile.originalFileFormat ?? null }
          : { ingested: false },
      },
    };
  }

  async read(ctx: TargetContext, id: string): Promise<ReadResult> {
    const parsed = parseDataverseId(id);
    const api = this.api(ctx);
    if (parsed.kind === 'collection') throw badRequest('A Dataverse collection is read dataset by dataset: open it and download or transfer its datasets.');
    const version = await api.latestVersion(parsed.datasetId, ctx.signal);
    const open = (file: FileMetadata) => async () =>
      verifyAdvertised(await api.download(file.dataFile.id, isIngested(file), ctx.signal), recordOf(file), { service: 'Dataverse', path: pathOf(file) });
    if (parsed.kind === 'file') {
      const file = findFile(version, parsed.fileId);
      const root = fileNode(version, file);
      return { title: root.title, root, entries: singleEntry(fileEntry(root.title, file, open(file))) };
    }
    let root: ResourceNode = datasetNode(version);
    let prefix = '';
    if (parsed.kind === 'folder') {
      const node = versionNodes(version).find((n) => n.node.id === id);
      if (!node) throw notFound(`The Dataverse dataset '${titleOf(version)}' has no folder '${parsed.path}'.`);
      root = node.node;
      prefix = `${parsed.path}/`;
    }
    const title = root.title;
    const files = (version.files ?? []).filter((file) => pathOf(file).startsWith(prefix));
    async function* entries(): AsyncIterable<Entry> {
      yield folderEntry(title);
      const seen = new Set<string>();
      for (const file of files) {
        const parts = pathOf(file).slice(prefix.length).split('/');
        for (let i = 1; i < parts.length; i++) {
          const folder = `${title}/${parts.slice(0, i).join('/')}`;
          if (seen.has(folder)) continue;
          seen.add(folder);
          yield folderEntry(folder);
        }
        yield fileEntry(`${title}/${parts.join('/')}`, file, open(file));
      }
    }
    return { title, root, entries: entries() };
  }

  /** A dataset's citation block and licence (metadata/dataverse.ts); null for folders and files. */
  async describe(ctx: TargetContext, id: string): Promise<DescriptiveMetadata | null> {
    const parsed = parseDataverseId(id);
    if (parsed.kind !== 'dataset') return null;
    return readDataverseMetadata(await this.api(ctx).latestVersion(parsed.datasetId, ctx.signal));
  }

  async write(ctx: TargetContext, containerId: string | null, entries: AsyncIterable<Entry>, options: WriteOptions): Promise<WriteOutcome> {
    const api = this.api(ctx);
    const outcome: WriteOutcome = { created: [], updated: [], ignored: [], fileErrors: [] };
    const parsed = containerId === null ? null : parseDataverseId(containerId);
    if (parsed === null || parsed.kind === 'collection') {
      // a new dataset in the account's collection, or in the one uploaded into
      const collection = parsed ? String(parsed.collectionId) : api.account.collection;
      let session: WriteSession | undefined;
      // a new draft dataset that a failed or cancelled upload made is deleted again, kept for a paused or stopped job (remote/new-record.ts)
      await removedOnFailure((recordMade) =>
        writeBelowOneTopFolder(
          this,
          entries,
          options,
          async (top) => {
            const made = await this.createDataset(api, collection, top, options, outcome, ctx.signal);
            recordMade({
              label: `the new draft dataset '${made.title}' (${made.persistentId})`,
              howToRemove: `delete it on its page, ${api.account.url}dataset.xhtml?persistentId=${encodeURIComponent(made.persistentId)}&version=DRAFT (Edit Dataset → Delete Dataset)`,
              // its own deadline: the job's signal may have fired (a cancel); still the job's (its retries)
              remove: () => api.deleteDraft(made.id, detachedSignal(ctx.signal, 30_000)),
            });
            outcome.newResource = { id: datasetId(made.id), title: made.title };
            options.onNewResource?.(outcome.newResource);
            return (session = await this.session(api, made.id, '', options, outcome));
          },
          (s, entry, relativePath) => s.upload(entry, entry.path, relativePath),
        )
          // no request is under way when the dataset is deleted again
          .finally(() => session?.drain())
          .then((s) => s.finish()),
        options.signal,
      );
      return outcome;
    }
    if (parsed.kind === 'file') throw badRequest('A Dataverse file is not a container; upload into its dataset or one of its folders instead.');
    const into = await this.session(api, parsed.datasetId, parsed.kind === 'folder' ? `${parsed.path}/` : '', options, outcome);
    try {
      for await (const entry of entries) {
        throwIfAborted(options.signal);
        if (into.stopped) break;
        if (entry.kind === 'folder') continue; // Dataverse has no empty folders: a folder is its files' directoryLabel
        await into.upload(entry, entry.path, entry.path);
      }
    } finally {
      // never return (or throw) while a request is under way
      await into.drain();
    }
    await into.finish();
    return outcome;
  }

  private async session(api: DataverseApi, dataset: number, prefix: string, options: WriteOptions, outcome: WriteOutcome): Promise<WriteSession> {
    const version = await api.latestVersion(dataset, options.signal);
    if (version.versionState === 'DEACCESSIONED') throw conflict(`The Dataverse dataset '${titleOf(version)}' is deaccessioned; it takes no new files.`);
    return new WriteSession(api, version, prefix, options, new OutcomePipeline(this.info.concurrency, outcome, options), {
      directUploadBytes: this.options.directUploadBytes ?? 1,
      lockWaitMs: this.options.lockWaitMs ?? 10 * 60_000,
      lockPollMs: this.options.lockPollMs ?? 2000,
      journal: this.options.journalDir ? new UploadJournal(this.options.journalDir) : null,
    });
  }

  /**
   * A new draft dataset in `collection` (an alias or id), with the citation block's required
   * fields filled: the title (the top folder's name, made distinct among the user's
   * datasets), the token's user as contact, and from the source's descriptive metadata
   * (metadata/dataverse.ts) the authors, description, keywords, related publications, grants
   * and licence; without them the token's user is the author and the description names the
   * job; the subject is "Other". What the block cannot hold is named in the job's notes. An
   * installation that requires more refuses with 400; its words are passed on with what to do.
   */
  private async createDataset(api: DataverseApi, collection: string, wanted: string, options: WriteOptions, outcome: WriteOutcome, signal: AbortSignal): Promise<{ id: number; persistentId: string; title: string }> {
    const taken = new Set<string>();
    for await (const item of api.myDatasets(signal)) taken.add(item.name);
    let title = wanted;
    for (let n = 2; taken.has(title); n++) title = `${wanted} (${n})`;
    const user = await api.me(signal);
    const name = user.lastName && user.firstName ? `${user.lastName}, ${user.firstName}` : user.displayName || user.lastName || 'Unknown';
    if (!user.email) throw badRequest('Your Dataverse account has no e-mail address, which a new dataset needs as its contact. Add one to your account, or create the dataset in Dataverse and upload into it.');
    const licenses = options.metadata?.license ? await api.licenses(signal) : [];
    const described = dataverseFields(options.metadata, { author: name, description: `Deposited with Ferry (${options.jobLabel}).` }, licenses);
    if (described.notes.length) outcome.notes = [...(outcome.notes ?? []), ...described.notes];
    const primitive = (typeName: string, value: string) => ({ typeName, multiple: false, typeClass: 'primitive', value });
    const body = {
      datasetVersion: {
        ...(described.fields.license ? { license: described.fields.license } : {}),
        metadataBlocks: {
          citation: {
            fields: [
              primitive('title', title),
              { typeName: 'datasetContact', multiple: true, typeClass: 'compound', value: [{ datasetContactName: primitive('datasetContactName', name), datasetContactEmail: primitive('datasetContactEmail', user.email) }] },
              ...described.fields.citation,
            ],
          },
        },
      },
    };
    const made = await api.createDataset(collection, body, signal);
    if ('refused' in made) {
      throw badRequest(
        `Dataverse refused to create the dataset '${title}' in the collection '${collection}': ${made.refused} ` +
          'Ferry fills in the title, author, contact e-mail, description and subject (and what the source describes); this installation requires more. ' +
          'Create the dataset in Dataverse with those fields filled in, then upload into it.',
      );
    }
    return { id: made.id, persistentId: made.persistentId, title };
  }
}

/** A new direct upload in storage, waiting for the addFiles that registers it. */
interface Unregistered {
  path: string;
  reportPath: string;
  registered: Record<string, unknown>;
  journalKey: string | null;
  settle(result: FileResult | null, error?: unknown): void;
}

/** The state of one write into one dataset: what it holds, and whether its store takes direct uploads. */
class WriteSession {
  private readonly byPath = new Map<string, FileMetadata>();
  /** in storage, not registered yet (REGISTER_BATCH); never reported before their registration */
  private unregistered: Unregistered[] = [];
  private readonly algorithm: string;
  /** null until the store answered `uploadurls`: the write keeps DATAVERSE_IN_FLIGHT.native until it allows direct uploads */
  private directAllowed: boolean | null = null;
  private lockChecked = false;
  /** one change of the dataset at a time, in entry order (change-turns.ts) */
  private readonly turns = new ChangeTurns();

  constructor(
    private readonly api: DataverseApi,
    private readonly version: DatasetVersion,
    private readonly prefix: string,
    private readonly options: WriteOptions,
    private readonly writes: OutcomePipeline,
    private readonly tuning: { directUploadBytes: number; lockWaitMs: number; lockPollMs: number; journal: UploadJournal | null },
  ) {
    for (const file of version.files ?? []) this.byPath.set(pathOf(file), file);
    const types = (version.files ?? []).map((file) => file.dataFile.checksum?.type).filter(Boolean) as string[];
    this.algorithm = HASH_NAMES[types[0] ?? 'MD5'] ?? 'md5';
  }

  /** True once a file failed hard: take no more entries. */
  get stopped(): boolean {
    return this.writes.stopped;
  }

  /**
   * One file on the write's pipeline (DATAVERSE_IN_FLIGHT), by its path in the dataset. Its
   * turn to change the dataset is taken here, in entry order, and ends with its task (or at
   * once, if the task never starts).
   */
  async upload(entry: Entry, reportPath: string, relativePath: string): Promise<void> {
    const path = `${this.prefix}${relativePath}`;
    const turn = this.turns.take();
    let started = false;
    try {
      started = await this.writes.startFile(entry, path, () => this.uploadFile(entry, reportPath, path, turn).finally(turn.end));
    } finally {
      if (!started) turn.end();
    }
  }

  /**
   * Waits until no request is under way. A write that failed or was cancelled registers no
   * more: its direct uploads stay out of the dataset (and, unless Ferry is stopping, out of
   * the journal; storage drops unregistered objects, dataverse.md Limits).
   */
  async drain(): Promise<void> {
    await this.writes.drain();
    if (this.writes.stopped || this.options.signal.aborted) await this.abandon();
  }

  /** Registers what is left, waits for every file; throws the first hard failure. */
  async finish(): Promise<void> {
    await this.drain();
    try {
      await this.register();
    } catch (error) {
      await this.writes.finish().catch(() => undefined);
      throw error;
    }
    await this.writes.finish();
  }

  /** One file: ignored, added or replaced (a new direct upload: registered later); refusals become the file's error. */
  private async uploadFile(entry: Entry, reportPath: string, path: string, turn: Turn): Promise<FileResult | Pending> {
    const slash = path.lastIndexOf('/');
    const name = path.slice(slash + 1);
    const directoryLabel = slash === -1 ? null : path.slice(0, slash);
    // the same path again (its first task has ended: one key, OrderedPipeline): the first must
    // be in the dataset's listing before this one is compared with it
    if (this.unregistered.some((file) => file.path === path)) {
      await this.inTurn(turn);
      await this.register();
    }
    const existing = this.byPath.get(path);
    if (existing && this.options.duplicateAction === 'ignore') return { path: reportPath, list: 'ignored' };
    let bytes: StagedBytes | null = null;
    try {
      const known = existing ? hashesOf(existing) : {};
      const knownAlgorithm = Object.keys(known)[0];
      bytes = await stageEntry(entry, knownAlgorithm ? [knownAlgorithm] : [this.algorithm], (entry.size ?? Infinity) >= this.tuning.directUploadBytes, this.options.signal);
      if (existing && knownAlgorithm && known[knownAlgorithm] === bytes.hashes[knownAlgorithm]) return { path: reportPath, list: 'ignored' };
      const stored = await this.send(bytes, path, name, directoryLabel, existing ?? null, reportPath, turn);
      if ('later' in stored) return stored;
      this.byPath.set(path, stored);
      return { path: reportPath, list: existing ? 'updated' : 'created', stored: recordOf(stored) };
    } catch (error) {
      if (!isPerFileFailure(error, this.options.signal)) throw error;
      return { path: reportPath, error: error.message };
    } finally {
      await bytes?.dispose();
    }
  }

  /**
   * Direct upload where the store allows it (a file of `directUploadBytes` or more, a ZIP);
   * otherwise the native API. A new direct upload is registered later, with others (REGISTER_BATCH) — at once only when
   * it was sent before a stop (journaled): if storage no longer has it, it is sent again while
   * its bytes are still staged.
   */
  private async send(bytes: StagedBytes, path: string, name: string, directoryLabel: string | null, existing: FileMetadata | null, reportPath: string, turn: Turn): Promise<FileMetadata | Pending> {
    const signal = this.options.signal;
    const datasetId = this.version.datasetId;
    const meta = { directoryLabel: directoryLabel ?? '', description: '' };
    if (this.directAllowed !== false && (bytes.size >= this.tuning.directUploadBytes || isZipName(name))) {
      const md5 = bytes.hashes.md5 as string;
      const journal = this.tuning.journal ? { store: this.tuning.journal, key: UploadJournal.key({ installation: this.api.account.url, datasetId, path, size: bytes.size, md5 }) } : undefined;
      for (let again = true; ; again = false) {
        // outside the turn: nothing of a direct upload changes the dataset
        const uploaded = await uploadDirect(this.api, datasetId, bytes, signal, journal);
        this.learnDirect(uploaded !== null);
        if (uploaded === null) break;
        try {
          await this.inTurn(turn);
        } catch (error) {
          // never to be registered (by this run)
          await this.dropRecord(journal?.key ?? null);
          throw error;
        }
        const registered = { ...meta, storageIdentifier: uploaded.storageIdentifier, fileName: name, mimeType: 'application/octet-stream', checksum: { '@type': 'MD5', '@value': md5 } };
        if (existing) {
          await this.waitForLocks();
          const stored = firstFile(await this.withLockRetry(() => this.api.replaceFile(existing.dataFile.id, { ...registered, forceReplace: true }, null, signal)), name);
          // registered: nothing is left to resume
          await journal?.store.remove(journal.key);
          return stored;
        }
        const pending = this.registerLater(path, reportPath, registered, journal?.key ?? null);
        const sentBefore = uploaded.sentBefore && again;
        // in this file's turn on the pipeline: one change of the dataset at a time
        if (sentBefore || this.unregistered.length >= REGISTER_BATCH) await this.register();
        if (!sentBefore || !('error' in (await pending.later))) return pending;
        // refused (storage no longer has it): its journal record is gone, the next round sends the bytes
      }
    }
    await this.inTurn(turn);
    await this.waitForLocks();
    // native: a ZIP goes inside a ZIP of its own, or Dataverse would unpack it (zip-wrap.ts)
    const zip = isZipName(name);
    const wrapped = zip ? wrapInZip(directoryLabel ? `${directoryLabel}/${name}` : name, bytes.size, () => bytes.open()) : null;
    // the name goes as the JSON `label` (OptionalFileParams: it sets the file's label), which
    // carries any character; the multipart filename, whose decoding by the server is not
    // pinned down, is kept to ASCII and only tells Dataverse the type by its extension
    const nativeMeta = { ...meta, label: name };
    const part = {
      name: 'file',
      filename: asciiName(zip ? `${name}.zip` : name),
      contentType: zip ? 'application/zip' : 'application/octet-stream',
      size: wrapped?.size ?? bytes.size,
      open: wrapped?.open ?? (() => bytes.open()),
    };
    const answer = existing
      ? await this.withLockRetry(() => this.api.replaceFile(existing.dataFile.id, { ...nativeMeta, forceReplace: true }, part, signal))
      : await this.withLockRetry(() => this.api.addFile(datasetId, nativeMeta, part, signal));
    return firstFile(answer, name);
  }

  /**
   * What `uploadurls` said of the store, the first time and should it ever change: the write
   * keeps DATAVERSE_IN_FLIGHT.direct from the next file on where the store takes direct
   * uploads, and goes native, one file at a time, where it does not.
   */
  private learnDirect(allowed: boolean): void {
    if (this.directAllowed === allowed) return;
    this.directAllowed = allowed;
    this.writes.limitTo(allowed ? DATAVERSE_IN_FLIGHT.direct : DATAVERSE_IN_FLIGHT.native);
  }

  /**
   * Waits for the file's turn to change the dataset (change-turns.ts). A write that was
   * cancelled or failed meanwhile makes no more changes: that throws, and the pipeline keeps
   * the first failure.
   */
  private async inTurn(turn: Turn): Promise<void> {
    await turn.wait();
    throwIfAborted(this.options.signal);
    if (this.writes.stopped) throw new Error('The write stopped before this file changed the dataset.');
  }

  /** Queues a new direct upload for the next addFiles (in its file's turn: entry order). */
  private registerLater(path: string, reportPath: string, registered: Record<string, unknown>, journalKey: string | null): Pending {
    let settle!: Unregistered['settle'];
    const later = new Promise<FileResult>((resolve, reject) => (settle = (result, error) => (result ? resolve(result) : reject(error))));
    this.unregistered.push({ path, reportPath, registered, journalKey, settle });
    return { later };
  }

  /**
   * One addFiles for every upload waiting: each file's entry in the answer (HTTP 200 even when
   * some fail, per-file `errorMessage`) is its result — registered, or refused with Dataverse's
   * words. A request that fails leaves them all unregistered and throws.
   */
  private async register(): Promise<void> {
    const batch = this.unregistered;
    this.unregistered = [];
    if (batch.length === 0) return;
    const signal = this.options.signal;
    let answer: Awaited<ReturnType<DataverseApi['addFiles']>>;
    try {
      await this.waitForLocks();
      answer = await this.withLockRetry(() => this.api.addFiles(this.version.datasetId, batch.map((file) => file.registered), signal));
    } catch (error) {
      await this.forget(batch, error);
      throw error;
    }
    // a registered entry names its storage identifier (AddReplaceFileHelper.addFiles); with none named, by position
    const byIdentifier = new Map(answer.Files.filter((result) => result.storageIdentifier).map((result) => [result.storageIdentifier, result]));
    for (const [index, file] of batch.entries()) {
      const result = byIdentifier.size ? byIdentifier.get(file.registered.storageIdentifier as string) : answer.Files[index];
      if (file.journalKey) await this.tuning.journal?.remove(file.journalKey);
      const name = file.registered.fileName as string;
      if (!result?.fileDetails || result.errorMessage) {
        file.settle({ path: file.reportPath, error: `Dataverse did not register '${name}': ${result?.errorMessage?.replace(/\.$/, '') ?? 'its answer did not name the file'}.` });
        continue;
      }
      this.byPath.set(file.path, result.fileDetails);
      file.settle({ path: file.reportPath, list: 'created', stored: recordOf(result.fileDetails) });
    }
  }

  /** The write stops: nothing waiting for registration is registered or reported. */
  private async abandon(): Promise<void> {
    const batch = this.unregistered;
    this.unregistered = [];
    await this.forget(batch, new FerryError(409, 'conflict', 'The write stopped before Dataverse registered this file.'));
  }

  /** Uploads never reported: their journal records go (dropRecord), and each file's result is `error`. */
  private async forget(batch: Unregistered[], error: unknown): Promise<void> {
    for (const file of batch) {
      await this.dropRecord(file.journalKey);
      file.settle(null, error);
    }
  }

  /**
   * The upload journal's record of an upload this run will not register goes, unless the job
   * stopped to run again (Ferry stopping, a pause): the resumed job registers it then.
   */
  private async dropRecord(journalKey: string | null): Promise<void> {
    if (journalKey && !isShutdownAbort(this.options.signal)) await this.tuning.journal?.remove(journalKey);
  }

  /**
   * Dataverse refuses edits while a dataset is locked, and ingesting a tabular file locks it
   * for a while: the first write checks the locks, and a refusal that names a lock waits for
   * them to lift and tries once more.
   */
  private async withLockRetry<T>(send: () => Promise<T>): Promise<T> {
    try {
      return await send();
    } catch (error) {
      if (!(error instanceof FerryError) || !/\block(ed)?\b/i.test(error.message)) throw error;
      this.lockChecked = false;
      await this.waitForLocks();
      return send();
    }
  }

  private async waitForLocks(): Promise<void> {
    if (this.lockChecked) return;
    const deadline = Date.now() + this.tuning.lockWaitMs;
    for (;;) {
      const locks = await this.api.locks(this.version.datasetId, this.options.signal);
      if (locks.length === 0) break;
      if (locks.includes('InReview')) throw conflict(`The Dataverse dataset '${titleOf(this.version)}' is in review; its files cannot change until a curator returns it to you.`);
      if (Date.now() >= deadline) throw conflict(`The Dataverse dataset '${titleOf(this.version)}' stayed locked (${locks.join(', ')}); try again when Dataverse has finished.`);
      await new Promise((resolve) => setTimeout(resolve, this.tuning.lockPollMs));
      throwIfAborted(this.options.signal);
    }
    this.lockChecked = true;
  }
}

/** Printable ASCII only, each other character an underscore; the extension survives. */
function asciiName(name: string): string {
  return name.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').replace(/[^\x20-\x7e]/g, '_');
}

function firstFile(answer: { files: FileMetadata[] }, name: string): FileMetadata {
  const file = answer.files?.[0];
  if (!file) throw new FerryError(502, 'upstream_error', `Dataverse accepted '${name}' but did not say what it stored.`);
  return file;
}

function titleOf(version: DatasetVersion): string {
  const field = version.metadataBlocks?.citation?.fields?.find((f) => f.typeName === 'title');
  return typeof field?.value === 'string' && field.value.trim() ? field.value : `Dataset ${version.datasetPersistentId}`;
}

/** An ingested tabular file: stored as `.tab`, read as its original. */
function isIngested(file: FileMetadata): boolean {
  return Boolean(file.dataFile.originalFileFormat) || file.dataFile.tabularData === true;
}

/** The name the user uploaded: the original's for an ingested file. */
function nameOf(file: FileMetadata): string {
  return (isIngested(file) && file.dataFile.originalFileName) || file.label || file.dataFile.filename;
}

function pathOf(file: FileMetadata): string {
  const folder = (file.directoryLabel ?? file.dataFile.directoryLabel ?? '').replace(/^\/+|\/+$/g, '');
  return folder ? `${folder}/${nameOf(file)}` : nameOf(file);
}

function sizeOf(file: FileMetadata): number {
  return isIngested(file) && typeof file.dataFile.originalFileSize === 'number' ? file.dataFile.originalFileSize : file.dataFile.filesize;
}

/** The installation's record of a file (checksum.type/value, its original's size): what a write is verified against, and a read checked with. */
function recordOf(file: FileMetadata): { hashes: Record<string, string>; size: number } {
  return { hashes: hashesOf(file), size: sizeOf(file) };
}

function hashesOf(file: FileMetadata): Record<string, string> {
  const checksum = file.dataFile.checksum ?? (file.dataFile.md5 ? { type: 'MD5', value: file.dataFile.md5 } : null);
  const name = checksum ? HASH_NAMES[checksum.type] : undefined;
  return name && /^[0-9a-f]+$/i.test(checksum!.value) ? { [name]: checksum!.value.toLowerCase() } : {};
}

function datasetExtra(api: DataverseApi, version: DatasetVersion): Record<string, unknown> {
  const draft = version.versionState === 'DRAFT';
  const pid = version.datasetPersistentId;
  return {
    provider: 'dataverse',
    installation: api.account.url,
    persistent_id: pid,
    version: draft ? 'DRAFT' : `${version.versionNumber ?? 0}.${version.versionMinorNumber ?? 0}`,
    version_state: draft ? 'draft' : version.versionState === 'RELEASED' ? 'released' : version.versionState.toLowerCase(),
    html_url: `${api.account.url}dataset.xhtml?persistentId=${encodeURIComponent(pid)}${draft ? '&version=DRAFT' : ''}`,
  };
}

function datasetNode(version: DatasetVersion): ResourceNode {
  return { kind: 'container', kind_name: 'folder', id: datasetId(version.datasetId), container: null, title: titleOf(version) };
}

function fileNode(version: DatasetVersion, file: FileMetadata): ResourceNode {
  const path = pathOf(file);
  const slash = path.lastIndexOf('/');
  return { kind: 'item', kind_name: 'file', id: fileId(version.datasetId, file.dataFile.id), container: slash === -1 ? datasetId(version.datasetId) : folderId(version.datasetId, path.slice(0, slash)), title: nameOf(file) };
}

/** Every folder (from the files' directoryLabels) and file of a version, with the path of each one's parent. */
function versionNodes(version: DatasetVersion): { node: ResourceNode; parent: string }[] {
  const out: { node: ResourceNode; parent: string }[] = [];
  const folders = new Set<string>();
  for (const file of version.files ?? []) {
    const parts = pathOf(file).split('/');
    for (let i = 1; i < parts.length; i++) {
      const folder = parts.slice(0, i).join('/');
      if (folders.has(folder)) continue;
      folders.add(folder);
      const parent = parts.slice(0, i - 1).join('/');
      out.push({ node: { kind: 'container', kind_name: 'folder', id: folderId(version.datasetId, folder), container: parent ? folderId(version.datasetId, parent) : datasetId(version.datasetId), title: parts[i - 1] as string }, parent });
    }
    out.push({ node: fileNode(version, file), parent: parts.slice(0, -1).join('/') });
  }
  return out;
}

function findFile(version: DatasetVersion, id: number): FileMetadata {
  const file = version.files?.find((f) => f.dataFile.id === id);
  if (!file) throw notFound(`The Dataverse dataset '${titleOf(version)}' has no file ${id} in its latest version; it may have been replaced or deleted.`);
  return file;
}

function fileEntry(path: string, file: FileMetadata, open: Entry['open']): Entry {
  return { path, kind: 'file', size: sizeOf(file), mtime: null, hashes: hashesOf(file), open };
}

function folderEntry(path: string): Entry {
  return { path, kind: 'folder', size: null, mtime: null, hashes: {}, open: () => Promise.reject(new Error(`${path} is a folder`)) };
}
