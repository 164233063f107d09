import { Readable } from 'node:stream';
import type { JobReport } from '../../../shared/api.js';
import { HashingPassThrough } from '../hashing.js';
import { readWholeOf, withReadWhole } from '../jobs/whole-entry.js';
import { watchedReads } from '../jobs/open-from.js';
import { OrderedPipeline, pipelineLimits } from '../jobs/ordered-pipeline.js';
import { FOLDER_SEPARATOR } from '../remote/flat-record.js';
import { singleEntry, type Entry, type StoredRecord, type Target, type TargetContext } from '../target.js';
import { formatDate } from '../time.js';
import {
  appendEntry,
  mergeLogs,
  parseProvenance,
  PROVENANCE_FILE,
  serializeProvenance,
  type FixityStatus,
  type FolderLayout,
  type ProvenanceAction,
  type ProvenanceFile,
  type ProvenanceLog,
  type ProvenanceResource,
} from './format.js';

// The provenance record of an upload or transfer: entries are watched on their way to the
// destination (what the source said of each file, and the digests of the bytes passed on,
// in the algorithms the destination reports), then what the destination stored is taken from
// the write's own answer (WriteOutcome.stored; the destination is asked only of a file the
// write gave no record of), and `ferry-provenance.json` is written (or extended) at the top
// of what the job wrote.
//
// Where the record goes: a new top-level resource gets it at its top (a flat record — a
// Zenodo deposition — as a top-level file); a write into a folder puts it in the one folder
// it wrote (`T/ferry-provenance.json`), or at the folder's top when it wrote several things.
// An earlier record is extended, never replaced: the one that came with the data (withheld
// from the write, so this job's version is the only one written) and the one already there,
// merged (format.ts mergeLogs).
//
// The record never fails the job: what could not be done is a note in the job's report.

const COMPUTABLE: ReadonlySet<string> = new Set(['md5', 'sha1', 'sha256', 'sha512']);
/** an earlier record bigger than this is not a provenance file Ferry wrote */
const MAX_RECORD_BYTES = 64 * 1024 * 1024;

export interface ProvenanceJob {
  action: Exclude<ProvenanceAction, 'download'>;
  ticket: string;
  source: ProvenanceResource;
  destination: Target;
  /** null: a new top-level resource */
  containerId: string | null;
  /** a record that travels with an uploaded bag (its tag file), when there is one */
  carried?: string | null;
  /** a write to a record that keeps no folders: how it kept them */
  folders?: FolderLayout;
}

interface Seen {
  entry: Entry;
  /** digests of the bytes passed on, once a read finished */
  passed: Record<string, string> | null;
  bytes: number | null;
}

export class ProvenanceRecorder {
  private readonly files: Seen[] = [];
  private readonly algorithms: string[];
  private carried: string | null;
  private carriedNote: string | null = null;
  private tops = new Set<string>();
  private topIsFolder = false;

  constructor(private readonly job: ProvenanceJob) {
    this.algorithms = job.destination.info.supported_hash_algorithms.map((a) => a.toLowerCase()).filter((a) => COMPUTABLE.has(a));
    this.carried = job.carried ?? null;
  }

  /** The entries as the writer should get them: watched, and without the record that came with them. */
  watch(entries: AsyncIterable<Entry>): AsyncIterable<Entry> {
    return { [Symbol.asyncIterator]: () => this.pass(entries) };
  }

  private async *pass(entries: AsyncIterable<Entry>): AsyncGenerator<Entry> {
    for await (const entry of entries) {
      const [top, ...rest] = entry.path.split('/');
      this.tops.add(top!);
      if (rest.length === 0 && entry.kind === 'folder') this.topIsFolder = true;
      if (entry.kind === 'file' && rest.length === 1 && rest[0] === PROVENANCE_FILE && this.tops.size === 1) {
        await this.takeCarried(entry);
        continue;
      }
      yield entry.kind === 'file' ? this.watchFile(entry) : entry;
    }
  }

