import { controlCharacterIn } from '../zip/entry-name.js';

// The one rule for a path Ferry writes below a destination, whoever supplied it (a ZIP's
// entry, another target's read): it stays inside its folder and is a name every listing can
// show. The ZIP policy (zip/entry-policy.ts) and the write planner (plan/write-plan.ts) both
// ask it, so one bad path gets one answer.

/**
 * Why `path` ('/'-separated) could land outside its folder or cannot be written faithfully,
 * as the rest of a sentence after the path ("… contains ".." and would land outside its
 * folder"), or null. Empty and '.' segments are the caller's: a ZIP normalises them away,
 * the planner refuses them.
 */
export function unsafePathReason(path: string): string | null {
  const outside = 'would land outside its folder';
  if (path.includes('\0')) return 'has a NUL character in its name';
  const control = controlCharacterIn(path);
  if (control !== null) return `has a control character (${control}) in its name; Ferry does not write names that no listing can show. Rename it`;
  if (path.includes('\\')) return 'uses backslashes; paths must use "/" between folders';
  if (path.startsWith('/')) return `has an absolute path and ${outside}`;
  if (/^[A-Za-z]:/.test(path)) return `starts with a drive letter and ${outside}`;
  if (path.split('/').includes('..')) return `contains ".." and ${outside}`;
  // what a file system may make of a segment: Unicode-normalised (NFKC maps fullwidth dots
  // to '.'), trailing dots and spaces dropped (Windows) — none may come out as '..'
  for (const segment of path.normalize('NFKC').split('/')) {
    if (segment !== '.' && segment !== '' && /^[. ]+$/.test(segment)) {
      return `has a folder name made only of dots and spaces, which some systems read as ".."; it ${outside}`;
    }
  }
  return null;
}

/** Why a path has a segment no writer can name (empty, '.'), or null; a ZIP's reader normalises these instead. */
export function emptySegmentReason(path: string): string | null {
  return path === '' || path.split('/').some((segment) => segment === '' || segment === '.') ? 'has an empty or "." part in its path' : null;
}
