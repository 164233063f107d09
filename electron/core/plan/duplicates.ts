import type { DuplicateFileAction, FileConflict, FileFacts, WriteDuplicateAction } from '../../../shared/api.js';
import { throwIfAborted } from '../errors.js';
import type { Entry, ResourceNode, Target, TargetContext } from '../target.js';
import { describeStoredFile, factsOfEntry } from '../file-facts.js';
import { shownName } from '../zip/entry-name.js';
import { judge, sharedAlgorithms } from '../jobs/check-compare.js';
import { namingProblem } from './naming-rules.js';
import { foldName } from '../name-fold.js';
import { WritePlan, type PlannedEntry } from './write-plan.js';

// Duplicates resolved once, in the core, for every target (issue #22). A target's write()
// honours two actions itself: `ignore` (leave an existing file) and `update` (replace it when
// the bytes differ). `newer` (replace only when the source's modification time is later) and
// `rename` (keep both: the new file goes under a free name `a (2).txt`), and per-file choices,
// are decided here after planning: each destination folder the write touches is listed once,
// every planned file is judged against it, and the target is handed a write where left-out
// files are gone (reported as ignored) and the rest are written — so no target needs to
// know these actions, and each gets them alike. `update` is handed over only when some file is
// to be replaced; otherwise `ignore`, so nothing that appeared since the listing is overwritten.

/** What a job asks for duplicates. */
export interface DuplicateRequest {
  /** where the write goes; null: a new top-level resource, where nothing exists yet */
  containerId: string | null;
  /** the job's action, for every file without a choice of its own */
  action: DuplicateFileAction;
  /** per file, by its path as the source names it */
  choices?: Readonly<Record<string, DuplicateFileAction>>;
  /** an entry's path → the path as the source names it (the key of `choices`); default: the same */
  sourcePathOf?: (path: string) => string;
  /**
   * True for a file an earlier run of the job completed (its resume journal): it is not judged
   * again — what it finds there is that run's own write — and the journal leaves it out later.
   */
  completed?: (entry: Entry) => boolean;
  /**
   * An earlier run of this job wrote here (a resumed run). A file it put in place may be
   * missing from its journal (a crash before the file's mark reached the disk), so a clash to
   * be renamed whose stored file is the entry's bytes (sameFile) is taken as that run's copy
   * and left out, not copied a second time under a new name.
   */
  resumed?: boolean;
}

/** A write with its duplicates decided: what to hand the target, and what was left out or renamed. */
export interface ResolvedWrite {
  plan: WritePlan;
  /** the plan's entries with the left-out ones still in place (renamed as handed over), for the provenance record */
  withLeftOut: AsyncIterable<Entry>;
  /** what the target is told for every file it is handed */
  writeAction: WriteDuplicateAction;
  /** entry paths left out because the destination keeps its file: the report's ignored */
  ignored: string[];
  /** a renamed entry's new path → its path as planned */
  renamedFrom: ReadonlyMap<string, string>;
  /** sentences for the report: files left as they were for a reason a person should know */
  notes: string[];
}

/** A planned file whose name the destination's listing already holds. */
interface Clash {
  planned: PlannedEntry;
  /** what is there: a file, or (kind `container`) a folder */
  existing: ResourceNode;
  /** the stored names already in that folder and planned for it, folded: where a new name must not go */
  taken: Set<string>;
}

/** Only `newer`, `rename` and per-file choices need a look at the destination; the two plain actions are the target's own. */
function needsResolution(request: Pick<DuplicateRequest, 'action' | 'choices'>): boolean {
  return request.action === 'newer' || request.action === 'rename' || Object.keys(request.choices ?? {}).length > 0;
}