  /**
   * After the write: takes what the destination stored (`stored`: the write's record of each
   * file, by its path in `report`; asked of the destination for any other file), writes the
   * record, and answers the report with a note for anything that could not be recorded.
   */
  async complete(ctx: TargetContext, report: JobReport, stored: ReadonlyMap<string, StoredRecord>): Promise<JobReport> {
    const notes: string[] = [];
    try {
      const place = this.place(report);
      if (!place) {
        notes.push('No provenance record was written: the job wrote nothing to record it beside.');
      } else {
        const relative = this.files.map((seen) => relativeTo(place, seen.entry.path));
        const destinationRecords = await this.destinationRecords(ctx, place, relative, stored);
        const outcomes = new ReportLookup(report);
        const carried = this.carried !== null ? parseProvenance(this.carried) : null;
        const earlier = mergeLogs(carried, await this.readExisting(ctx, place));
        if (this.carriedNote) notes.push(this.carriedNote);
        const log = appendEntry(earlier, {
          action: this.job.action,
          at: formatDate(new Date()),
          job: this.job.ticket,
          software: 'Ferry',
          source: this.job.source,
          destination: {
            target: this.job.destination.info.name,
            resource_id: report.new_resource?.id ?? this.job.containerId,
            title: report.new_resource?.title ?? null,
          },
          files: this.files.map((seen, i) => this.fileRecord(seen, outcomes, relative[i] ? destinationRecords.get(relative[i]!) : undefined)),
          ...(report.notes?.length ? { notes: report.notes } : {}),
          ...(this.job.folders ? { folders: this.job.folders } : {}),
        });
        await this.writeRecord(ctx, place, log, notes);
      }
    } catch (error) {
      // a cancelled job stays cancelled; any other failure leaves the written data a success
      if (ctx.signal.aborted) throw error;
      notes.push(`The provenance record (${PROVENANCE_FILE}) could not be written: ${error instanceof Error ? error.message : String(error)}`);
    }
    return notes.length === 0 ? report : { ...report, notes: [...(report.notes ?? []), ...notes] };
  }

  /**
   * The hashes the destination reports of each file, by its path relative to the record's
   * place: as the write got them where it did (a record with hashes, even none), else asked.
   * Asking costs a listing of each folder and a detail a file (InvenioRDM's the whole list of
   * the record's files each time), so a write that answered for every file costs nothing more.
   */
  private async destinationRecords(
    ctx: TargetContext,
    place: Place,
    relative: readonly (string | null)[],
    stored: ReadonlyMap<string, StoredRecord>,
  ): Promise<Map<string, DestinationRecord>> {
    const found = new Map<string, DestinationRecord>();
    const unknown = new Set<string>();
    this.files.forEach((seen, i) => {
      const path = relative[i];
      if (path === null || path === undefined) return;
      const record = stored.get(seen.entry.path);
      if (record && !('unverifiable' in record)) found.set(path, { hashes: lowerCased(record.hashes), asWritten: record.hashedAsWritten === true });
      else unknown.add(path);
    });
    if (unknown.size === 0) return found;
    for (const [path, hashes] of await storedHashes(this.job.destination, ctx, place.rootId, unknown)) found.set(path, { hashes, asWritten: false });
    return found;
  }

