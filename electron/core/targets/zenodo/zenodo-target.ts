import { FerryError, badRequest, conflict, throwIfAborted } from '../../errors.js';
import { formatBytes } from '../../../../shared/format.js';
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
  type Target,
  type TargetContext,
  type TargetInfo,
  type WriteOptions,
  type WriteOutcome,
} from '../../target.js';
import { ZenodoApi, normaliseMd5, type Deposition, type DepositionFile, type ZenodoApiOptions } from './api.js';
import { depositionId, fileId, parseZenodoId } from './ids.js';
import { searchDepositions } from './search.js';
import { isPerFileFailure } from '../../remote/file-failure.js';
import { FLAT_RECORD_NAMING_RULES, flatName, writeBelowOneTopFolder } from '../../remote/flat-record.js';
import { depositMetadata, escapeHtml } from './metadata.js';
import { sizeAndMd5 } from '../../remote/spool.js';
import { verifyAdvertised } from '../../remote/advertised-fixity.js';
import { removedOnFailure } from '../../remote/new-record.js';

export interface ZenodoTargetOptions extends ZenodoApiOptions {
  /** files per record (Zenodo: 100) */
  maxFiles?: number;
  /** bytes per record and per file (Zenodo: 50 GB) */
  maxRecordBytes?: number;
}

/** Zenodo has no folders: nested paths are flattened into file names (flat-record.ts). */
export { FOLDER_SEPARATOR } from '../../remote/flat-record.js';

const ZENODO_MAX_FILES = 100;
const ZENODO_MAX_BYTES = 50 * 10 ** 9;

/**
 * Zenodo through its legacy deposit API (still served after the 2023 InvenioRDM move):
 * depositions (drafts and published) are the top-level containers, their files the items.
 *
 * Published records: their files are immutable on Zenodo. Ferry refuses a write into one
 * with a 409 that says so instead of silently opening a new version: a new version is a
 * public act (it will carry a new DOI once published) the owner should choose in Zenodo.
 * Drafts, including a new-version draft made there, accept uploads.
 */
export class ZenodoTarget implements Target {
  readonly namingRules = FLAT_RECORD_NAMING_RULES;
  readonly info: TargetInfo = {
    name: 'zenodo',
    readable_name: 'Zenodo',
    supported_actions: fullActions(true),
    supported_hash_algorithms: ['md5'],
    credential: 'remote',
    keepsMetadata: true,
  };

  private readonly api: ZenodoApi;
  private readonly maxFiles: number;
  private readonly maxRecordBytes: number;

  constructor(options: ZenodoTargetOptions) {
    this.api = new ZenodoApi(options);
    this.maxFiles = options.maxFiles ?? ZENODO_MAX_FILES;
    this.maxRecordBytes = options.maxRecordBytes ?? ZENODO_MAX_BYTES;
  }

  async *list(ctx: TargetContext, scope?: ListScope): AsyncIterable<ResourceNode> {
    if (scope?.container) {
      const parsed = parseZenodoId(scope.container);
      if (parsed.kind === 'file') return;
      const deposition = await this.api.deposition(ctx.token, parsed.depositionId, ctx.signal);
      for (const file of deposition.files ?? []) yield fileNode(deposition, file);
      return;
    }
    for await (const deposition of this.api.depositions(ctx.token, ctx.signal)) {
      yield depositionNode(deposition);
      if (scope === undefined) for (const file of deposition.files ?? []) yield fileNode(deposition, file);
    }
  }

  /** Zenodo's own index of the user's depositions (search.ts); answers depositions, not files. */
  search(ctx: TargetContext, query: SearchQuery): Promise<SearchPage> {
    return searchDepositions(this.api, ctx, query, depositionNode);
  }

  async detail(ctx: TargetContext, id: string): Promise<ResourceInfo> {
    const parsed = parseZenodoId(id);
    const deposition = await this.api.deposition(ctx.token, parsed.depositionId, ctx.signal);
    if (parsed.kind === 'deposition') {
      const files = deposition.files ?? [];
      return {
        ...depositionNode(deposition),
        date_created: normalizeTimestamp(deposition.created),
        date_modified: normalizeTimestamp(deposition.modified),
        hashes: {},
        extra: {
          provider: 'zenodo',
          state: deposition.state,
          submitted: deposition.submitted,
          published: isPublished(deposition),
          record_id: deposition.record_id ?? deposition.id,
          conceptrecid: deposition.conceptrecid ?? null,
          doi: deposition.doi ?? null,
          upload_type: deposition.metadata?.upload_type ?? null,
          file_count: files.length,
          size: files.reduce((sum, file) => sum + file.filesize, 0),
          html_url: deposition.links.html ?? null,
        },
      };
    }
    const file = findFile(deposition, parsed.key);
    const md5 = normaliseMd5(file.checksum);
    return {
      ...fileNode(deposition, file),
      // The legacy file objects carry no dates of their own.
      date_created: null,
      date_modified: null,
      hashes: md5 ? { md5 } : {},
      extra: {
        provider: 'zenodo',
        size: file.filesize,
        key: file.filename,
        file_id: file.id,
        materialized_path: `/${file.filename}`,
        deposition_id: deposition.id,
        published: isPublished(deposition),
      },
    };
  }

