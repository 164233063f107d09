import { stat } from 'node:fs/promises';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import path from 'node:path';
import type yauzl from 'yauzl';
import { crc32 } from '../../crc32.js';
import { badRequest, notFound, notSupported, throwIfAborted } from '../../errors.js';
import { hashStream, HashingPassThrough } from '../../hashing.js';
import type { Limits } from '../../limits.js';
import type {
  Entry,
  ListScope,
  ReadResult,
  ResourceInfo,
  ResourceNode,
  Target,
  SearchPage,
  SearchQuery,
  TargetCapabilities,
  TargetContext,
  TargetInfo,
  VerifyOptions,
  VerifyOutcome,
} from '../../target.js';
import { pageOfNameMatches } from '../../search.js';
import { formatDate, formatNanoseconds, normalizeTimestamp } from '../../time.js';
import { byCodePoint, describeZipError, indexArchive, openEntryStream, openZip, payloadPathOf, type ArchiveIndex, type IndexedEntry } from './archive-index.js';
import { FixityStore, type FileFixity, type FixityFailureRecord } from './fixity-store.js';
import { archiveIdFor, isArchiveId, Library, type LibraryArchive } from './library.js';
import { SharedZip } from './shared-zip.js';
import { KeptBatches } from '../../kept-batches.js';
import { withCrc32Check } from '../../jobs/source-check.js';
import type { NodeColumns } from '../../node-columns.js';

// The `offline` target ("Downloaded ZIPs"): every ZIP in the library folders is a top-level
// container; inside, the archive's folders and files (for a Ferry bag, the payload only).
// Everything is read from the central directory; bytes are streamed out of the archive.

const HASHES = ['md5', 'sha256'] as const;
const INDEX_CACHE_SIZE = 8;
/** nodes per batch of listBatches: one await per batch, not per row */
const LIST_BATCH = 4096;
/**
 * Rows of full listings kept (frozen, with the nodes of unchanged archives) across all
 * archives: a repeated listing of an unchanged archive then hands out the same batches.
 */
const KEPT_LISTING_ROWS = 250_000;

export interface OfflineTargetOptions {
  libraryDirs: string[];
  /** where fixity records live (in the data directory) */
  stateDir: string;
  limits: Limits;
}

interface Opened {
  archive: LibraryArchive;
  index: ArchiveIndex;
}

export class OfflineTarget implements Target {
  readonly info: TargetInfo = {
    name: 'offline',
    readable_name: 'Downloaded ZIPs',
    supported_actions: { resource_collection: true, resource_detail: true, resource_download: true, resource_upload: false },
    supported_hash_algorithms: [...HASHES],
    credential: 'access-key',
    plainIds: true,
  };

  readonly capabilities: TargetCapabilities;
  readonly library: Library;
  private readonly kept = new KeptBatches();
  private readonly fixity: FixityStore;
  private readonly listedBefore = new WeakSet<ArchiveIndex>();
  /** entries whose bytes were read and found whole (checkBytes), by the index of their archive as it is now */
  private readonly checkedEntries = new WeakMap<ArchiveIndex, Set<string>>();
  private readonly keptListings = new Map<string, { index: ArchiveIndex; archiveId: string; batches: readonly (readonly ResourceNode[])[]; rows: number }>();
  private readonly indexes = new Map<string, { size: number; mtimeMs: number; ino: number; index: Promise<ArchiveIndex> }>();

  constructor(private readonly options: OfflineTargetOptions) {
    this.capabilities = { cacheableListings: this.kept, columnarListing: { listColumns: (ctx, scope) => this.listColumns(ctx, scope) } };
    this.library = new Library(options.libraryDirs);
    this.fixity = new FixityStore(options.stateDir);
  }

  async *list(ctx: TargetContext, scope?: ListScope): AsyncIterable<ResourceNode> {
    for await (const batch of this.listBatches(ctx, scope)) yield* batch;
  }

  async *listBatches(ctx: TargetContext, scope?: ListScope): AsyncIterable<readonly ResourceNode[]> {
    for await (const batch of this.listColumns(ctx, scope, false)) yield batch as readonly ResourceNode[];
  }

