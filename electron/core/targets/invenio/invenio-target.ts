import { badRequest, FerryError, notFound, throwIfAborted } from '../../errors.js';
import { normalizeTimestamp } from '../../time.js';
import {
  fullActions,
  type DescriptiveMetadata,
  type Entry,
  type ListScope,
  type ReadResult,
  type ResourceInfo,
  type ResourceNode,
  type SearchPage,
  type SearchQuery,
  type Target,
  type TargetContext,
  type TargetInfo,
  type WriteOptions,
  type WriteOutcome,
  singleEntry,
} from '../../target.js';
import { isPerFileFailure } from '../../remote/file-failure.js';
import { fastPathOn } from '../../fast-paths.js';
import type { PipelineLimits } from '../../jobs/ordered-pipeline.js';
import { OutcomePipeline, type FileResult } from '../../remote/outcome-pipeline.js';
import { FLAT_RECORD_NAMING_RULES, flatName, writeBelowOneTopFolder } from '../../remote/flat-record.js';
import { sizeAndMd5 } from '../../remote/spool.js';
import { unpackedRecord } from '../../remote/unpacked-record.js';
import { verifyAdvertised } from '../../remote/advertised-fixity.js';
import { formatBytes } from '../../../../shared/format.js';
import { InvenioApi, md5Of, type InvenioApiOptions, type InvenioFile, type InvenioRecord } from './api.js';
import { parseInvenioToken, type InvenioAccount } from './credentials.js';
import { fileId, parseInvenioId, recordId } from './ids.js';
import { communityDetail, communityNode } from './communities.js';
import { searchUserRecords } from './search.js';
import { removedOnFailure } from '../../remote/new-record.js';
import { detachedSignal } from '../../remote/retry-notice.js';
import { invenioMetadata, readInvenioMetadata } from '../../metadata/invenio.js';
import { textToHtml } from '../../metadata/model.js';

export interface InvenioTargetOptions extends InvenioApiOptions {
  /** the instance a bare token is for ('' when none is configured) */
  defaultUrl: string;
  /**
   * One known instance as a target of its own (zenodo/index.ts): its target id and name, and
   * how its tokens name the account. Without it, the `invenio` target for any instance.
   */
  instance?: InvenioInstance;
}

/** A named InvenioRDM instance with its documented limits (docs/targets/<name>.md). */
export interface InvenioInstance {
  name: string;
  readableName: string;
  account(token: string): InvenioAccount;
  /** files per record, checked before an upload (RDM_RECORDS_MAX_FILES_COUNT) */
  maxFiles: number;
  /** bytes per file and per record, checked before an upload */
  maxRecordBytes: number;
  /** false where the instance refuses empty files (RECORDS_RESOURCES_ALLOW_EMPTY_FILES) */
  allowEmptyFiles: boolean;
  /** files one write keeps in flight within the instance's rate budget (TargetInfo.concurrency) */
  concurrency: PipelineLimits;
}

/**
 * What one write to an InvenioRDM instance keeps in flight (TargetInfo.concurrency): files,
 * each its requests one after another (its key declared, alone or in a batch; PUT; commit), and
 * the sum of their sizes.
 * The records API documents no limit on uploads in flight, only each instance's request rate
 * (docs/targets/invenio.md, Limits), which Ferry's 2 a second per account keeps to whatever
 * is in flight: 2 files at once fill that budget while a request takes up to a second.
 */
export const INVENIO_IN_FLIGHT: PipelineLimits = { files: 2, bytes: 8 * 1024 * 1024 };

/** InvenioRDM records hold files, not folders: nested paths are flattened (flat-record.ts). */
export { FOLDER_SEPARATOR } from '../../remote/flat-record.js';