/** Decides every planned file's fate against the destination's listing (see the top of this file). */
export async function resolveDuplicates(destination: Target, ctx: TargetContext, plan: WritePlan, request: DuplicateRequest): Promise<ResolvedWrite> {
  const untouched = { plan, withLeftOut: plan, ignored: [], renamedFrom: new Map<string, string>(), notes: [] };
  if (!needsResolution(request)) return { ...untouched, writeAction: request.action === 'update' ? 'update' : 'ignore' };
  // A new top-level resource holds nothing yet (the target names it distinctly if its title
  // is taken): nothing is replaced, and nothing needs a new name.
  if (request.containerId === null) return { ...untouched, writeAction: 'ignore' };
  const completed = request.completed ?? (() => false);
  const clashes = (await clashesOf(destination, ctx, plan, request.containerId)).filter((clash) => !completed(clash.planned.entry));
  const sourcePathOf = request.sourcePathOf ?? ((path: string) => path);
  const ignored: string[] = [];
  const notes: string[] = [];
  const renamedFrom = new Map<string, string>();
  const actionOf = (clash: Clash) => request.choices?.[sourcePathOf(clash.planned.entry.path)] ?? request.action;
  const looksAtStored = (action: DuplicateFileAction) => action === 'newer' || (action === 'rename' && request.resumed === true);
  // the stored files' facts, only where `newer` (or a resumed run's `rename`) asks for them, looked at a few at once
  const stored = await inTurns(clashes, async (clash): Promise<FileFacts | null> =>
    looksAtStored(actionOf(clash)) && clash.existing.kind === 'item' ? factsOf(destination, ctx, clash.existing) : null,
  );
  const replaced = new Map<PlannedEntry, PlannedEntry | null>();
  clashes.forEach((clash, i) => {
    const { entry } = clash.planned;
    const facts = stored[i] ?? null;
    const earlierRunsCopy = request.resumed === true && actionOf(clash) === 'rename' && facts !== null && sameFile(entry, facts);
    const { keep, note } = earlierRunsCopy ? { keep: null, note: undefined } : decide(destination, clash, actionOf(clash), facts);
    if (note !== undefined) notes.push(note);
    if (keep === null) ignored.push(entry.path);
    else if (keep.entry.path !== entry.path) renamedFrom.set(keep.entry.path, entry.path);
    replaced.set(clash.planned, keep);
  });
  // `update` only when a file is to be replaced: otherwise a file that appeared since the
  // listing is kept, never overwritten by a file that was to be new or renamed
  const writeAction = [...replaced.values()].some((keep) => keep?.onDuplicate === 'update') ? 'update' : 'ignore';
  const entries = plan.entries.flatMap((planned): PlannedEntry[] => {
    const decided = replaced.get(planned);
    if (decided === undefined) return [{ ...planned, onDuplicate: writeAction }];
    return decided === null ? [] : [{ ...decided, onDuplicate: decided.onDuplicate === 'update' ? 'update' : writeAction }];
  });
  const withLeftOut = new WritePlan(
    plan.entries.map((planned) => replaced.get(planned) ?? planned),
    plan.top,
  );
  return { plan: new WritePlan(entries, plan.top), withLeftOut, writeAction, ignored, renamedFrom, notes };
}

/**
 * Every planned file the destination already holds under its stored name, with both sides'
 * facts (what each knows without reading bytes): a conflicts preview before a job starts.
 */
export async function previewConflicts(destination: Target, ctx: TargetContext, plan: WritePlan, containerId: string | null): Promise<FileConflict[]> {
  if (containerId === null) return [];
  const clashes = await clashesOf(destination, ctx, plan, containerId);
  return inTurns(clashes, async ({ planned, existing }) => ({
    path: planned.entry.path,
    destination_path: planned.storedAs!,
    source: factsOfEntry(planned.entry),
    destination: existing.kind === 'item' ? { id: existing.id, ...(await factsOf(destination, ctx, existing)) } : null,
  }));
}

/**
 * Whether the source's time is later than the stored file's, in whole seconds: many services
 * keep no finer time (WebDAV's getlastmodified is an HTTP date), so a finer difference within
 * one second is no evidence (as rclone's modify window) and replaces nothing. `unknown` when
 * either side has no time.
 */
export function newerVerdict(source: Date | null, stored: string | null): 'newer' | 'not newer' | 'unknown' {
  const storedTime = stored === null ? NaN : Date.parse(stored);
  if (source === null || Number.isNaN(source.getTime()) || Number.isNaN(storedTime)) return 'unknown';
  return Math.floor(source.getTime() / 1000) > Math.floor(storedTime / 1000) ? 'newer' : 'not newer';
}