  /**
   * listBatches, where an archive listed whole for the first time comes as columns (see
   * NodeColumns): the HTTP layer writes its rows from the index's bytes.
   */
  async *listColumns(_ctx: TargetContext, scope?: ListScope, columnar = true): AsyncIterable<readonly ResourceNode[] | NodeColumns> {
    if (scope?.container === undefined || scope.container === null) {
      const everything = scope?.container === undefined;
      for (const archive of await this.library.archives()) {
        const index = await this.indexOf(archive);
        if (!everything) {
          yield [this.archiveNode(archive, index)];
          continue;
        }
        const kept = this.keptListings.get(archive.file);
        if (kept !== undefined && kept.index === index && kept.archiveId === archive.id) {
          // unchanged: the very same frozen batches (the HTTP layer keeps their JSON)
          yield* kept.batches;
          continue;
        }
        yield* this.freshListing(archive, index, columnar);
      }
      return;
    }
    const { archive, index, entryPath } = await this.resolve(scope.container);
    if (entryPath !== '' && index.find(entryPath)?.kind !== 'folder') {
      throw notFound('That resource is a file, which has no children.');
    }
    yield* index.nodeBatches(archive.id, entryPath, entryPath === '' ? archive.id : entryId(archive, entryPath), false, LIST_BATCH);
  }

  /**
   * An archive's node and all its entries. Listed again and small enough to keep, the batches
   * are frozen and kept (once the listing ran to its end) for the next listing of the
   * unchanged archive.
   */
  private *freshListing(archive: LibraryArchive, index: ArchiveIndex, columnar: boolean): Generator<readonly ResourceNode[] | NodeColumns> {
    // the listing of the archive as it was is garbage now: not kept alive while this one is made
    this.keptListings.delete(archive.file);
    // Kept from the second listing of an index on: frozen batches cost the HTTP layer its
    // kept JSON (and memory), worth it for an archive listed again, not for one listed once.
    const keep = this.listedBefore.has(index) && index.entryCount + 1 <= KEPT_LISTING_ROWS;
    this.listedBefore.add(index);
    const batches: (readonly ResourceNode[])[] = [];
    const head = [this.archiveNode(archive, index)];
    if (keep) batches.push(this.kept.keep(head));
    yield head;
    if (columnar && !keep) {
      // listed once (so far): no node objects at all
      yield* index.columnBatches(archive.id, LIST_BATCH);
      return;
    }
    for (const batch of index.nodeBatches(archive.id, '', archive.id, true, LIST_BATCH)) {
      if (keep) batches.push(this.kept.keep(batch));
      yield batch;
    }
    if (!keep) return;
    this.keptListings.set(archive.file, { index, archiveId: archive.id, batches, rows: index.entryCount + 1 });
    let rows = 0;
    for (const listing of this.keptListings.values()) rows += listing.rows;
    // the oldest go first while all kept listings together pass the budget
    for (const [file, listing] of this.keptListings) {
      if (rows <= KEPT_LISTING_ROWS) break;
      this.keptListings.delete(file);
      rows -= listing.rows;
    }
  }

  /** Not an index: a bounded name match over every archive's entries and the archives themselves (core/search.ts). */
  search(ctx: TargetContext, query: SearchQuery): Promise<SearchPage> {
    return pageOfNameMatches(this.list(ctx), query);
  }

  async detail(_ctx: TargetContext, id: string): Promise<ResourceInfo> {
    const { archive, index, entryPath } = await this.resolve(id);
    if (entryPath === '') {
      const stats = await stat(archive.file, { bigint: true });
      const fixity = await this.fixity.load(archive.file);
      const states = Object.values(fixity.files).map((file) => file.state);
      return {
        ...this.archiveNode(archive, index),
        date_created: formatNanoseconds(stats.birthtimeNs > 0n ? stats.birthtimeNs : stats.ctimeNs),
        date_modified: formatNanoseconds(stats.mtimeNs),
        hashes: {},
        extra: {
          provider: 'offline',
          materialized_path: '/',
          path: '/',
          archive: archive.name,
          archive_size: Number(stats.size),
          format: index.bag ? 'bagit' : 'zip',
          state: index.damage ? 'damaged' : 'ok',
          error: index.damage,
          files: index.fileCount,
          source: this.sourceOf(index),
          fixity: {
            verified_at: fixity.verified_at,
            verified: states.filter((state) => state === 'verified').length,
            failed: states.filter((state) => state === 'failed').length,
          },
        },
      };
    }
    const entry = index.find(entryPath)!;
    const node = this.entryNode(archive, entry);
    const base = {
      materialized_path: `/${entry.path}${entry.kind === 'folder' ? '/' : ''}`,
      path: `/${entry.path}${entry.kind === 'folder' ? '/' : ''}`,
      provider: 'offline',
      archive: archive.name,
      source: this.sourceOf(index),
    };
    if (entry.kind === 'folder') {
      return { ...node, date_created: null, date_modified: formatDate(entry.mtime), hashes: {}, extra: { ...base, size: null } };
    }
    const record = await this.fixity.load(archive.file);
    // A file whose bytes cannot be read (a damaged archive: bad local header, unknown
    // compression, cut short) still has a detail: no hashes, and the reason why.
    let hashes: Record<string, string> = {};
    let unreadable: string | null = null;
    try {
      hashes = await this.hashesOf(archive, index, entry);
    } catch (error) {
      unreadable = unreadableSentence(entry.path, error);
    }
    const known = record.files[payloadPathOf(index, entry.path)];
    return {
      ...node,
      date_created: null,
      date_modified: formatDate(entry.mtime),
      hashes,
      extra: {
        ...base,
        size: entry.size,
        compressed_size: entry.compressedSize,
        source_hashes: this.sourceHashes(index, entry.path),
        fixity: describeFixity(known),
        ...(unreadable === null ? {} : { state: 'damaged', error: unreadable }),
      },
    };
  }

