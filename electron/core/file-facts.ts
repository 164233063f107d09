import type { FileFacts } from '../../shared/api.js';
import type { Entry, Target, TargetContext } from './target.js';
import { formatDate } from './time.js';

/** What an entry says of its file, in the API's shape: size, modification time, the hashes its side reports. */
export function factsOfEntry(entry: Entry): FileFacts {
  return { size: entry.size, date_modified: entry.mtime ? formatDate(entry.mtime) : null, hashes: { ...entry.hashes } };
}

/**
 * What a target knows of one stored file without reading its bytes: its read() describes the
 * one entry and opens nothing — detail() may hash a whole file first (the local target does:
 * seconds for a large file). Null when the id reads as no file; throws as read() does.
 */
export async function describeStoredFile(target: Target, ctx: TargetContext, id: string): Promise<FileFacts | null> {
  const read = await target.read(ctx, id);
  const iterator = read.entries[Symbol.asyncIterator]();
  try {
    const first = await iterator.next();
    return !first.done && first.value.kind === 'file' ? factsOfEntry(first.value) : null;
  } finally {
    await iterator.return?.();
  }
}