/**
 * InvenioRDM instances through the records API: the user's drafts and latest records are the
 * top-level containers, their files the items. Files in a draft are added in three steps
 * (declare the key, PUT the bytes, commit); a file is changed by deleting and adding it again,
 * since a key cannot be declared twice. A published record's files never change: an upload
 * into one goes into the draft of its next version (made, with the files of the latest
 * version imported, if there is none yet), which the write reports as its new resource.
 * Ferry never publishes. The user's communities follow the records at the top, each holding
 * its published records (communities.ts).
 */
export class InvenioTarget implements Target {
  readonly namingRules = FLAT_RECORD_NAMING_RULES;
  readonly info: TargetInfo;
  /** the instance's name in messages */
  private readonly service: string;
  private readonly clients = new Map<string, InvenioApi>();

  constructor(private readonly options: InvenioTargetOptions) {
    this.service = options.instance?.readableName ?? 'InvenioRDM';
    this.info = {
      name: options.instance?.name ?? 'invenio',
      readable_name: this.service,
      supported_actions: fullActions(true),
      supported_hash_algorithms: ['md5'],
      credential: 'remote',
      // ids.ts builds every id from record ids ([a-z0-9-]) and base64url text
      plainIds: true,
      // metadata.ts: a transfer's descriptive metadata fills the new record's
      keepsMetadata: true,
      concurrency: options.instance?.concurrency ?? INVENIO_IN_FLIGHT,
    };
  }

  private api(ctx: TargetContext): InvenioApi {
    const account = this.options.instance?.account(ctx.token) ?? parseInvenioToken(ctx.token, this.options.defaultUrl);
    const key = `${account.url}\n${account.token}`;
    let api = this.clients.get(key);
    if (!api) {
      if (this.clients.size >= 16) this.clients.delete(this.clients.keys().next().value as string);
      api = new InvenioApi(account, { ...this.options, serviceName: this.service });
      this.clients.set(key, api);
    }
    return api;
  }

  async *list(ctx: TargetContext, scope?: ListScope): AsyncIterable<ResourceNode> {
    const api = this.api(ctx);
    if (scope?.container) {
      const parsed = parseInvenioId(scope.container);
      if (parsed.kind === 'file') return;
      if (parsed.kind === 'community') {
        for await (const record of api.communityRecords(parsed.communityId, ctx.signal)) yield { ...recordNode(record), container: scope.container };
        return;
      }
      const view = await resolve(api, parsed.recordId, ctx.signal);
      for (const file of await completedFiles(api, view, ctx.signal)) yield fileNode(view.record.id, file);
      return;
    }
    for await (const hit of api.userRecords(ctx.signal)) {
      yield recordNode(hit);
      if (scope !== undefined) continue;
      for (const file of await completedFiles(api, { record: hit, draft: hit.is_draft }, ctx.signal)) yield fileNode(hit.id, file);
    }
    // their records are listed when one is opened, never here: the user's own would be listed
    // twice, and a community (Zenodo's) can hold many thousands
    for await (const community of api.userCommunities(ctx.signal)) yield communityNode(community);
  }

  /** The instance's own index of the user's records (search.ts); answers records, not files. */
  search(ctx: TargetContext, query: SearchQuery): Promise<SearchPage> {
    return searchUserRecords(this.api(ctx), ctx, query, recordNode, this.service);
  }

  /** A record's (its draft's, when it has one) metadata in the common model (metadata/invenio.ts); null for a file. */
  async describe(ctx: TargetContext, id: string): Promise<DescriptiveMetadata | null> {
    const parsed = parseInvenioId(id);
    if (parsed.kind !== 'record') return null;
    const { record } = await resolve(this.api(ctx), parsed.recordId, ctx.signal);
    return readInvenioMetadata(record.metadata as Record<string, unknown> | undefined);
  }