  async read(ctx: TargetContext, id: string): Promise<ReadResult> {
    const { archive, index, entryPath } = await this.resolve(id);
    // An archive the policy refuses (entry-policy.ts) is never read out, whole or in part: a
    // transfer or download of it is refused with the sentence an upload of it gets.
    if (index.damage) throw badRequest(index.damage);
    const root = entryPath === '' ? this.archiveNode(archive, index) : this.entryNode(archive, index.find(entryPath)!);
    const title = root.title;
    const selected: IndexedEntry[] = [];
    if (entryPath === '') selected.push(...[...index.entries.values()]);
    else {
      const entry = index.find(entryPath)!;
      selected.push(entry);
      if (entry.kind === 'folder') for (const other of index.entries.values()) if (other.path.startsWith(`${entryPath}/`)) selected.push(other);
    }
    await this.checkBytes(archive, index, selected, ctx.signal);
    const prefixLength = entryPath === '' ? 0 : entryPath.length - (entryPath.split('/').pop() as string).length;
    const pathOf = (entry: IndexedEntry) => (entryPath === '' ? `${title}/${entry.path}` : entry.path.slice(prefixLength));
    const manifestHashes = (entry: IndexedEntry) => this.sourceHashesFromManifests(index, entry.path);
    const file = archive.file;
    async function* entries(): AsyncIterable<Entry> {
      const zip = new SharedZip(file);
      try {
        if (entryPath === '') yield { path: title, kind: 'folder', size: null, mtime: null, hashes: {}, open: () => Promise.reject(new Error('a folder has no bytes')) };
        for (const entry of selected.sort((a, b) => byCodePoint(a.path, b.path))) {
          throwIfAborted(ctx.signal);
          const record = entry.record;
          const sourcePath = pathOf(entry);
          yield {
            path: sourcePath,
            kind: entry.kind,
            size: entry.kind === 'file' ? entry.size : null,
            mtime: entry.mtime,
            hashes: entry.kind === 'file' ? manifestHashes(entry) : {},
            // the ZIP's CRC-32 is checked as the bytes pass: a damaged entry is never handed over whole
            open: async () => {
              if (!record) throw new Error('a folder has no bytes');
              return withCrc32Check(await zip.open(record, record.fileName), record.crc32, sourcePath);
            },
          };
        }
      } finally {
        zip.release();
      }
    }
    return { title, root, entries: entries() };
  }

  /**
   * Every selected file's bytes read and checked (size, CRC-32) before read() hands out the
   * first entry: a transfer or download of a damaged archive is refused with the entry's
   * sentence (a 400) before anything is written, as an upload of it is, instead of failing
   * part-way with the files before it already written (a remote destination cannot take them
   * back) or a ZIP cut off mid-stream. An archive's entries are checked once while it is
   * unchanged (the set lives with its index, made anew when the file changes).
   */
  private async checkBytes(archive: LibraryArchive, index: ArchiveIndex, selected: IndexedEntry[], signal: AbortSignal): Promise<void> {
    let checked = this.checkedEntries.get(index);
    if (checked === undefined) {
      checked = new Set();
      this.checkedEntries.set(index, checked);
    }
    const unchecked = selected.filter((entry) => entry.kind === 'file' && !checked.has(entry.path));
    if (unchecked.length === 0) return;
    const zip = new SharedZip(archive.file);
    try {
      for (const entry of unchecked) {
        throwIfAborted(signal);
        const record = entry.record as yauzl.Entry;
        // a FerryError (400) naming the entry, from openZipEntry, when its bytes are damaged
        for await (const chunk of await zip.open(record, record.fileName)) void chunk;
        checked.add(entry.path);
      }
    } finally {
      zip.release();
    }
  }