  private watchFile(entry: Entry): Entry {
    const seen: Seen = { entry, passed: null, bytes: null };
    this.files.push(seen);
    // An algorithm the source reports is already checked on every byte by the job's own
    // watch (WatchedEntries): it is not computed twice; see computedOf.
    const algorithms = this.algorithms.filter((a) => !sourceHash(entry, a));
    const watchStream = (raw: Readable): Readable => {
      const hasher = new HashingPassThrough(algorithms);
      raw.on('error', (error) => hasher.destroy(error));
      hasher.once('end', () => {
        seen.passed = hasher.digests ?? {};
        seen.bytes = hasher.bytes;
      });
      return raw.pipe(hasher);
    };
    // a resumed read is the whole file too (its kept bytes first): the record's digests cover every byte
    const watched: Entry = { ...entry, ...watchedReads(entry, watchStream) };
    const readWhole = readWholeOf(entry);
    if (readWhole) {
      withReadWhole(watched, async (wanted) => {
        const file = await readWhole([...new Set([...wanted, ...algorithms])]);
        seen.passed = Object.fromEntries(algorithms.map((a) => [a, file.hashes[a]!]));
        seen.bytes = file.bytes.length;
        return file;
      });
    }
    return watched;
  }

  private async takeCarried(entry: Entry): Promise<void> {
    if (entry.size !== null && entry.size > MAX_RECORD_BYTES) {
      this.carriedNote = `The ${PROVENANCE_FILE} that came with the data is larger than ${MAX_RECORD_BYTES} bytes; it was not read, and this job's record replaces it.`;
      return;
    }
    this.carried = (await collect(await entry.open())).toString('utf8');
  }

  /** Where the record goes: the resource it is written into, and its path there. */
  private place(report: JobReport): Place | null {
    if (report.new_resource) return { rootId: report.new_resource.id, strip: 1, prefix: '' };
    if (this.job.containerId === null || this.tops.size === 0) return null;
    const [only] = this.tops;
    if (this.tops.size === 1 && this.topIsFolder) return { rootId: this.job.containerId, strip: 0, prefix: `${only}/` };
    return { rootId: this.job.containerId, strip: 0, prefix: '' };
  }

  private fileRecord(seen: Seen, report: ReportLookup, destination: DestinationRecord | undefined): ProvenanceFile {
    const { entry } = seen;
    const outcome = report.outcomeOf(entry.path);
    const fixity = fixityOfSeen(seen, report);
    const file: ProvenanceFile = {
      path: entry.path,
      size: seen.bytes,
      source_hashes: { ...entry.hashes },
      computed_hashes: computedOf(seen, fixity, this.algorithms),
      fixity,
      outcome,
      verified: false,
      verification: '',
    };
    if (entry.size !== null && seen.bytes !== null && entry.size !== seen.bytes) file.source_size = entry.size;
    if (destination) file.destination_hashes = destination.hashes;
    Object.assign(file, this.verification(file, report, destination));
    return file;
  }

  private verification(file: ProvenanceFile, report: ReportLookup, record: DestinationRecord | undefined): Pick<ProvenanceFile, 'verified' | 'verification'> {
    const name = this.job.destination.info.readable_name;
    if (file.outcome === 'ignored') return no(`${name} already had a file at this path, which the job's duplicate setting kept; it was not written.`);
    if (file.outcome === 'failed') {
      const error = report.errorOf(file.path);
      return no(error ? `it was not written: ${error}` : `${name} did not report writing it.`);
    }
    if (file.fixity === 'mismatch') return no("the bytes read from the source did not match the source's own hash (see the job's failed_fixity).");
    const destination = record?.hashes;
    if (!destination || Object.keys(destination).length === 0) return no(`${name} reports no hash for the stored file.`);
    const common = Object.keys(destination).filter((a) => file.computed_hashes[a] !== undefined);
    if (common.length === 0) return no(`${name} reports only ${Object.keys(destination).join(', ')}, which Ferry did not compute of the bytes it sent.`);
    const differ = common.filter((a) => destination[a]!.toLowerCase() !== file.computed_hashes[a]);
    if (differ.length > 0) return no(`${name}'s ${differ.join(' and ')} of the stored file differs from that of the bytes Ferry sent.`);
    const sourceSays = file.fixity === 'ok' ? ", which matched the source's own hash" : ' (the source reports no hash of its own)';
    const whose = record!.asWritten ? 'of its bytes as written (not read back)' : 'of the stored file';
    return { verified: true, verification: `${name}'s ${common.join(' and ')} ${whose} matched that of the bytes read from the source${sourceSays}.` };
  }