  async detail(ctx: TargetContext, id: string): Promise<ResourceInfo> {
    const parsed = parseInvenioId(id);
    const api = this.api(ctx);
    if (parsed.kind === 'community') return communityDetail(api, parsed.communityId, this.info.name, ctx.signal);
    const view = await resolve(api, parsed.recordId, ctx.signal);
    const files = await completedFiles(api, view, ctx.signal);
    const common = {
      provider: this.info.name,
      instance: api.account.url,
      record_id: view.record.id,
      parent_id: view.record.parent?.id ?? null,
      version_index: view.record.versions?.index ?? null,
      status: view.record.status ?? (view.draft ? 'draft' : 'published'),
      published: view.record.is_published,
      doi: view.record.pids?.doi?.identifier ?? null,
      html_url: view.record.links.self_html ?? null,
    };
    if (parsed.kind === 'record') {
      return {
        ...recordNode(view.record),
        date_created: normalizeTimestamp(view.record.created),
        date_modified: normalizeTimestamp(view.record.updated),
        hashes: {},
        extra: { ...common, file_count: files.length, size: files.reduce((sum, f) => sum + (f.size ?? 0), 0) },
      };
    }
    const file = findFile(view.record, files, parsed.key);
    const md5 = md5Of(file.checksum);
    return {
      ...fileNode(view.record.id, file),
      date_created: normalizeTimestamp(file.created),
      date_modified: normalizeTimestamp(file.updated),
      hashes: md5 ? { md5 } : {},
      extra: { ...common, key: file.key, size: file.size ?? null },
    };
  }

  async read(ctx: TargetContext, id: string): Promise<ReadResult> {
    const parsed = parseInvenioId(id);
    if (parsed.kind === 'community') throw badRequest(`A ${this.service} community is read record by record: open it and download or transfer its records.`);
    const api = this.api(ctx);
    const view = await resolve(api, parsed.recordId, ctx.signal);
    const files = await completedFiles(api, view, ctx.signal);
    const open = (file: InvenioFile) => async () => {
      const md5 = md5Of(file.checksum);
      return verifyAdvertised(await api.download(view.record.id, view.draft, file.key, ctx.signal), { hashes: md5 ? { md5 } : {}, size: file.size ?? null }, { service: this.service, path: file.key });
    };
    if (parsed.kind === 'file') {
      const file = findFile(view.record, files, parsed.key);
      return { title: file.key, root: fileNode(view.record.id, file), entries: singleEntry(fileEntry(file.key, file, open(file))) };
    }
    const root = recordNode(view.record);
    const title = root.title;
    async function* entries(): AsyncIterable<Entry> {
      yield folderEntry(title);
      for (const file of files) yield fileEntry(`${title}/${file.key}`, file, open(file));
    }
    // the tree a Ferry write kept in it, rebuilt (remote/unpacked-record.ts)
    return { title, root, entries: unpackedRecord(title, entries(), { target: this.info.name, service: this.service, signal: ctx.signal }) };
  }