  async write(): Promise<never> {
    throw notSupported('Downloaded ZIPs are read-only: upload into a local folder or a repository instead.');
  }

  /**
   * Re-reads every payload file and checks it against every manifest, the provenance
   * file's source hashes, and hashes recorded at an earlier verification (plain ZIPs get
   * theirs recorded the first time).
   */
  async verify(_ctx: TargetContext, id: string, options: VerifyOptions): Promise<VerifyOutcome> {
    const { archive, index, entryPath } = await this.resolve(id);
    if (entryPath !== '') throw notFound('Verify a whole archive: pass the archive id, not an entry inside it.');
    if (index.damage) throw notFound(`Cannot verify '${archive.name}': ${index.damage}`);
    const files = [...index.entries.values()].filter((entry) => entry.kind === 'file');
    const total = { files: files.length, bytes: files.reduce((sum, entry) => sum + entry.size, 0) };
    const record = await this.fixity.load(archive.file);
    const outcome: VerifyOutcome = { verified: [], failed: [], unverified: [] };
    const done = { files: 0, bytes: 0 };
    const zip = await openZip(archive.file);
    try {
      for (const entry of files) {
        throwIfAborted(options.signal);
        // records and reports name the file as the bag's manifests do (relative to data/)
        const key = payloadPathOf(index, entry.path);
        const previous = record.files[key];
        // a plain ZIP's hashes as first verified: what every later verification compares against
        const baseline = index.bag ? undefined : previous?.checked_at ? baselineOf(previous) : undefined;
        const expected = this.expectedHashes(index, entry.path, previous);
        const algorithms = [...new Set([...HASHES, ...expected.map((item) => item.algorithm)])].filter(isComputable);
        let computed: Record<string, string>;
        try {
          computed = await this.hashEntry(zip, entry, algorithms, (n) => {
            done.bytes += n;
          });
        } catch (error) {
          const failure: FixityFailureRecord = { algorithm: 'read', expected: 'readable bytes', actual: unreadableSentence(key, error), against: 'zip' };
          record.files[key] = { hashes: {}, baseline, state: 'failed', failures: [failure], checked_at: formatDate(new Date()) };
          outcome.failed.push({ path: key, algorithm: 'read', expected: failure.expected, actual: failure.actual });
          done.files++;
          options.onProgress(done, total);
          continue;
        }
        // The ZIP's own CRC-32 is a check even for a plain ZIP verified for the first time.
        expected.push({ algorithm: 'crc32', value: (entry.record as yauzl.Entry).crc32.toString(16).padStart(8, '0'), against: 'zip' });
        const failures = expected.filter((item) => computed[item.algorithm] !== undefined && computed[item.algorithm] !== item.value.toLowerCase());
        const state = failures.length > 0 ? 'failed' : 'verified';
        record.files[key] = {
          // the bytes as they are now (detail's `hashes`); what they should be is in `failures`
          hashes: pick(computed, HASHES),
          baseline: index.bag ? undefined : (baseline ?? pick(computed, HASHES)),
          state,
          failures: failures.map((item) => ({ algorithm: item.algorithm, expected: item.value, actual: computed[item.algorithm] as string, against: item.against })),
          checked_at: formatDate(new Date()),
        };
        if (state === 'failed') {
          for (const item of failures) outcome.failed.push({ path: key, algorithm: item.algorithm, expected: item.value, actual: computed[item.algorithm] as string });
        } else outcome.verified.push(key);
        done.files++;
        options.onProgress(done, total);
      }
    } finally {
      zip.close();
    }
    record.verified_at = formatDate(new Date());
    await this.fixity.save(archive.file, record);
    return outcome;
  }

