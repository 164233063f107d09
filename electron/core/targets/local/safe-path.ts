// Path checks shared by id decoding and writing: a relative path must name something
// inside its base folder, whatever the platform, before any file system call sees it.

import path from 'node:path';

/** Why `relativePath` is unsafe, or null when it is a plain '/'-separated relative path. */
export function checkRelativePath(relativePath: string): string | null {
  if (relativePath.length === 0) return 'the path is empty';
  if (relativePath.includes('\0')) return 'the path contains a NUL character';
  if (relativePath.startsWith('/') || /^[A-Za-z]:/.test(relativePath)) return 'the path is absolute';
  if (relativePath.includes('\\')) return 'the path contains a backslash';
  for (const segment of relativePath.split('/')) {
    if (segment === '') return 'the path has an empty segment';
    if (segment === '.' || segment === '..') return "the path contains '.' or '..'";
    if (process.platform === 'win32' && /[<>:"|?*]/.test(segment)) return 'the path contains a character Windows does not allow';
  }
  return null;
}

/** True when `candidate` (absolute, resolved) is `base` or lies below it. */
export function isInside(base: string, candidate: string): boolean {
  const relative = path.relative(base, candidate);
  return relative === '' || (relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative));
}

/**
 * `name` in `folder`, as path.join would give it without its normalising pass (~1 KB of strings
 * a call; the local writer makes two a file): `folder` an absolute path already normal (made by
 * path.join or joinInside), `name` one segment checkRelativePath passed, or a name made here.
 */
export function inFolder(folder: string, name: string): string {
  return folder.endsWith(path.sep) ? folder + name : folder + path.sep + name;
}

/** The absolute path of a checked relative path under `base` (its segments joined natively). */
export function joinInside(base: string, relativePath: string): string {
  return relativePath === '' ? base : path.join(base, ...relativePath.split('/'));
}
