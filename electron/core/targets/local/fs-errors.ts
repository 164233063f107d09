// Node's file system errors name absolute paths; the API must not. These turn them into
// FerryErrors that name the path relative to the workspace and say what to do.

import { FerryError, forbidden, notFound } from '../../errors.js';
import { isCode } from './walk.js';

/** Errors that concern one file only: a write reports them per file and goes on. */
export const PER_FILE_CODES = ['EACCES', 'EPERM', 'ENAMETOOLONG', 'EINVAL', 'EILSEQ'] as const;

export function toFerryError(error: unknown, relativePath: string): unknown {
  if (error instanceof FerryError || typeof error !== 'object' || error === null || !('code' in error)) return error;
  const where = relativePath === '' ? 'the workspace folder' : `'${relativePath}'`;
  if (isCode(error, 'ENOENT', 'ENOTDIR', 'ELOOP')) return notFound(`There is no file or folder ${where} in the local workspace.`);
  if (isCode(error, 'EACCES', 'EPERM')) return forbidden(`Ferry is not allowed to access ${where} (permission denied); check the file's permissions.`);
  if (isCode(error, 'EROFS')) return forbidden(`${where} is on a read-only disk.`);
  if (isCode(error, 'ENAMETOOLONG')) return new FerryError(400, 'bad_request', `The name or path ${where} is too long for this disk.`);
  if (isCode(error, 'ENOSPC', 'EDQUOT')) return new FerryError(507, 'internal_error', `The disk holding the workspace is full (while writing ${where}); free some space and try again.`);
  return new FerryError(500, 'internal_error', `A file system error (${String((error as NodeJS.ErrnoException).code)}) stopped work on ${where}.`);
}

/** A sentence for a per-file error in a write report. */
export function describePerFileError(error: unknown, relativePath: string): string {
  const mapped = toFerryError(error, relativePath);
  return mapped instanceof Error ? mapped.message : `Could not write '${relativePath}'.`;
}