  /** md5, sha256 (and any other algorithm asked) plus the CRC-32, in one read of the entry. */
  private async hashEntry(zip: yauzl.ZipFile, entry: IndexedEntry, algorithms: string[], onBytes: (n: number) => void): Promise<Record<string, string>> {
    const hasher = new HashingPassThrough(algorithms, onBytes);
    let crc = 0;
    const sink = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        crc = crc32(chunk, crc);
        callback();
      },
    });
    await pipeline(await openEntryStream(zip, entry.record as yauzl.Entry), hasher, sink);
    return { ...(hasher.digests as Record<string, string>), crc32: (crc >>> 0).toString(16).padStart(8, '0') };
  }

  // ---- lookups

  private async indexOf(archive: LibraryArchive): Promise<ArchiveIndex> {
    const stats = await stat(archive.file);
    const cached = this.indexes.get(archive.file);
    // the same path, size and time but another file (replaced by a rename) is read again
    if (cached && cached.size === stats.size && cached.mtimeMs === stats.mtimeMs && cached.ino === stats.ino) return cached.index;
    const index = indexArchive(archive.file, this.options.limits);
    this.indexes.delete(archive.file);
    this.indexes.set(archive.file, { size: stats.size, mtimeMs: stats.mtimeMs, ino: stats.ino, index });
    while (this.indexes.size > INDEX_CACHE_SIZE) this.indexes.delete(this.indexes.keys().next().value as string);
    return index;
  }

  private async resolve(id: string): Promise<Opened & { entryPath: string }> {
    const missing = () => notFound(`There is no downloaded ZIP or entry with id '${id.slice(0, 80)}'. List the target to find valid ids.`);
    const dash = id.indexOf('-');
    const archiveId = dash < 0 ? id : id.slice(0, dash);
    if (!isArchiveId(archiveId)) throw missing();
    const archive = await this.library.find(archiveId);
    if (!archive) throw missing();
    const index = await this.indexOf(archive);
    if (dash < 0) return { archive, index, entryPath: '' };
    const encoded = id.slice(dash + 1);
    const entryPath = Buffer.from(encoded, 'base64url').toString('utf8');
    if (Buffer.from(entryPath, 'utf8').toString('base64url') !== encoded) throw missing();
    if (index.find(entryPath) !== undefined) return { archive, index, entryPath };
    // an id made before a bag's one payload folder was folded into the archive itself
    const top = index.payloadTop;
    if (top !== null && entryPath === top) return { archive, index, entryPath: '' };
    if (top !== null && entryPath.startsWith(`${top}/`) && index.find(entryPath.slice(top.length + 1)) !== undefined) {
      return { archive, index, entryPath: entryPath.slice(top.length + 1) };
    }
    throw missing();
  }

  private archiveNode(archive: LibraryArchive, index: ArchiveIndex): ResourceNode {
    const title = index.bag?.provenance?.resource_title || archive.name.replace(/\.zip$/i, '');
    return { kind: 'container', kind_name: 'folder', id: archive.id, container: null, title };
  }

  private entryNode(archive: LibraryArchive, entry: IndexedEntry): ResourceNode {
    const slash = entry.path.lastIndexOf('/');
    const parent = slash < 0 ? archive.id : entryId(archive, entry.path.slice(0, slash));
    return {
      kind: entry.kind === 'folder' ? 'container' : 'item',
      kind_name: entry.kind,
      id: entryId(archive, entry.path),
      container: parent,
      title: slash < 0 ? entry.path : entry.path.slice(slash + 1),
    };
  }

  private sourceOf(index: ArchiveIndex): Record<string, unknown> | null {
    const provenance = index.bag?.provenance;
    if (!provenance) return null;
    return { target: provenance.source_target, resource_id: provenance.resource_id, title: provenance.resource_title, downloaded_at: normalizeTimestamp(provenance.downloaded_at) };
  }

  /** `entryPath` as the index has it; manifests name files relative to data/. */
  private sourceHashesFromManifests(index: ArchiveIndex, entryPath: string): Record<string, string> {
    const hashes: Record<string, string> = {};
    const payloadPath = payloadPathOf(index, entryPath);
    for (const [algorithm, manifest] of index.bag?.manifests ?? []) {
      const value = manifest.get(payloadPath);
      if (value) hashes[algorithm] = value;
    }
    return hashes;
  }

  private sourceHashes(index: ArchiveIndex, entryPath: string): Record<string, string> | null {
    const payloadPath = payloadPathOf(index, entryPath);
    return index.bag?.provenance?.files.find((file) => file.path === payloadPath)?.source_hashes ?? null;
  }

  private expectedHashes(index: ArchiveIndex, entryPath: string, recorded: FileFixity | undefined): { algorithm: string; value: string; against: FixityFailureRecord['against'] }[] {
    const expected: { algorithm: string; value: string; against: FixityFailureRecord['against'] }[] = [];
    for (const [algorithm, value] of Object.entries(this.sourceHashesFromManifests(index, entryPath))) expected.push({ algorithm, value, against: 'manifest' });
    for (const [algorithm, value] of Object.entries(this.sourceHashes(index, entryPath) ?? {})) {
      if (isComputable(algorithm)) expected.push({ algorithm, value, against: 'provenance' });
    }
    if (!index.bag && recorded?.checked_at) for (const [algorithm, value] of Object.entries(baselineOf(recorded))) expected.push({ algorithm, value, against: 'recorded' });
    return expected;
  }

  /**
   * The hex digests of the entry's bytes as they are: after a verification found them
   * changed, what they hashed to then (the manifest's values are what they should be, kept
   * in the fixity record); else manifest hashes when the bag has them, else recorded ones,
   * else computed now and kept.
   */
  private async hashesOf(archive: LibraryArchive, index: ArchiveIndex, entry: IndexedEntry): Promise<Record<string, string>> {
    const key = payloadPathOf(index, entry.path);
    const record = await this.fixity.load(archive.file);
    const known = record.files[key];
    // A plain ZIP's failed record from before baselines were kept holds the baseline in
    // `hashes`: computed afresh below instead. Unreadable bytes ('read' failure) have none.
    const knowsCurrent = known?.state === 'failed' && (index.bag !== null || known.baseline !== undefined);
    if (knowsCurrent) return pick(known.hashes, HASHES);
    const fromManifests = pick(this.sourceHashesFromManifests(index, entry.path), HASHES);
    if (HASHES.every((algorithm) => fromManifests[algorithm])) return fromManifests;
    if (known && known.state !== 'failed' && HASHES.every((algorithm) => known.hashes[algorithm])) return pick(known.hashes, HASHES);
    const zip = await openZip(archive.file);
    try {
      const { hashes } = await hashStream(await openEntryStream(zip, entry.record as yauzl.Entry), HASHES);
      if (!known) record.files[key] = { hashes, state: 'unverified', failures: [], checked_at: null };
      else if (known.state === 'failed') record.files[key] = { ...known, baseline: baselineOf(known), hashes };
      else record.files[key] = { ...known, hashes: { ...hashes, ...known.hashes } };
      await this.fixity.save(archive.file, record);
      return known?.state === 'failed' ? hashes : { ...hashes, ...fromManifests };
    } finally {
      zip.close();
    }
  }
}

