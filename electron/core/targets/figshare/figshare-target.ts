import type { Readable } from 'node:stream';
import { FerryError, badRequest, notFound, throwIfAborted } from '../../errors.js';
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
  type StoredRecord,
  type WriteOutcome,
  singleEntry,
} from '../../target.js';
import { isPerFileFailure } from '../../remote/file-failure.js';
import { FLAT_RECORD_NAMING_RULES, flatName, writeBelowOneTopFolder } from '../../remote/flat-record.js';
import { unpackedRecord } from '../../remote/unpacked-record.js';
import { sizeAndMd5 } from '../../remote/spool.js';
import { verifyAdvertised } from '../../remote/advertised-fixity.js';
import { removedOnFailure } from '../../remote/new-record.js';
import { detachedSignal } from '../../remote/retry-notice.js';
import { OutcomePipeline, type FileResult } from '../../remote/outcome-pipeline.js';
import { ONE_AT_A_TIME } from '../../jobs/ordered-pipeline.js';
import { FigshareApi, type ArticleRef, type FigshareApiOptions, type FigshareArticle, type FigshareFile } from './api.js';
import { searchOwnArticles } from './search.js';
import { figshareFields, readFigshareMetadata, type FigshareFields } from '../../metadata/figshare.js';
import type { Written } from '../../metadata/model.js';

/**
 * Ids: project `p<id>`; item `a<id>`, or `p<project>_a<id>` for an item reached through its
 * project; file `f<item>_<file>`, or `p<project>_f<item>_<file>`. An item in a project
 * carries the project, because a project shared with the token's account is only readable
 * through the project's routes (`/account/projects/<p>/articles/<id>`), never through the
 * owner's `/account/articles/<id>`. Digits after each prefix, so never a '.'.
 */
type FigshareId = { kind: 'project'; id: number } | { kind: 'article'; article: ArticleRef } | { kind: 'file'; article: ArticleRef; fileId: number };

export function parseFigshareId(id: string): FigshareId {
  let m: RegExpExecArray | null;
  if ((m = /^p(\d+)$/.exec(id))) return { kind: 'project', id: Number(m[1]) };
  if ((m = /^(?:p(\d+)_)?a(\d+)$/.exec(id))) return { kind: 'article', article: ref(m[2], m[1]) };
  if ((m = /^(?:p(\d+)_)?f(\d+)_(\d+)$/.exec(id))) return { kind: 'file', article: ref(m[2], m[1]), fileId: Number(m[3]) };
  // Ids are opaque to clients: one this target could never have made simply names nothing (404).
  throw notFound(`There is no figshare resource '${id}'; list the target's resources to find one.`);
}

const ref = (article: string | undefined, project: string | undefined): ArticleRef => ({ id: Number(article), project: project === undefined ? null : Number(project) });
const projectId = (id: number) => `p${id}`;
const inProject = (article: ArticleRef) => (article.project === null ? '' : `p${article.project}_`);
const articleId = (article: ArticleRef) => `${inProject(article)}a${article.id}`;
const fileId = (article: ArticleRef, file: number) => `${inProject(article)}f${article.id}_${file}`;

/** figshare items hold files, not folders: nested paths are flattened into file names (flat-record.ts). */
export { FOLDER_SEPARATOR } from '../../remote/flat-record.js';

export type FigshareTargetOptions = FigshareApiOptions;

/**
 * figshare: projects and articles ("items") are containers — articles in a project sit under
 * it, the others at the top level — and files are the items. Hashes: figshare's own
 * `computed_md5`, which stays empty until figshare has processed an upload; until then a
 * file has no md5 and says `extra.md5_status: "pending"`.
 *
 * A top-level upload makes one new private article (not a project: an article is what
 * figshare publishes and cites, and needs nothing but a title); writing into a project makes
 * or reuses one article per top folder. Nothing is ever published by Ferry.
 */
export class FigshareTarget implements Target {
  readonly namingRules = FLAT_RECORD_NAMING_RULES;

  /** A project holds items, one per top folder written into it (write()). */
  recordPerTopFolder(containerId: string): boolean {
    return parseFigshareId(containerId).kind === 'project';
  }
  readonly info: TargetInfo = {
    name: 'figshare',
    readable_name: 'figshare',
    supported_actions: fullActions(true),
    supported_hash_algorithms: ['md5'],
    credential: 'remote',
    keepsMetadata: true,
    // figshare asks for at most one request a second to its hosts together ("do not make more
    // than one request per second"; figshare.md Limits), which the rate budget keeps: a second
    // file in flight would only wait in that queue, so a write sends one file at a time
    concurrency: ONE_AT_A_TIME,
  };