  async write(ctx: TargetContext, containerId: string | null, entries: AsyncIterable<Entry>, options: WriteOptions): Promise<WriteOutcome> {
    const api = this.api(ctx);
    const outcome: WriteOutcome = { created: [], updated: [], ignored: [], fileErrors: [] };
    if (containerId === null) {
      let writer: DraftWriter | undefined;
      // a new draft that a failed or cancelled upload made is deleted again, kept for a paused or stopped job (remote/new-record.ts)
      await removedOnFailure((made) =>
        writeBelowOneTopFolder(
          this,
          entries,
          options,
          async (top) => {
            const draft = await this.createDraft(api, top, options, outcome, ctx.signal);
            made({
              label: `the new draft record '${titleOf(draft)}' (${draft.id})`,
              howToRemove: `delete the draft on ${api.account.url}uploads/${draft.id}`,
              // its own deadline: the job's signal may have fired (a cancel); still the job's (its retries)
              remove: () => api.deleteDraft(draft.id, detachedSignal(ctx.signal, 30_000)),
            });
            outcome.newResource = { id: recordId(draft.id), title: titleOf(draft) };
            options.onNewResource?.(outcome.newResource);
            return (writer = new DraftWriter(api, draft.id, [], options, this.limits(), outcome));
          },
          (draftWriter, entry, relativePath) => draftWriter.upload(entry, relativePath),
        )
          // no request is under way when the draft is deleted again
          .finally(() => writer?.drain())
          .then((draftWriter) => draftWriter.finish()),
        options.signal,
      );
      return outcome;
    }
    const parsed = parseInvenioId(containerId);
    if (parsed.kind === 'file') throw badRequest(`A ${this.service} file is not a container; upload into its record instead.`);
    if (parsed.kind === 'community') {
      // joining a community is a request its curators review: the owner's act, not an upload's
      throw badRequest(`Records join a ${this.service} community by a request its curators review, which Ferry does not make. Upload into a record (or a new one), then submit it to the community on ${api.account.url}.`);
    }
    const draft = await this.writableDraft(api, parsed.recordId, outcome, ctx.signal);
    const writer = new DraftWriter(api, draft.id, await api.files(draft.id, true, ctx.signal), options, this.limits(), outcome);
    try {
      for await (const entry of entries) {
        throwIfAborted(options.signal);
        if (entry.kind === 'folder') continue;
        await writer.upload(entry, entry.path);
      }
    } finally {
      await writer.drain();
    }
    await writer.finish();
    return outcome;
  }

  /**
   * The draft that takes files for record `id`: its own draft while it is unpublished;
   * for a published record the draft of its next version, with the latest version's files
   * imported when it is new (else the new version would start empty), reported as the
   * write's new resource so the caller knows where the files went.
   */
  private async writableDraft(api: InvenioApi, id: string, outcome: WriteOutcome, signal: AbortSignal): Promise<InvenioRecord> {
    const draft = await api.draft(id, signal);
    if (draft && !draft.is_published) return draft;
    const next = await api.newVersion(id, signal);
    if ((await api.files(next.id, true, signal)).length === 0) {
      try {
        await api.importFiles(next.id, signal);
      } catch (error) {
        // a published record without files has nothing to import; anything else is real
        if (!(error instanceof FerryError && /no files/i.test(error.message))) throw error;
      }
    }
    outcome.newResource = { id: recordId(next.id), title: titleOf(next) };
    return next;
  }

  private limits(): UploadLimits {
    return {
      service: this.service,
      maxFiles: this.options.instance?.maxFiles ?? null,
      maxRecordBytes: this.options.instance?.maxRecordBytes ?? null,
      allowEmptyFiles: this.options.instance?.allowEmptyFiles ?? true,
      concurrency: this.info.concurrency!,
    };
  }

  /**
   * A new draft with what its deposit form needs first: the title (the top folder, made
   * distinct among the user's records), resource type "dataset", a publication date (today
   * unless the source has one) and a description (the source's, else one naming the job),
   * with the rest of a transfer's descriptive metadata (metadata.ts). Without creators from
   * the source they are left to the owner, who must add them before publishing (the draft is
   * saved without them).
   */
  private async createDraft(api: InvenioApi, wanted: string, options: WriteOptions, outcome: WriteOutcome, signal: AbortSignal): Promise<InvenioRecord> {
    const taken = new Set<string>();
    for await (const hit of api.userRecords(signal)) taken.add(titleOf(hit));
    let title = wanted;
    for (let n = 2; taken.has(title); n++) title = `${wanted} (${n})`;
    // the source's descriptive metadata where the records schema holds it (metadata/invenio.ts)
    const described = invenioMetadata(options.metadata, this.service);
    if (described.notes.length) outcome.notes = [...(outcome.notes ?? []), ...described.notes];
    return api.createDraft(
      {
        access: { record: 'public', files: 'public' },
        files: { enabled: true },
        metadata: {
          resource_type: { id: 'dataset' },
          title,
          publication_date: new Date().toISOString().slice(0, 10),
          description: textToHtml(`Deposited with Ferry (${options.jobLabel}).`),
          ...described.fields,
        },
      },
      signal,
    );
  }
}