/**
 * Whether a stored file holds the entry's bytes, by what the two sides say without reading:
 * a hash both give (check-compare.ts judge), else the same size and the same modification
 * time to the second (a Ferry write keeps the source's time where the destination can).
 */
export function sameFile(entry: Entry, stored: FileFacts): boolean {
  const algorithms = sharedAlgorithms(Object.keys(entry.hashes), Object.keys(stored.hashes));
  const judgement = judge(entry.path, { kind: 'file', size: entry.size, hashes: entry.hashes }, { kind: 'file', size: stored.size, hashes: stored.hashes }, algorithms);
  if (judgement.verdict === 'matched') return true;
  if (judgement.verdict !== 'no_common_hash' || judgement.sizes !== 'equal') return false;
  const storedTime = stored.date_modified === null ? NaN : Date.parse(stored.date_modified);
  return entry.mtime !== null && !Number.isNaN(storedTime) && Math.floor(entry.mtime.getTime() / 1000) === Math.floor(storedTime / 1000);
}

/** `a.txt` → `a (2).txt`, `a (3).txt` …: the first name not taken. A leading dot is not an extension (`.env` → `.env (2)`). */
export function freeName(name: string, isTaken: (candidate: string) => boolean): string {
  const dot = name.lastIndexOf('.');
  const [stem, extension] = dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, ''];
  for (let n = 2; ; n++) {
    const candidate = `${stem} (${n})${extension}`;
    if (!isTaken(candidate)) return candidate;
  }
}

/** The entry under the first free name in its folder; the name is taken at once, so the next rename there does not choose it too. */
function renamed({ planned, taken }: Clash): PlannedEntry {
  const stored = planned.storedAs!;
  const slash = stored.lastIndexOf('/');
  const storedName = stored.slice(slash + 1);
  // a target that flattens folders stores `raw__a.csv` for `raw/a.csv`: the new name goes on
  // the entry's own last segment, and the stored name follows from it
  const entryName = planned.entry.path.slice(planned.entry.path.lastIndexOf('/') + 1);
  const prefix = storedName.slice(0, storedName.length - entryName.length);
  const name = freeName(entryName, (candidate) => taken.has(foldName(prefix + candidate)));
  taken.add(foldName(prefix + name));
  const path = planned.entry.path.slice(0, planned.entry.path.length - entryName.length) + name;
  const entry: Entry = { ...planned.entry, path };
  // a new name: nothing there to replace (`ignore` keeps one that appeared since the listing)
  return { entry, storedAs: stored.slice(0, slash + 1) + prefix + name, onDuplicate: 'ignore' };
}

/** Why the destination would refuse a renamed file's new name (its naming rules, its checkName), or null. */
function newNameProblem(destination: Target, planned: PlannedEntry): string | null {
  const name = planned.storedAs!.slice(planned.storedAs!.lastIndexOf('/') + 1);
  return namingProblem(destination.namingRules, name, 'file') ?? destination.checkName?.(name) ?? null;
}

/**
 * One clash's fate: the entry to hand over (null: left out, the destination keeps its file)
 * and, where a person should know why, a sentence. `stored`: the stored file's facts, looked
 * at for `newer` only.
 */
function decide(destination: Target, clash: Clash, action: DuplicateFileAction, stored: FileFacts | null): { keep: PlannedEntry | null; note?: string } {
  const { entry } = clash.planned;
  const service = destination.info.readable_name;
  const replace = { keep: { ...clash.planned, onDuplicate: 'update' as const } };
  switch (action) {
    case 'ignore':
      return { keep: null };
    case 'update':
      return replace;
    case 'newer': {
      // a folder of that name has no time to compare: handed over, for the target to refuse in its own words
      if (stored === null) return replace;
      const verdict = newerVerdict(entry.mtime, stored.date_modified);
      if (verdict === 'newer') return replace;
      return verdict === 'unknown' ? { keep: null, note: unknownTimeNote(entry.path, service) } : { keep: null };
    }
    case 'rename': {
      const named = renamed(clash);
      const problem = newNameProblem(destination, named);
      if (problem === null) return { keep: named };
      const note = `${shownName(entry.path)} was left as it is on ${service}: the free name ${shownName(named.storedAs!)} cannot be used there (${problem}). Rename the file there or here and copy it again.`;
      return { keep: null, note };
    }
  }
}