  async read(ctx: TargetContext, id: string): Promise<ReadResult> {
    const parsed = parseZenodoId(id);
    const deposition = await this.api.deposition(ctx.token, parsed.depositionId, ctx.signal);
    const published = isPublished(deposition);
    const openFile = (file: DepositionFile) => async () =>
      verifyAdvertised(await this.api.download(ctx.token, file, deposition.id, published, ctx.signal), advertisedOf(file), { service: 'Zenodo', path: file.filename });
    if (parsed.kind === 'file') {
      const file = findFile(deposition, parsed.key);
      const root = fileNode(deposition, file);
      const name = file.filename.split('/').pop() as string;
      return { title: name, root, entries: single(fileEntry(name, file, openFile(file))) };
    }
    const root = depositionNode(deposition);
    const title = root.title;
    // Streamed one file at a time from the per-file content links, never Zenodo's
    // files-archive (it refuses records over 300 MB).
    async function* entries(): AsyncIterable<Entry> {
      yield folderEntry(title);
      const seen = new Set<string>();
      for (const file of deposition.files ?? []) {
        const parts = file.filename.split('/');
        for (let i = 1; i < parts.length; i++) {
          const folder = `${title}/${parts.slice(0, i).join('/')}`;
          if (!seen.has(folder)) {
            seen.add(folder);
            yield folderEntry(folder);
          }
        }
        yield fileEntry(`${title}/${file.filename}`, file, openFile(file));
      }
    }
    return { title, root, entries: entries() };
  }

  async write(ctx: TargetContext, containerId: string | null, entries: AsyncIterable<Entry>, options: WriteOptions): Promise<WriteOutcome> {
    const outcome: WriteOutcome = { created: [], updated: [], ignored: [], fileErrors: [] };
    if (containerId === null) return this.writeNewDeposition(ctx, entries, options, outcome);
    const parsed = parseZenodoId(containerId);
    if (parsed.kind === 'file') throw badRequest('A Zenodo file is not a container; upload into its deposition instead.');
    const deposition = await this.api.deposition(ctx.token, parsed.depositionId, ctx.signal);
    refuseIfPublished(deposition);
    for await (const entry of entries) {
      throwIfAborted(options.signal);
      if (entry.kind === 'folder') continue;
      await this.uploadOne(ctx, deposition, entry, entry.path, options, outcome);
    }
    return outcome;
  }

  /** A new draft deposition, removed again if the upload fails (new-record.ts). */
  private async writeNewDeposition(ctx: TargetContext, entries: AsyncIterable<Entry>, options: WriteOptions, outcome: WriteOutcome): Promise<WriteOutcome> {
    const deposition = await removedOnFailure((made) =>
      writeBelowOneTopFolder(
        this,
        entries,
        options,
        async (top) => {
          const created = await this.createDeposition(ctx, top, options, outcome);
          made({
            label: `the new Zenodo deposition '${titleOf(created)}' (id ${created.id})`,
            howToRemove: `delete the draft at ${created.links.html ?? `the Zenodo upload page of deposition ${created.id}`}`,
            remove: () => this.api.deleteDeposition(ctx.token, created.id),
          });
          return created;
        },
        (made, entry, relativePath) => this.uploadOne(ctx, made, entry, relativePath, options, outcome),
      ),
    );
    outcome.newResource = { id: depositionId(deposition.id), title: titleOf(deposition) };
    return outcome;
  }

  private async createDeposition(ctx: TargetContext, wanted: string, options: WriteOptions, outcome: WriteOutcome): Promise<Deposition> {
    const taken = new Set<string>();
    for await (const existing of this.api.depositions(ctx.token, ctx.signal)) taken.add(titleOf(existing));
    let title = wanted;
    for (let n = 2; taken.has(title); n++) title = `${wanted} (${n})`;
    // A draft needs no metadata; these are the fields Zenodo will ask for first, so the
    // draft reads sensibly in its web form. The source's descriptive metadata (a transfer's)
    // fills what it can (metadata.ts); publishing is left to the owner.
    const { fields, notes } = depositMetadata(options.metadata);
    if (notes.length > 0) outcome.notes = [...(outcome.notes ?? []), ...notes];
    return this.api.createDeposition(
      ctx.token,
      { title, upload_type: 'dataset', description: `<p>Deposited with Ferry (${escapeHtml(options.jobLabel)}).</p>`, ...fields },
      ctx.signal,
    );
  }