/** An instance's documented limits, checked before bytes are sent (null: none known). */
interface UploadLimits {
  service: string;
  maxFiles: number | null;
  maxRecordBytes: number | null;
  allowEmptyFiles: boolean;
  concurrency: PipelineLimits;
}

/**
 * New keys declared in one `POST …/draft/files` (the `declare-batches` fast path): a file is
 * then two requests (PUT, commit) and a sixteenth of a declare, not three. Each declare is
 * answered with the draft's whole file list, which grows with every file, so fewer of them
 * also spare the instance; and an instance's rate budget (Zenodo: 100 requests a minute) goes
 * further. Sixteen keeps a failed write's leftovers to remove small.
 */
const DECLARE_BATCH = 16;

/**
 * Uploads into one draft, knowing its files by key. Each file's key and the instance's limits
 * are settled in entry order (`upload`); its requests then run on the write pipeline, several
 * files at once, each key never twice at once (a key is declared once per draft). A file in
 * flight counts towards the limits as if it were there, so the file refused as one too many
 * is the same one a one-at-a-time write would refuse.
 *
 * New keys whose files' sizes are known wait in a batch, declared together once it is full,
 * before any other result, or at the end; then their files start, in entry order. A key its
 * batch declared belongs to the batch until its file's own requests take it over; whatever a
 * batch declared whose file never took it over (the write stopped first, or the file failed
 * before its PUT) is removed again when the write ends, so no pending key stays behind.
 */
class DraftWriter {
  private readonly byKey: Map<string, InvenioFile>;
  /** key → size (0 when not yet known) of each file on the pipeline or in the batch */
  private readonly inFlight = new Map<string, number>();
  private readonly pipeline: OutcomePipeline;
  /** new files, their keys settled, waiting to be declared together */
  private batch: { entry: Entry; key: string }[] = [];
  /** keys a batch declared that no file's requests have taken over yet */
  private readonly declaredAhead = new Set<string>();
  private readonly batching = fastPathOn('declare-batches');

  constructor(
    private readonly api: InvenioApi,
    private readonly draftId: string,
    files: InvenioFile[],
    private readonly options: WriteOptions,
    private readonly limits: UploadLimits,
    private readonly outcome: WriteOutcome,
  ) {
    this.byKey = new Map(files.map((file) => [file.key, file]));
    this.pipeline = new OutcomePipeline(limits.concurrency, outcome, options);
  }

  /** Settles the file's key (and, its size known, the limits), then starts its upload or batches it; after an upload failed hard, throws that failure. */
  async upload(entry: Entry, relativePath: string): Promise<void> {
    if (this.pipeline.stopped) return this.finish();
    const key = flatName(relativePath, this.outcome, this.limits.service);
    const existing = this.byKey.get(key);
    const kept = existing?.status === 'completed' && this.options.duplicateAction === 'ignore';
    // a size not known yet is checked once spooled, while the file runs alone (startFile)
    const refusal = kept || entry.size === null ? null : this.refusal(key, entry.size);
    if (kept || refusal) {
      // results in entry order: the files batched before this one start first
      await this.declareBatch();
      return this.pipeline.done(refusal ? { path: entry.path, error: refusal } : { path: entry.path, list: 'ignored' });
    }
    this.inFlight.set(key, entry.size ?? 0);
    if (this.batching && !existing && entry.size !== null) {
      this.batch.push({ entry, key });
      if (this.batch.length >= DECLARE_BATCH) await this.declareBatch();
      return;
    }
    await this.declareBatch();
    await this.startFile(entry, key, existing, null);
  }

  /** Waits until no request is under way, and removes the keys declared ahead that no file took over. */
  async drain(): Promise<void> {
    await this.pipeline.drain();
    await this.removeDeclaredAhead();
  }

