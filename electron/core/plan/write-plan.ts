import type { DuplicateFileAction } from '../../../shared/api.js';
import { badRequest, throwIfAborted } from '../errors.js';
import { foldName } from '../name-fold.js';
import type { Entry, WriteOptions } from '../target.js';
import { shownName } from '../zip/entry-name.js';
import { namingProblem, type NamingRules } from './naming-rules.js';
import { emptySegmentReason, unsafePathReason } from './safe-path.js';

// The one write planner (issue #18): every upload and transfer hands its entries here before
// any target is called. The whole list is judged at once — safe paths, one path per name
// however it is cased or normalised, one top folder for a new top-level resource, the
// destination's own naming rules — so the same bad input gets the same 400 and sentence on
// every target, and nothing is created on a service for a write that could not finish.
// Checks run in that order: the first three never depend on the destination.

/** One validated entry, as the destination will store it. */
export interface PlannedEntry {
  entry: Entry;
  /**
   * The name the destination stores a file under, relative to what it writes into (below
   * the top folder for a new top-level resource): the path itself, or for a target that
   * keeps no folders its segments flattened (`raw/a.csv` → `raw__a.csv`). Null for a folder
   * such a target does not keep.
   */
  storedAs: string | null;
  /**
   * What the destination does when it already holds this file: `ignore` leaves what is there;
   * `update` replaces it when the bytes differ (identical bytes count as ignored); `newer` and
   * `rename` as plan/duplicates.ts resolves them. The job's duplicate policy, the same for
   * every file, until resolveDuplicates decides per file.
   */
  onDuplicate: DuplicateFileAction;
}

/** What the planner asks of a destination (a Target has it). */
export interface PlanDestination {
  info: { readable_name: string };
  namingRules?: NamingRules;
  checkName?(name: string): string | null;
}

export interface PlanRequest {
  /** where the entries go; null: a new top-level resource made from their one top folder */
  containerId: string | null;
  duplicateAction: DuplicateFileAction;
  signal: AbortSignal;
}

/**
 * A write known to be valid before it starts; iterating it yields the entries, in order,
 * unchanged — for a new top-level resource, its top folder's entry first.
 */
export class WritePlan implements AsyncIterable<Entry> {
  constructor(
    readonly entries: readonly PlannedEntry[],
    /** a new top-level resource's top folder (its title), as the source names it; null into a container */
    readonly top: string | null,
  ) {}

  async *[Symbol.asyncIterator](): AsyncIterator<Entry> {
    for (const planned of this.entries) yield planned.entry;
  }
}

/** Reads `source` (entry metadata only: no bytes are opened) and judges it whole; throws the 400 of the first problem. */
export async function planWrite(destination: PlanDestination, source: AsyncIterable<Entry>, request: PlanRequest): Promise<WritePlan> {
  const entries: Entry[] = [];
  const names = new FoldedNames();
  for await (const entry of source) {
    throwIfAborted(request.signal);
    const reason = unsafePathReason(entry.path) ?? emptySegmentReason(entry.path);
    if (reason !== null) throw refused(`The entry ${shownName(entry.path)} ${reason}.`);
    if (names.add(entry.path, entry.kind)) entries.push(entry);
  }
  const top = request.containerId === null ? oneTopFolder(entries) : null;
  if (top !== null) topFolderFirst(entries, top);
  const rules = destination.namingRules;
  const stored = new FoldedNames();
  const planned = entries.map((entry): PlannedEntry => {
    const below = top === null ? entry.path : entry.path.slice(top.length + 1);
    checkNames(destination, rules, below, entry);
    const storedAs = rules?.flattenWith === undefined ? below : entry.kind === 'file' ? below.split('/').join(rules.flattenWith) : null;
    if (storedAs !== null && rules?.flattenWith !== undefined) stored.addFlat(storedAs, entry.path, destination.info.readable_name);
    return { entry, storedAs, onDuplicate: request.duplicateAction };
  });
  return new WritePlan(planned, top);
}

/**
 * The plan a writer goes by: the job's (`options.plan`; the writer then reads `source`, the
 * entries the job hands it and watches), or — called without one, as a test may — the same
 * planner's, made here from `source`. So no target needs path or top-folder checks of its own.
 */
async function writerPlan(destination: PlanDestination, containerId: string | null, source: AsyncIterable<Entry>, options: WriteOptions): Promise<{ top: string | null; entries: AsyncIterable<Entry> }> {
  if (options.plan) return { top: options.plan.top, entries: source };
  const plan = await planWrite(destination, source, { containerId, duplicateAction: options.duplicateAction, signal: options.signal });
  return { top: plan.top, entries: plan };
}

/** For a writer that needs the whole list first (a git push, a record made before its files). */
export async function plannedEntries(
  destination: PlanDestination,
  containerId: string | null,
  source: AsyncIterable<Entry>,
  options: WriteOptions,
): Promise<{ top: string | null; entries: Entry[] }> {
  const plan = await writerPlan(destination, containerId, source, options);
  const entries: Entry[] = [];
  for await (const entry of plan.entries) {
    throwIfAborted(options.signal);
    entries.push(entry);
  }
  return { top: plan.top, entries };
}

/** What a writer that streams iterates. */
export async function judgedEntries(destination: PlanDestination, containerId: string | null, entries: AsyncIterable<Entry>, options: WriteOptions): Promise<AsyncIterable<Entry>> {
  return (await writerPlan(destination, containerId, entries, options)).entries;
}