  /** One file into a draft's bucket; remote refusals become per-file errors. */
  private async uploadOne(ctx: TargetContext, deposition: Deposition, entry: Entry, relativePath: string, options: WriteOptions, outcome: WriteOutcome): Promise<void> {
    const key = flatName(relativePath);
    const files = (deposition.files ??= []);
    const existing = files.find((file) => file.filename === key);
    const fail = (error: string) => outcome.fileErrors.push({ path: entry.path, error });

    if (existing && options.duplicateAction === 'ignore') {
      outcome.ignored.push(entry.path);
      return;
    }
    if (entry.size === 0) return void fail('Zenodo does not accept empty (0-byte) files.');
    if (!existing && files.length >= this.maxFiles) {
      return void fail(`A Zenodo record holds at most ${this.maxFiles} files; this one is full.`);
    }
    if (!deposition.links.bucket) return void fail('Zenodo gave this deposition no file bucket; it cannot take files now.');

    const bytes = await sizeAndMd5(entry, options.signal);
    try {
      if (bytes.size === 0) return void fail('Zenodo does not accept empty (0-byte) files.');
      if (existing && normaliseMd5(existing.checksum) === bytes.md5) {
        outcome.ignored.push(entry.path);
        return;
      }
      const used = files.reduce((sum, file) => sum + (file === existing ? 0 : file.filesize), 0);
      if (used + bytes.size > this.maxRecordBytes) {
        return void fail(`A Zenodo record holds at most ${formatBytes(this.maxRecordBytes, { decimal: true })}; this file would exceed it.`);
      }
      const stored = await this.api.putIntoBucket(ctx.token, deposition.links.bucket, key, bytes.open, bytes.size, options.signal);
      const record: DepositionFile = { id: existing?.id ?? key, filename: key, filesize: stored.size ?? bytes.size, checksum: stored.checksum ?? bytes.md5, links: existing?.links ?? {} };
      if (existing) {
        Object.assign(existing, record);
        outcome.updated.push(entry.path);
      } else {
        files.push(record);
        outcome.created.push(entry.path);
      }
    } catch (error) {
      if (!isPerFileFailure(error, options.signal)) throw error;
      fail(error.message);
    } finally {
      await bytes.dispose();
    }
  }
}

function advertisedOf(file: DepositionFile): { hashes: Record<string, string>; size: number } {
  const md5 = normaliseMd5(file.checksum);
  return { hashes: md5 ? { md5 } : {}, size: file.filesize };
}

function isPublished(deposition: Deposition): boolean {
  return deposition.submitted === true;
}

function refuseIfPublished(deposition: Deposition): void {
  if (!isPublished(deposition)) return;
  throw conflict(
    `The Zenodo record '${titleOf(deposition)}' is published, and the files of a published record cannot change. ` +
      'Make a new version of it in Zenodo ("New version") and upload into that draft.',
  );
}

function titleOf(deposition: Deposition): string {
  return deposition.title || deposition.metadata?.title || `Untitled deposition ${deposition.id}`;
}

function depositionNode(deposition: Deposition): ResourceNode {
  return { kind: 'container', kind_name: 'folder', id: depositionId(deposition.id), container: null, title: titleOf(deposition) };
}

function fileNode(deposition: Deposition, file: DepositionFile): ResourceNode {
  return { kind: 'item', kind_name: 'file', id: fileId(deposition.id, file.filename), container: depositionId(deposition.id), title: file.filename };
}

function findFile(deposition: Deposition, key: string): DepositionFile {
  const file = deposition.files?.find((f) => f.filename === key);
  if (!file) throw new FerryError(404, 'resource_not_found', `The Zenodo deposition '${titleOf(deposition)}' has no file '${key}'.`);
  return file;
}

function fileEntry(path: string, file: DepositionFile, open: Entry['open']): Entry {
  const md5 = normaliseMd5(file.checksum);
  return { path, kind: 'file', size: file.filesize, mtime: null, hashes: md5 ? { md5 } : {}, open };
}

function folderEntry(path: string): Entry {
  return { path, kind: 'folder', size: null, mtime: null, hashes: {}, open: () => Promise.reject(new Error(`${path} is a folder`)) };
}

async function* single(entry: Entry): AsyncIterable<Entry> {
  yield entry;
}