  private readonly api: FigshareApi;

  constructor(options: FigshareTargetOptions) {
    this.api = new FigshareApi(options);
  }

  async *list(ctx: TargetContext, scope?: ListScope): AsyncIterable<ResourceNode> {
    const { token, signal } = ctx;
    if (scope?.container) {
      const parsed = parseFigshareId(scope.container);
      if (parsed.kind === 'project') {
        for await (const article of this.api.projectArticles(token, parsed.id, signal)) yield articleNode({ id: article.id, project: parsed.id }, article);
      } else if (parsed.kind === 'article') {
        for await (const file of this.api.files(token, parsed.article, signal)) yield fileNode(parsed.article, file);
      }
      return;
    }
    const recursive = scope === undefined;
    const inProjects = new Set<number>();
    for await (const project of this.api.projects(token, signal)) {
      yield projectNode(project.id, project.title);
      for await (const article of this.api.projectArticles(token, project.id, signal)) {
        inProjects.add(article.id);
        if (!recursive) continue;
        const at = { id: article.id, project: project.id };
        yield articleNode(at, article);
        for await (const file of this.api.files(token, at, signal)) yield fileNode(at, file);
      }
    }
    // /account/articles may include project articles too: list each article once.
    for await (const article of this.api.articles(token, signal)) {
      if (inProjects.has(article.id)) continue;
      const at = { id: article.id, project: null };
      yield articleNode(at, article);
      if (recursive) for await (const file of this.api.files(token, at, signal)) yield fileNode(at, file);
    }
  }

  /** figshare's own index of the account's items (search.ts); answers items, not files. */
  search(ctx: TargetContext, query: SearchQuery): Promise<SearchPage> {
    return searchOwnArticles(this.api, ctx, query, articleNode);
  }

  /** An item's title, description, authors, keywords, licence, dates, references and funding (metadata/figshare.ts); null for projects and files. */
  async describe(ctx: TargetContext, id: string): Promise<DescriptiveMetadata | null> {
    const parsed = parseFigshareId(id);
    if (parsed.kind !== 'article') return null;
    return readFigshareMetadata((await this.api.article(ctx.token, parsed.article, ctx.signal)) as unknown as Record<string, unknown>);
  }

  async detail(ctx: TargetContext, id: string): Promise<ResourceInfo> {
    const parsed = parseFigshareId(id);
    if (parsed.kind === 'project') {
      const project = await this.api.project(ctx.token, parsed.id, ctx.signal);
      return {
        ...projectNode(project.id, project.title),
        date_created: normalizeTimestamp(project.created_date),
        date_modified: normalizeTimestamp(project.modified_date),
        hashes: {},
        extra: { provider: 'figshare', figshare_url: project.figshare_url ?? null, quota: project.quota ?? null, used_quota: project.used_quota ?? null },
      };
    }
    if (parsed.kind === 'article') {
      const article = await this.api.article(ctx.token, parsed.article, ctx.signal);
      const project = parsed.article.project ?? (await this.projectOf(ctx, article.id));
      return {
        ...articleNode(parsed.article, article),
        container: project === null ? null : projectId(project),
        date_created: normalizeTimestamp(article.created_date),
        date_modified: normalizeTimestamp(article.modified_date),
        hashes: {},
        extra: {
          provider: 'figshare',
          status: article.status ?? null,
          is_public: article.is_public ?? false,
          defined_type: article.defined_type_name ?? null,
          doi: article.doi || null,
          version: article.version ?? null,
          size: article.size ?? null,
          file_count: article.files?.length ?? null,
          figshare_url: article.figshare_url ?? null,
        },
      };
    }
    const file = await this.api.file(ctx.token, parsed.article, parsed.fileId, ctx.signal);
    const md5 = computedMd5(file);
    return {
      ...fileNode(parsed.article, file),
      // figshare keeps dates per item only.
      date_created: null,
      date_modified: null,
      hashes: md5 ? { md5 } : {},
      extra: {
        provider: 'figshare',
        size: file.size,
        status: file.status ?? null,
        md5_status: md5 ? 'computed' : 'pending',
        supplied_md5: file.supplied_md5 || null,
        is_link_only: file.is_link_only ?? false,
        materialized_path: `/${file.name}`,
        article_id: parsed.article.id,
      },
    };
  }