  /** Starts what is batched; waits for every upload; throws the first hard failure (after `drain`: also when feeding it failed). */
  async finish(): Promise<void> {
    try {
      await this.declareBatch();
      await this.pipeline.finish();
    } finally {
      await this.removeDeclaredAhead();
    }
  }

  /**
   * Declares the batch's keys in one request, ahead on the pipeline, then starts their files,
   * each waiting for that answer. One key alone is declared by its file, as without batches.
   * Declared is all or none: if the request fails, each file deletes its key (the answer may
   * have been lost after the keys were declared) and declares it itself, meeting (and
   * reporting) any refusal itself.
   */
  private async declareBatch(): Promise<void> {
    const batch = this.batch;
    this.batch = [];
    if (batch.length === 0 || this.pipeline.stopped) return;
    let declared: Promise<boolean> | null = null;
    if (batch.length > 1) {
      const keys = batch.map(({ key }) => key);
      let answered!: (ok: boolean) => void;
      declared = new Promise((resolve) => (answered = resolve));
      // its own key: behind the batch before it, beside the files still under way; not started
      // (a hard failure or a cancel came first), none of the batch's files start either
      const started = await this.pipeline.startAhead('\0declare', async () => {
        const ok = await this.api.initFiles(this.draftId, keys, this.options.signal).then(() => true, () => false);
        if (ok) for (const key of keys) this.declaredAhead.add(key);
        answered(ok);
      });
      if (!started) return;
    }
    for (const { entry, key } of batch) if (!(await this.startFile(entry, key, undefined, declared))) return;
  }

  private async startFile(entry: Entry, key: string, existing: InvenioFile | undefined, declared: Promise<boolean> | null): Promise<boolean> {
    return this.pipeline.startFile(entry, key, async () => {
      try {
        return await this.send(entry, key, existing, declared);
      } catch (error) {
        if (!isPerFileFailure(error, this.options.signal)) throw error;
        return { path: entry.path, error: error.message };
      } finally {
        this.inFlight.delete(key);
      }
    });
  }

  /** Removes the keys batches declared that no file took over (best effort: Ferry lists only committed files). */
  private async removeDeclaredAhead(): Promise<void> {
    for (const key of this.declaredAhead) {
      this.declaredAhead.delete(key);
      await this.api.deleteFile(this.draftId, key, detachedSignal(this.options.signal)).catch(() => undefined);
    }
  }

  /**
   * One file's requests: delete the key it replaces, declare it (unless its batch did: `declared`
   * true), PUT the bytes, commit.
   */
  private async send(entry: Entry, key: string, existing: InvenioFile | undefined, declared: Promise<boolean> | null): Promise<FileResult> {
    const complete = existing?.status === 'completed';
    const signal = this.options.signal;
    const bytes = await sizeAndMd5(entry, signal);
    try {
      if (complete && md5Of(existing?.checksum) === bytes.md5) return { path: entry.path, list: 'ignored' };
      const refusal = entry.size === null ? this.refusal(key, bytes.size) : null;
      if (refusal) return { path: entry.path, error: refusal };
      // a key is declared once per draft: a changed (or half-uploaded) file goes first
      if (existing) await this.api.deleteFile(this.draftId, key, signal);
      this.byKey.delete(key);
      const batchAnswer = declared ? await declared : null;
      // a batch whose answer was lost may still have declared the key: gone first (404 is fine)
      if (batchAnswer === false) await this.api.deleteFile(this.draftId, key, signal);
      if (batchAnswer !== true) await this.api.initFiles(this.draftId, [key], signal);
      // the key is this file's now: removed below if its upload fails
      this.declaredAhead.delete(key);
      let committed: InvenioFile;
      try {
        await this.api.putContent(this.draftId, key, bytes.open, bytes.size, signal);
        committed = await this.api.commitFile(this.draftId, key, signal);
      } catch (error) {
        // leave no pending key behind, or the next attempt could not declare it
        await this.api.deleteFile(this.draftId, key, detachedSignal(signal)).catch(() => undefined);
        throw error;
      }
      const stored = md5Of(committed.checksum);
      if (stored !== bytes.md5) {
        await this.api.deleteFile(this.draftId, key, detachedSignal(signal)).catch(() => undefined);
        throw new FerryError(502, 'upstream_error', `${this.limits.service} stored '${key}' with MD5 ${stored ?? 'none'}, but Ferry sent ${bytes.md5}; the file was removed again. Try again.`);
      }
      this.byKey.set(key, committed);
      // InvenioRDM's record of the committed file (`md5:<hex>`, size): the job verifies against it
      return { path: entry.path, list: complete ? 'updated' : 'created', stored: { hashes: stored ? { md5: stored } : {}, size: committed.size ?? null } };
    } finally {
      await bytes.dispose();
    }
  }