  private async readExisting(ctx: TargetContext, place: Place): Promise<ProvenanceLog | null> {
    if (place.strip === 1) return null; // a new resource holds no earlier record
    const found = await findNode(this.job.destination, ctx, place.rootId, `${place.prefix}${PROVENANCE_FILE}`);
    if (!found) return null;
    const read = await this.job.destination.read(ctx, found);
    for await (const entry of read.entries) {
      if (entry.kind !== 'file') continue;
      if (entry.size !== null && entry.size > MAX_RECORD_BYTES) return null;
      return parseProvenance((await collect(await entry.open())).toString('utf8'));
    }
    return null;
  }

  private async writeRecord(ctx: TargetContext, place: Place, log: ProvenanceLog, notes: string[]): Promise<void> {
    const bytes = serializeProvenance(log);
    const path = `${place.prefix}${PROVENANCE_FILE}`;
    const entry: Entry = { path, kind: 'file', size: bytes.length, mtime: new Date(), hashes: {}, open: async () => Readable.from([bytes]) };
    // the record is this job's: it replaces an earlier version (which it extends) whatever the duplicate setting
    const outcome = await this.job.destination.write(ctx, place.rootId, singleEntry(entry), {
      duplicateAction: 'update',
      signal: ctx.signal,
      jobLabel: `Ferry ${this.job.action} ${this.job.ticket} (provenance)`,
      // the record's write is not itself reported, so nothing reads the destination's record of it
      wantsStoredRecords: false,
    });
    for (const error of outcome.fileErrors) notes.push(`The provenance record (${PROVENANCE_FILE}) could not be written: ${error.error}`);
  }
}

/** The destination's hashes of a stored file; `asWritten`: of its bytes as the writer wrote them, not read back (StoredRecord.hashedAsWritten). */
interface DestinationRecord {
  hashes: Record<string, string>;
  asWritten: boolean;
}

interface Place {
  /** the resource the record is written into */
  rootId: string;
  /** leading path segments of an Entry.path that the resource's own name stands for (1 for a new resource) */
  strip: 0 | 1;
  /** the record's folder inside the resource ('' or 'T/') */
  prefix: string;
}

function no(why: string): Pick<ProvenanceFile, 'verified' | 'verification'> {
  return { verified: false, verification: `Not verified: ${why}` };
}

function fixityOfSeen(seen: Seen, report: ReportLookup): FixityStatus {
  if (report.failedFixity(seen.entry.path)) return 'mismatch';
  const checkable = Object.keys(seen.entry.hashes).some((a) => COMPUTABLE.has(a.toLowerCase()));
  if (!checkable) return 'no-source-hash';
  // the job's own watch (WatchedEntries) checks every byte read against these hashes
  return seen.passed ? 'ok' : 'not-read';
}

/**
 * What the job's report says of each path, looked up by path: the report lists thousands of
 * files, and a search of its lists for each file made the record's cost grow with the square
 * of the files (10,000 files: 50 million comparisons).
 */
class ReportLookup {
  private readonly outcomes = new Map<string, 'created' | 'updated' | 'ignored'>();
  private readonly errors = new Map<string, string>();
  private readonly fixityFailed: ReadonlySet<string>;

  constructor(report: JobReport) {
    // a path in several lists takes the first of created, updated, ignored; its first error counts
    for (const path of report.resources_ignored) this.outcomes.set(path, 'ignored');
    for (const path of report.resources_updated) this.outcomes.set(path, 'updated');
    for (const path of report.resources_created) this.outcomes.set(path, 'created');
    for (const { path, error } of report.file_errors) if (!this.errors.has(path)) this.errors.set(path, error);
    this.fixityFailed = new Set(report.failed_fixity.map((failure) => failure.path));
  }

  outcomeOf(path: string): ProvenanceFile['outcome'] {
    return this.outcomes.get(path) ?? 'failed';
  }