  /** The project an article sits in (figshare's article JSON does not always say). */
  private async projectOf(ctx: TargetContext, article: number): Promise<number | null> {
    for await (const project of this.api.projects(ctx.token, ctx.signal)) {
      for await (const candidate of this.api.projectArticles(ctx.token, project.id, ctx.signal)) {
        if (candidate.id === article) return project.id;
      }
    }
    return null;
  }

  async read(ctx: TargetContext, id: string): Promise<ReadResult> {
    const parsed = parseFigshareId(id);
    const open = (file: FigshareFile) => async () => {
      const md5 = computedMd5(file);
      return verifyAdvertised(await this.api.download(ctx.token, file, ctx.signal), { hashes: md5 ? { md5 } : {}, size: file.size }, { service: 'figshare', path: file.name });
    };
    if (parsed.kind === 'file') {
      const file = await this.api.file(ctx.token, parsed.article, parsed.fileId, ctx.signal);
      const entry = fileEntry(file.name, file, open(file));
      return { title: file.name, root: fileNode(parsed.article, file), entries: singleEntry(entry) };
    }
    const api = this.api;
    const unpacked = { target: this.info.name, service: 'figshare', signal: ctx.signal };
    // an item under `folder`, as the tree a Ferry write kept in it (remote/unpacked-record.ts)
    const articleEntries = (folder: string, at: ArticleRef) => {
      async function* stored(): AsyncIterable<Entry> {
        yield folderEntry(folder);
        for await (const file of api.files(ctx.token, at, ctx.signal)) {
          if (!file.is_link_only) yield fileEntry(`${folder}/${safeSegment(file.name)}`, file, open(file));
        }
      }
      return unpackedRecord(folder, stored(), unpacked);
    };
    if (parsed.kind === 'article') {
      const article = await this.api.article(ctx.token, parsed.article, ctx.signal);
      return { title: article.title, root: articleNode(parsed.article, article), entries: articleEntries(article.title, parsed.article) };
    }
    const project = await this.api.project(ctx.token, parsed.id, ctx.signal);
    const title = project.title;
    async function* entries(): AsyncIterable<Entry> {
      yield folderEntry(title);
      const used = new Set<string>();
      for await (const article of api.projectArticles(ctx.token, project.id, ctx.signal)) {
        let name = safeSegment(article.title);
        for (let n = 2; used.has(name); n++) name = `${safeSegment(article.title)} (${n})`;
        used.add(name);
        yield* articleEntries(`${title}/${name}`, { id: article.id, project: project.id });
      }
    }
    return { title, root: projectNode(project.id, project.title), entries: entries() };
  }

  async write(ctx: TargetContext, containerId: string | null, entries: AsyncIterable<Entry>, options: WriteOptions): Promise<WriteOutcome> {
    const outcome: WriteOutcome = { created: [], updated: [], ignored: [], fileErrors: [] };
    if (containerId === null) return this.writeNewArticle(ctx, entries, options, outcome);
    const parsed = parseFigshareId(containerId);
    if (parsed.kind === 'file') throw badRequest('A figshare file is not a container; upload into its item (article) instead.');
    const writes = new OutcomePipeline(this.info.concurrency, outcome, options);
    try {
      if (parsed.kind === 'article') {
        const article = await this.openArticle(ctx, parsed.article);
        for await (const entry of entries) {
          throwIfAborted(options.signal);
          if (writes.stopped) break;
          if (entry.kind === 'file') await this.uploadOne(ctx, article, entry, entry.path, options, writes, outcome);
        }
      } else {
        await this.writeIntoProject(ctx, parsed.id, entries, options, writes, outcome);
      }
    } finally {
      // never return (or throw) while a request is under way
      await writes.drain();
    }
    await writes.finish();
    return outcome;
  }

  /** Into a project: each top folder becomes (or joins) an item of that title. */
  private async writeIntoProject(ctx: TargetContext, projectId: number, entries: AsyncIterable<Entry>, options: WriteOptions, writes: OutcomePipeline, outcome: WriteOutcome): Promise<void> {
    await this.api.project(ctx.token, projectId, ctx.signal);
    const articles = new Map<string, ArticleFiles>();
    for await (const article of this.api.projectArticles(ctx.token, projectId, ctx.signal)) {
      if (!articles.has(article.title)) articles.set(article.title, { id: article.id, project: projectId, files: null });
    }
    for await (const entry of entries) {
      throwIfAborted(options.signal);
      if (writes.stopped) break;
      const [head, ...rest] = entry.path.split('/');
      if (entry.kind === 'folder' && rest.length > 0) continue;
      if (entry.kind === 'file' && rest.length === 0) {
        writes.done({ path: entry.path, error: 'figshare keeps files in items, not directly in a project: put files in a folder, which becomes an item.' });
        continue;
      }
      let article = articles.get(head as string);
      if (!article) {
        const id = await this.api.createArticle(ctx.token, newArticleFields(head as string, options), projectId, ctx.signal);
        article = { id, project: projectId, files: [] };
        articles.set(head as string, article);
      }
      if (entry.kind === 'file') await this.uploadOne(ctx, article, entry, rest.join('/'), options, writes, outcome);
    }
  }

