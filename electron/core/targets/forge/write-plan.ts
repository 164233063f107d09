import { throwIfAborted } from '../../errors.js';
import type { Entry, WriteOptions, WriteOutcome } from '../../target.js';
import { belowTop, plannedEntries, type PlanDestination } from '../../plan/write-plan.js';

/** What a forge writer knows of a path already in the repository's tree. */
export interface ExistingItem {
  type: 'blob' | 'tree' | 'commit';
}

export interface ForgeWriteStart<R> {
  /** paths relative to the destination (for a new repository: below its top folder) */
  entries: Entry[];
  outcome: WriteOutcome;
  repo: R;
  /** a top-level write: the source's top folder, which `entries` are relative to (forge/git-push-write.ts Landing) */
  top: string | null;
  /** entry path → path in the repository */
  toRepoPath(path: string): string;
}

/**
 * The first steps of a write on any git forge: the entries' metadata, as planned (bytes are
 * opened later, one file at a time; every path already judged as one git can store, by the
 * core's planner); for a top-level write, the new repository created from the one top folder
 * and reported as `newResource`.
 *
 * The new repository is told to the job (WriteOptions.onNewResource) the moment the forge has
 * made it, before any byte is hashed or pushed: a job paused, stopped or killed between the
 * create and the push is resumed as a push into that repository (jobs/executors.ts
 * `madeByEarlierRun`) instead of making "Name-2". `createRepository` must therefore do nothing
 * after the create that could stop the write.
 */
export async function startForgeWrite<R>(
  forge: PlanDestination,
  source: AsyncIterable<Entry>,
  options: WriteOptions,
  dest: { repo: R; prefix: string } | null,
  createRepository: (title: string) => Promise<{ repo: R; newResource: { id: string; title: string } }>,
): Promise<ForgeWriteStart<R>> {
  const planned = await plannedEntries(forge, dest === null ? null : 'container', source, options);
  const entries = planned.top === null ? planned.entries : belowTop(planned.top, planned.entries);
  const outcome: WriteOutcome = { created: [], updated: [], ignored: [], fileErrors: [] };
  let target = dest;
  if (target === null) {
    const created = await createRepository(planned.top!);
    outcome.newResource = created.newResource;
    options.onNewResource?.(created.newResource);
    target = { repo: created.repo, prefix: '' };
  }
  const { prefix } = target;
  return { entries, outcome, repo: target.repo, top: dest === null ? planned.top : null, toRepoPath: (path) => (prefix ? `${prefix}/${path}` : path) };
}

export interface ScreenContext<T extends ExistingItem> {
  existing: Map<string, T>;
  toRepoPath(path: string): string;
  /** the repository as a person names it, e.g. "owner/name" */
  where: string;
  /** what stands in a file's way when the tree has something else at its path */
  clashNoun: string;
}

/**
 * The files still to be looked at, with what each would replace. The checks every forge makes
 * the same way are settled in `outcome` here: a folder (or submodule) at the file's path, a file
 * where one of its folders should be, and, under `ignore`, a file that already exists.
 */
export function* filesToWrite<T extends ExistingItem>(
  entries: Entry[],
  context: ScreenContext<T>,
  options: WriteOptions,
  outcome: WriteOutcome,
): Generator<{ entry: Entry; repoPath: string; current: T | undefined }> {
  const { existing, where } = context;
  for (const entry of entries) {
    throwIfAborted(options.signal);
    if (entry.kind !== 'file') continue;
    const repoPath = context.toRepoPath(entry.path);
    const current = existing.get(repoPath);
    if (current && current.type !== 'blob') {
      outcome.fileErrors.push({ path: entry.path, error: `A ${context.clashNoun} named "${entry.path}" already exists in ${where}; the file was not written.` });
      continue;
    }
    const blockedBy = ancestors(repoPath).find((p) => existing.get(p)?.type === 'blob');
    if (blockedBy) {
      outcome.fileErrors.push({ path: entry.path, error: `"${blockedBy}" is a file in ${where}, so nothing can be written below it.` });
      continue;
    }
    if (current && options.duplicateAction === 'ignore') {
      outcome.ignored.push(entry.path);
      continue;
    }
    yield { entry, repoPath, current };
  }
}

/** Git keeps no empty folders: each folder entry with no file below it is reported, not dropped silently. */
export function reportEmptyFolders(entries: Entry[], context: Pick<ScreenContext<ExistingItem>, 'existing' | 'toRepoPath'>, service: string, outcome: WriteOutcome): void {
  const filePaths = entries.filter((e) => e.kind === 'file').map((e) => e.path);
  for (const entry of entries) {
    if (entry.kind !== 'folder') continue;
    const hasFile = filePaths.some((p) => p.startsWith(`${entry.path}/`));
    if (!hasFile && !context.existing.has(context.toRepoPath(entry.path))) {
      outcome.fileErrors.push({ path: entry.path, error: `Git repositories cannot hold empty folders, so "${entry.path}" was not created on ${service}.` });
    }
  }
}

function ancestors(path: string): string[] {
  const parts = path.split('/');
  return parts.slice(0, -1).map((_, i) => parts.slice(0, i + 1).join('/'));
}