  /** Why the instance would refuse this file (its documented limits), counting the files in flight, or null. */
  private refusal(key: string, size: number): string | null {
    const { service, maxFiles, maxRecordBytes, allowEmptyFiles } = this.limits;
    if (size === 0 && !allowEmptyFiles) return `${service} does not accept empty (0-byte) files.`;
    const others = new Map([...this.byKey.values()].map((file) => [file.key, file.size ?? 0]));
    for (const [inFlightKey, inFlightSize] of this.inFlight) others.set(inFlightKey, inFlightSize);
    others.delete(key);
    if (maxFiles !== null && others.size >= maxFiles) return `A ${service} record holds at most ${maxFiles} files; this one is full.`;
    if (maxRecordBytes !== null && [...others.values()].reduce((sum, bytes) => sum + bytes, 0) + size > maxRecordBytes) {
      return `A ${service} record holds at most ${formatBytes(maxRecordBytes, { decimal: true })}; this file would exceed it.`;
    }
    return null;
  }
}

/** A record as the user sees it now: its draft when it has one, else the published record. */
async function resolve(api: InvenioApi, id: string, signal: AbortSignal): Promise<{ record: InvenioRecord; draft: boolean }> {
  const draft = await api.draft(id, signal);
  if (draft) return { record: draft, draft: true };
  return { record: await api.published(id, signal), draft: false };
}

/** Files whose bytes are committed; a pending one (an upload that never finished) has none to show. */
async function completedFiles(api: InvenioApi, view: { record: InvenioRecord; draft: boolean }, signal: AbortSignal): Promise<InvenioFile[]> {
  return (await api.files(view.record.id, view.draft, signal)).filter((file) => file.status === 'completed');
}

function titleOf(record: InvenioRecord): string {
  return record.metadata?.title?.trim() || `Untitled record ${record.id}`;
}

function recordNode(record: InvenioRecord): ResourceNode {
  return { kind: 'container', kind_name: 'folder', id: recordId(record.id), container: null, title: titleOf(record) };
}

function fileNode(record: string, file: InvenioFile): ResourceNode {
  return { kind: 'item', kind_name: 'file', id: fileId(record, file.key), container: recordId(record), title: file.key };
}

function findFile(record: InvenioRecord, files: InvenioFile[], key: string): InvenioFile {
  const file = files.find((f) => f.key === key);
  if (!file) throw notFound(`The InvenioRDM record '${titleOf(record)}' has no file '${key}'.`);
  return file;
}

function fileEntry(path: string, file: InvenioFile, open: Entry['open']): Entry {
  const md5 = md5Of(file.checksum);
  return { path, kind: 'file', size: file.size ?? null, mtime: null, hashes: md5 ? { md5 } : {}, open };
}

function folderEntry(path: string): Entry {
  return { path, kind: 'folder', size: null, mtime: null, hashes: {}, open: () => Promise.reject(new Error(`${path} is a folder`)) };
}