  /** A new private item, deleted again if the upload fails or is cancelled, kept for a paused or stopped job (new-record.ts). */
  private async writeNewArticle(ctx: TargetContext, entries: AsyncIterable<Entry>, options: WriteOptions, outcome: WriteOutcome): Promise<WriteOutcome> {
    let title = '';
    const writes = new OutcomePipeline(this.info.concurrency, outcome, options);
    const article = await removedOnFailure((made) =>
      writeBelowOneTopFolder<ArticleFiles>(
        this,
        entries,
        options,
        async (top) => {
          title = await this.distinctTitle(ctx, top);
          const described = await this.describedFields(ctx, options);
          if (described.notes.length) outcome.notes = [...(outcome.notes ?? []), ...described.notes];
          const created: ArticleFiles = { id: await this.api.createArticle(ctx.token, { ...newArticleFields(title, options), ...described.fields }, null, ctx.signal), project: null, files: [] };
          made({
            label: `the new figshare item '${title}' (id ${created.id})`,
            howToRemove: `delete it in figshare under My data (https://figshare.com/account/articles/${created.id})`,
            remove: () => this.api.deleteArticle(ctx.token, created, detachedSignal(ctx.signal)),
          });
          options.onNewResource?.({ id: articleId(created), title });
          return created;
        },
        (made, entry, relativePath) => this.uploadOne(ctx, made, entry, relativePath, options, writes, outcome),
      )
        // no request is under way when the item is deleted again
        .finally(() => writes.drain())
        .then(async (written) => {
          await writes.finish();
          return written;
        }),
      options.signal,
    );
    outcome.newResource = { id: articleId(article), title };
    return outcome;
  }

  /** The source's metadata as item fields; the account's licences are read only when there is a licence to match. */
  private async describedFields(ctx: TargetContext, options: WriteOptions): Promise<Written<FigshareFields>> {
    const licenses = options.metadata?.license ? await this.api.licenses(ctx.token, ctx.signal) : [];
    return figshareFields(options.metadata, licenses);
  }

  private async distinctTitle(ctx: TargetContext, wanted: string): Promise<string> {
    const base = fitTitle(wanted);
    const taken = new Set<string>();
    for await (const article of this.api.articles(ctx.token, ctx.signal)) taken.add(article.title);
    let title = base;
    for (let n = 2; taken.has(title); n++) title = `${base} (${n})`;
    return title;
  }

  private async openArticle(ctx: TargetContext, article: ArticleRef): Promise<ArticleFiles> {
    await this.api.article(ctx.token, article, ctx.signal);
    return { ...article, files: null };
  }

  /**
   * figshare's record of an uploaded file for the job to verify against: its `computed_md5`
   * and size, read up to FIGSHARE_MD5_READS times (figshare computes the MD5 after the upload,
   * asynchronously; figshare.md). Still empty then: not verifiable yet, and the job says so.
   * `supplied_md5` is only what Ferry sent, never a check.
   */
  private async storedRecord(token: string, articleId: number, fileId: number, signal: AbortSignal): Promise<StoredRecord> {
    for (let read = 0; read < FIGSHARE_MD5_READS; read++) {
      let detail: FigshareFile;
      try {
        detail = await this.api.fileDetail(token, articleId, fileId, signal);
      } catch (error) {
        if (!isPerFileFailure(error, signal)) throw error;
        return { unverifiable: `figshare's record of the file could not be read (${error.message.replace(/\.$/, '')}).` };
      }
      const md5 = computedMd5(detail);
      if (md5) return { hashes: { md5 }, size: typeof detail.size === 'number' ? detail.size : null };
    }
    return { unverifiable: 'figshare computes its MD5 after the upload and had not done so yet; check the file in figshare later.' };
  }