  /** the first error the report gives for `path` */
  errorOf(path: string): string | undefined {
    return this.errors.get(path);
  }

  failedFixity(path: string): boolean {
    return this.fixityFailed.has(path);
  }
}

function sourceHash(entry: Entry, algorithm: string): string | undefined {
  const found = Object.entries(entry.hashes).find(([name]) => name.toLowerCase() === algorithm);
  return found?.[1].toLowerCase();
}

/**
 * The digests of the bytes passed on, in the destination's algorithms: computed here, or,
 * for an algorithm the source reports, the source's value once the job's watch found every
 * byte read to match it (fixity ok); unknown otherwise.
 */
function computedOf(seen: Seen, fixity: FixityStatus, algorithms: readonly string[]): Record<string, string> {
  if (!seen.passed) return {};
  const checked = fixity === 'ok' ? algorithms.filter((a) => sourceHash(seen.entry, a) !== undefined) : [];
  return { ...seen.passed, ...Object.fromEntries(checked.map((a) => [a, sourceHash(seen.entry, a)!])) };
}

function lowerCased(hashes: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(hashes).map(([algorithm, value]) => [algorithm.toLowerCase(), value.toLowerCase()]));
}

function relativeTo(place: Place, entryPath: string): string | null {
  if (place.strip === 0) return entryPath;
  const slash = entryPath.indexOf('/');
  return slash < 0 ? null : entryPath.slice(slash + 1);
}

/**
 * The hashes the destination reports (its detail) of each wanted path below `rootId`, found
 * by listing folder by folder. A flat record names `a/b.txt` `a__b.txt` (flat-record.ts).
 * The details are asked as the target's writes are, its declared number at once
 * (TargetInfo.concurrency, the write pipeline): one after another they would take a round
 * trip each, as long as the write itself.
 */
async function storedHashes(target: Target, ctx: TargetContext, rootId: string, wanted: Set<string>): Promise<Map<string, Record<string, string>>> {
  const found = new Map<string, Record<string, string>>();
  const flat = new Map([...wanted].map((path) => [path.split('/').join(FOLDER_SEPARATOR), path]));
  const folders = new Set([...wanted].flatMap((path) => path.split('/').slice(0, -1).map((_, i, parts) => parts.slice(0, i + 1).join('/'))));
  const queue: { id: string; prefix: string }[] = [{ id: rootId, prefix: '' }];
  const details = new OrderedPipeline<void>(pipelineLimits(target.info.concurrency), () => undefined, ctx.signal);
  try {
    while (queue.length > 0 && !details.stopped) {
      const { id, prefix } = queue.shift()!;
      for await (const node of target.list(ctx, { container: id })) {
        const path = `${prefix}${node.title}`;
        if (node.kind === 'container') {
          if (folders.has(path)) queue.push({ id: node.id, prefix: `${path}/` });
          continue;
        }
        const match = wanted.has(path) ? path : prefix === '' ? flat.get(path) : undefined;
        if (match !== undefined) await details.start(node.id, 0, async () => void found.set(match, (await target.detail(ctx, node.id)).hashes));
      }
    }
  } finally {
    await details.drain();
  }
  await details.finish();
  return found;
}

/** The id of the item at `path` below `rootId`, or null. */
async function findNode(target: Target, ctx: TargetContext, rootId: string, path: string): Promise<string | null> {
  const parts = path.split('/');
  let id = rootId;
  for (let i = 0; i < parts.length; i++) {
    let next: string | null = null;
    const last = i === parts.length - 1;
    for await (const node of target.list(ctx, { container: id })) {
      if (node.title === parts[i] && (node.kind === 'container') !== last) next = node.id;
      else if (i === 0 && last === false && node.kind === 'item' && node.title === parts.join(FOLDER_SEPARATOR)) return node.id;
    }
    if (next === null) return null;
    id = next;
  }
  return id;
}

async function collect(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