/** Why an entry's bytes cannot be read, as a sentence (yauzl's and zlib's messages are terse). */
function unreadableSentence(entryPath: string, error: unknown): string {
  return `The file '${entryPath.slice(0, 120)}' cannot be read: ${describeZipError(error).replace(/^The archive/, 'the archive')}`;
}

function entryId(archive: LibraryArchive, entryPath: string): string {
  return `${archive.id}-${Buffer.from(entryPath, 'utf8').toString('base64url')}`;
}

function isComputable(algorithm: string): boolean {
  return ['md5', 'sha1', 'sha256', 'sha512'].includes(algorithm);
}

function pick(hashes: Record<string, string>, algorithms: readonly string[]): Record<string, string> {
  return Object.fromEntries(algorithms.filter((algorithm) => hashes[algorithm]).map((algorithm) => [algorithm, hashes[algorithm] as string]));
}

/** A plain ZIP's reference hashes (records made before `baseline` existed kept them in `hashes`). */
function baselineOf(recorded: FileFixity): Record<string, string> {
  return recorded.baseline ?? recorded.hashes;
}

function describeFixity(known: FileFixity | undefined): Record<string, unknown> {
  if (!known || !known.checked_at) return { state: 'unverified' };
  if (known.state === 'failed') {
    const first = known.failures[0];
    return { state: 'failed', algorithm: first?.algorithm, expected: first?.expected, actual: first?.actual, against: first?.against, checked_at: known.checked_at, failures: known.failures };
  }
  return { state: known.state, checked_at: known.checked_at };
}

export { archiveIdFor };
export const offlineStateDir = (dataDir: string) => path.join(dataDir, 'offline-state');
export const defaultLibraryDir = (dataDir: string) => path.join(dataDir, 'library');
