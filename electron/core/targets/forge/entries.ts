import { badRequest, throwIfAborted } from '../../errors.js';
import type { NamingRules } from '../../plan/naming-rules.js';
import type { Entry } from '../../target.js';

/**
 * What git cannot store, declared by the git targets (Target.namingRules): a `.git` path
 * segment, in any case (git's verify_path refuses it, as a repository's own folder).
 */
export const GIT_NAMING_RULES: NamingRules = { reservedNames: ['.git'], evidence: "git's verify_path (read-cache.c): no '.git' segment, any case" };

/**
 * Helpers shared by the git writers (GitHub, GitLab, git). Entries are collected first
 * (metadata only — bytes are opened later, one file at a time) so that a whole upload can be
 * checked before anything is created remotely.
 */
export async function collectEntries(source: AsyncIterable<Entry>, signal: AbortSignal): Promise<Entry[]> {
  const entries: Entry[] = [];
  for await (const entry of source) {
    throwIfAborted(signal);
    entries.push(entry);
  }
  return entries;
}

/**
 * A top-level upload holds one top folder: its name becomes the new repository's title and
 * the entries below it its content (paths returned relative to it).
 */
export function splitTopFolder(entries: Entry[]): { top: string; rest: Entry[] } {
  const tops = new Set(entries.map((e) => e.path.split('/')[0] ?? ''));
  const [top] = tops;
  if (tops.size !== 1 || !top) {
    throw badRequest('A new repository is made from exactly one top-level folder; put everything inside one folder and upload again.');
  }
  if (entries.some((e) => e.path === top && e.kind === 'file')) {
    throw badRequest(`"${top}" is a file; a new repository is made from one top-level folder.`);
  }
  const rest = entries
    .filter((e) => e.path !== top)
    .map((e) => ({ ...e, path: e.path.slice(top.length + 1), open: e.open }));
  return { top, rest };
}

/** Refuses paths that could land outside the destination or that git cannot store. */
export function validateRelativePath(path: string): void {
  const parts = path.split('/');
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path) || parts.some((p) => p === '' || p === '.' || p === '..')) {
    throw badRequest(`"${path}" is not a safe relative path; nothing was written.`);
  }
  if (parts.some((p) => p.toLowerCase() === '.git')) {
    throw badRequest(`"${path}" lies inside a ".git" folder, which git repositories cannot contain; nothing was written.`);
  }
}