/** A new top-level resource's entries below its top folder: the folder's own entry left out, the rest relative to it. */
export function belowTop(top: string, entries: readonly Entry[]): Entry[] {
  return entries.filter((entry) => entry.path !== top).map((entry) => ({ ...entry, path: entry.path.slice(top.length + 1) }));
}

/** Every sentence ends saying that the write did not start, so a person knows nothing needs cleaning up. */
function refused(sentence: string): Error {
  return badRequest(`${sentence} Nothing was written.`);
}

/** A new top-level resource is made from exactly one top folder, which names it. */
function oneTopFolder(entries: readonly Entry[]): string {
  const tops = [...new Set(entries.map((entry) => entry.path.split('/')[0]!))];
  const file = entries.find((entry) => entry.kind === 'file' && !entry.path.includes('/'));
  if (tops.length === 1 && file !== undefined) {
    throw refused(`A new top-level resource needs one top-level folder; ${shownName(file.path)} is a file. Put it in a folder, or write it into an existing folder instead.`);
  }
  if (tops.length !== 1) {
    throw refused(`A new top-level resource needs exactly one top-level folder; found ${describeTops(tops)}. Put everything in one folder, or write into an existing folder instead.`);
  }
  return tops[0]!;
}

/** A new resource's plan begins with its top folder's own entry (made when the source only implies it), so a writer makes it first. */
function topFolderFirst(entries: Entry[], top: string): void {
  const at = entries.findIndex((entry) => entry.path === top);
  const [folder] = at >= 0 ? entries.splice(at, 1) : [{ path: top, kind: 'folder' as const, size: null, mtime: null, hashes: {}, open: () => Promise.reject(new Error(`"${top}" is a folder and has no bytes.`)) }];
  entries.unshift(folder!);
}

function describeTops(names: readonly string[]): string {
  if (names.length === 0) return 'nothing';
  const shown = names.slice(0, 5).map(shownName).join(', ');
  return `${names.length} (${shown}${names.length > 5 ? ', …' : ''})`;
}

/**
 * The destination's own rules for every segment of the entry's path (a new resource's top
 * folder included: it becomes a folder, or a title the target cleans itself), and its
 * checkName; a target that keeps no folders judges only the file name it will store (`below`
 * flattened). `below`: the path inside what is written into.
 */
function checkNames(destination: PlanDestination, rules: NamingRules | undefined, below: string, entry: Entry): void {
  const flat = rules?.flattenWith;
  if (flat !== undefined && (entry.kind === 'folder' || below === '')) return;
  const segments = entry.path.split('/');
  const judged = flat !== undefined ? [{ name: below.split('/').join(flat), kind: 'file' as const }] : segments.map((name, i) => ({ name, kind: i === segments.length - 1 ? entry.kind : ('folder' as const) }));
  for (const { name, kind } of judged) {
    const problem = namingProblem(rules, name, kind) ?? destination.checkName?.(name) ?? null;
    if (problem !== null) throw refused(`${shownName(entry.path)} cannot be written to ${destination.info.readable_name}: ${problem}. Rename it and try again.`);
  }
  const slash = below.lastIndexOf('/');
  const folderProblem = entry.kind === 'file' && slash > 0 ? (rules?.folderPath?.(below.slice(0, slash)) ?? null) : null;
  if (folderProblem !== null) throw refused(`${shownName(entry.path)} cannot be written to ${destination.info.readable_name}: ${folderProblem}. Rename the folder and try again.`);
}

/**
 * Paths by their folded spelling (NFC, lower case: what macOS and Windows take as one name,
 * and what looks the same to anyone), with every folder above them: a repeat, a look-alike
 * and a file-versus-folder clash are each found in one look-up, as the ZIP policy finds them.
 */
class FoldedNames {
  /** by folded spelling: the path as first seen, its kind, and whether an entry named it (or only a path below it) */
  private readonly seen = new Map<string, { path: string; kind: 'file' | 'folder'; named: boolean }>();

  /** False for a folder named again (nothing new to write); throws for any other clash. */
  add(path: string, kind: 'file' | 'folder'): boolean {
    for (let at = path.indexOf('/'); at >= 0; at = path.indexOf('/', at + 1)) this.intern(path.slice(0, at), 'folder', false);
    return this.intern(path, kind, true);
  }

  /** A flattened name `storedAs` of `path`: two files may not become one name. */
  addFlat(storedAs: string, path: string, service: string): void {
    const key = foldName(storedAs);
    const earlier = this.seen.get(key);
    if (earlier) throw refused(`${shownName(earlier.path)} and ${shownName(path)} would both be stored as ${shownName(storedAs)} on ${service}, which keeps no folders inside a record (a folder's name is joined to the file's); rename one of them.`);
    this.seen.set(key, { path, kind: 'file', named: true });
  }

  private intern(path: string, kind: 'file' | 'folder', named: boolean): boolean {
    const key = foldName(path);
    const earlier = this.seen.get(key);
    if (!earlier) {
      this.seen.set(key, { path, kind, named });
      return true;
    }
    if (earlier.path !== path) throw refused(`The entries ${shownName(earlier.path)} and ${shownName(path)} have names that differ only in case or Unicode form, which many systems take as one name; rename one of them.`);
    if (earlier.kind !== kind) throw refused(`The entries hold ${shownName(path)} both as a file and as a folder.`);
    if (kind === 'file' && named) throw refused(`The entries hold ${shownName(path)} twice; each path may appear only once.`);
    const first = named && !earlier.named;
    if (first) earlier.named = true;
    return first;
  }
}