  /**
   * One file: its name settled and its item's files known (in entry order), then its upload
   * on the write pipeline, one at a time under the same name in the same item.
   */
  private async uploadOne(ctx: TargetContext, article: ArticleFiles, entry: Entry, relativePath: string, options: WriteOptions, writes: OutcomePipeline, outcome: WriteOutcome): Promise<void> {
    const name = flatName(relativePath, outcome, 'figshare');
    if (article.files === null) {
      const files: FigshareFile[] = [];
      for await (const file of this.api.files(ctx.token, article, options.signal)) files.push(file);
      article.files = files;
    }
    const files = article.files;
    await writes.startFile(entry, `${article.id}/${name}`, () => this.uploadFile(ctx, { ...article, files }, entry, name, options));
  }

  /**
   * One file through figshare's multi-part protocol. `update` uploads the new file first
   * and only then deletes the old one, so a failure leaves the old bytes in place; a failed
   * upload deletes its own half-made file.
   */
  private async uploadFile(ctx: TargetContext, article: ArticleRef & { files: FigshareFile[] }, entry: Entry, name: string, options: WriteOptions): Promise<FileResult> {
    const { token } = ctx;
    const signal = options.signal;
    // A file still waiting for its bytes is an upload a stopped run began, not a file that is there.
    const existing = article.files.find((file) => file.name === name && !waitingForBytes(file));
    let unfinished = article.files.find((file) => file.name === name && waitingForBytes(file)) ?? null;
    if (existing && options.duplicateAction === 'ignore') return { path: entry.path, list: 'ignored' };
    const bytes = await sizeAndMd5(entry, signal);
    let started: FigshareFile | null = null;
    try {
      // Until figshare has computed its own MD5, the one Ferry supplied at upload stands in.
      if (existing && (computedMd5(existing) || existing.supplied_md5?.toLowerCase()) === bytes.md5) return { path: entry.path, list: 'ignored' };
      if (unfinished && (unfinished.size !== bytes.size || unfinished.supplied_md5?.toLowerCase() !== bytes.md5)) {
        // begun for other bytes (the source changed since): of no use
        await this.api.deleteFile(token, article.id, unfinished.id, signal);
        article.files.splice(article.files.indexOf(unfinished), 1);
        unfinished = null;
      }
      // the same name, size and MD5: carried on with, sending only the parts figshare lacks
      started = unfinished
        ? await this.api.file(token, article, unfinished.id, signal)
        : await this.initiate(token, article, { name, size: bytes.size, md5: bytes.md5 }, signal);
      if (unfinished) article.files.splice(article.files.indexOf(unfinished), 1);
      if (started.upload_url) await this.sendParts(started.upload_url, await bytes.open(), signal);
      await this.api.completeUpload(token, article.id, started.id, signal);
      const completed = started;
      started = null;
      if (existing) {
        await this.api.deleteFile(token, article.id, existing.id, signal);
        article.files.splice(article.files.indexOf(existing), 1, { ...completed, supplied_md5: bytes.md5, computed_md5: '' });
      } else {
        article.files.push({ ...completed, supplied_md5: bytes.md5, computed_md5: '' });
      }
      // read once the old file is gone, so a cancel while waiting for figshare never leaves both
      return { path: entry.path, list: existing ? 'updated' : 'created', stored: await this.storedRecord(token, article.id, completed.id, signal) };
    } catch (error) {
      // the job's signal may have fired (a cancel): the half-uploaded copy goes all the same
      const removed = started ? await this.api.deleteFile(token, article.id, started.id, detachedSignal(signal)).then(() => true, () => false) : true;
      if (!isPerFileFailure(error, signal)) throw error;
      const leftover = removed ? '' : ` Its half-uploaded copy could not be removed from the item; delete '${name}' there in figshare.`;
      return { path: entry.path, error: error.message + leftover };
    } finally {
      await bytes.dispose();
    }
  }

  /**
   * Step 1, "initiate" (a POST that makes the file record). When its answer is lost (a broken
   * connection, a gateway's 5xx) it may have landed anyway: then the article holds a new
   * file of this name, size and MD5 still waiting for its bytes, which is this upload's and
   * is carried on with (and deleted if the upload then fails), instead of being left behind.
   */
  private async initiate(token: string, article: ArticleFiles, file: { name: string; size: number; md5: string }, signal: AbortSignal): Promise<FigshareFile> {
    try {
      return await this.api.initiateUpload(token, article.id, file, signal);
    } catch (error) {
      if (!(error instanceof FerryError) || error.status < 500 || signal.aborted) throw error;
      const known = new Set((article.files ?? []).map((f) => f.id));
      for await (const listed of this.api.files(token, article, signal)) {
        if (!known.has(listed.id) && waitingForBytes(listed) && listed.name === file.name && listed.size === file.size && listed.supplied_md5?.toLowerCase() === file.md5) {
          return this.api.file(token, article, listed.id, signal);
        }
      }
      throw error;
    }
  }