/** Planned files whose stored names the destination holds; each folder the write touches is listed once. */
async function clashesOf(destination: Target, ctx: TargetContext, plan: WritePlan, containerId: string): Promise<Clash[]> {
  const folders = new DestinationFolders(destination, ctx, containerId);
  const plannedNames = new Map<string, Set<string>>();
  for (const planned of plan.entries) {
    if (planned.storedAs === null || planned.storedAs === '') continue;
    const [folder, name] = split(planned.storedAs);
    let names = plannedNames.get(foldName(folder));
    if (!names) plannedNames.set(foldName(folder), (names = new Set()));
    names.add(foldName(name));
  }
  const clashes: Clash[] = [];
  for (const planned of plan.entries) {
    if (planned.entry.kind !== 'file' || planned.storedAs === null) continue;
    const [folder, name] = split(planned.storedAs);
    const listed = await folders.children(folder);
    const existing = listed?.get(foldName(name));
    if (!listed || !existing) continue;
    // one set per folder, shared by its clashes: a name one rename takes is taken for the next
    const taken = plannedNames.get(foldName(folder))!;
    for (const title of listed.keys()) taken.add(title);
    clashes.push({ planned, existing, taken });
  }
  return clashes;
}

/**
 * The destination's folders below the container, each listed at most once, by their path
 * (folded): a folder the write would make is not there yet (null), and nothing below it is
 * listed.
 */
class DestinationFolders {
  private readonly listed = new Map<string, Promise<Map<string, ResourceNode> | null>>();

  constructor(
    private readonly target: Target,
    private readonly ctx: TargetContext,
    containerId: string,
  ) {
    this.listed.set('', this.list(containerId));
  }

  /** The folder's children by folded title, or null when the folder does not exist there. */
  children(folder: string): Promise<Map<string, ResourceNode> | null> {
    const key = foldName(folder);
    let children = this.listed.get(key);
    if (!children) {
      const [parent, name] = split(folder);
      children = this.children(parent).then((siblings) => {
        const node = siblings?.get(foldName(name));
        return node?.kind === 'container' ? this.list(node.id) : null;
      });
      this.listed.set(key, children);
    }
    return children;
  }

  private async list(id: string): Promise<Map<string, ResourceNode>> {
    const scope = { container: id };
    const byName = new Map<string, ResourceNode>();
    const batches = this.target.listBatches?.(this.ctx, scope) ?? oneByOne(this.target.list(this.ctx, scope));
    for await (const batch of batches) {
      throwIfAborted(this.ctx.signal);
      for (const node of batch) byName.set(foldName(node.title), node);
    }
    return byName;
  }
}

async function* oneByOne(nodes: AsyncIterable<ResourceNode>): AsyncIterable<readonly ResourceNode[]> {
  for await (const node of nodes) yield [node];
}

/** `a/b/c.txt` → [`a/b`, `c.txt`]; `c.txt` → [``, `c.txt`]. */
function split(path: string): [string, string] {
  const slash = path.lastIndexOf('/');
  return [path.slice(0, Math.max(slash, 0)), path.slice(slash + 1)];
}

/** A stored file's facts; one that cannot be looked at has none (a `newer` then says its time is unknown). */
async function factsOf(destination: Target, ctx: TargetContext, node: ResourceNode): Promise<FileFacts> {
  try {
    const facts = await describeStoredFile(destination, ctx, node.id);
    if (facts) return facts;
  } catch {
    throwIfAborted(ctx.signal);
  }
  return { size: null, date_modified: null, hashes: {} };
}

function unknownTimeNote(path: string, service: string): string {
  return `${shownName(path)} was left as it is on ${service}: the modification time of one of the two files is not known, so it could not be told which is newer. Choose "Replace if different" for it to replace it.`;
}

/** How many stored files are looked at at once (the listing-sizes route uses as many): enough to hide a remote's latency, few enough to be polite. */
const LOOKS_AT_ONCE = 8;

/** `work` over `items`, at most LOOKS_AT_ONCE at a time; the answers in the items' order. */
async function inTurns<T, R>(items: readonly T[], work: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(LOOKS_AT_ONCE, items.length) }, worker));
  return results;
}