  /**
   * Reads the stream once, in order, cutting it into the parts the upload host laid out; a
   * part the host already has (COMPLETE: a resumed upload) is read past, not sent again.
   */
  private async sendParts(uploadUrl: string, stream: Readable, signal: AbortSignal): Promise<void> {
    const session = await this.api.uploadSession(uploadUrl, signal);
    const parts = [...session.parts].sort((a, b) => a.startOffset - b.startOffset);
    const reader = new ExactReader(stream);
    try {
      for (const part of parts) {
        throwIfAborted(signal);
        const bytes = await reader.read(part.endOffset - part.startOffset + 1);
        if (part.status !== 'COMPLETE') await this.api.putPart(uploadUrl, part.partNo, bytes, signal);
      }
    } finally {
      stream.destroy();
    }
  }
}

/**
 * An item being written into. Uploads use the owner's `/account/articles/<id>/files` routes
 * whatever `project` says: figshare has no project-scoped upload routes (docs/targets/figshare.md).
 */
interface ArticleFiles extends ArticleRef {
  /** loaded on first use */
  files: FigshareFile[] | null;
}

/** Pulls exactly n bytes at a time from a stream, holding at most one part in memory. */
class ExactReader {
  private readonly iterator: AsyncIterator<Buffer>;
  private pending: Buffer = Buffer.alloc(0);

  constructor(stream: Readable) {
    this.iterator = stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  }

  async read(n: number): Promise<Buffer> {
    const chunks = [this.pending];
    let have = this.pending.length;
    while (have < n) {
      const next = await this.iterator.next();
      if (next.done) throw new FerryError(400, 'bad_request', 'The file ended before its announced size; it changed while being uploaded.');
      chunks.push(next.value);
      have += next.value.length;
    }
    const all = Buffer.concat(chunks, have);
    this.pending = all.subarray(n);
    return all.subarray(0, n);
  }
}

/** A file figshare made at "initiate" and still takes parts for: no bytes of it are complete yet. */
function waitingForBytes(file: FigshareFile): boolean {
  return file.status === 'created' || Boolean(file.upload_url);
}

/** reads of a new file's detail while waiting for figshare's computed_md5 (its rate budget is ~1 request a second) */
const FIGSHARE_MD5_READS = 2;

function computedMd5(file: FigshareFile): string | null {
  const value = file.computed_md5?.trim().toLowerCase();
  return value && /^[0-9a-f]{32}$/.test(value) ? value : null;
}

/** figshare titles are 3–1000 characters. */
function fitTitle(title: string): string {
  const trimmed = title.trim().slice(0, 990);
  return trimmed.length >= 3 ? trimmed : `${trimmed || 'Untitled'} (dataset)`;
}

function newArticleFields(title: string, options: WriteOptions) {
  return { title: fitTitle(title), description: `Uploaded with Ferry (${options.jobLabel}).`, defined_type: 'dataset' };
}

/** A name used as one path segment: '/' would make a folder that is not there. */
function safeSegment(name: string): string {
  return name.replace(/\//g, '_') || '_';
}

function projectNode(id: number, title: string): ResourceNode {
  return { kind: 'container', kind_name: 'folder', id: projectId(id), container: null, title };
}

function articleNode(at: ArticleRef, article: FigshareArticle): ResourceNode {
  return { kind: 'container', kind_name: 'folder', id: articleId(at), container: at.project === null ? null : projectId(at.project), title: article.title };
}

function fileNode(article: ArticleRef, file: FigshareFile): ResourceNode {
  return { kind: 'item', kind_name: 'file', id: fileId(article, file.id), container: articleId(article), title: file.name };
}

function fileEntry(path: string, file: FigshareFile, open: Entry['open']): Entry {
  const md5 = computedMd5(file);
  return { path, kind: 'file', size: file.size, mtime: null, hashes: md5 ? { md5 } : {}, open };
}

function folderEntry(path: string): Entry {
  return { path, kind: 'folder', size: null, mtime: null, hashes: {}, open: () => Promise.reject(notFound(`${path} is a folder`)) };
}
