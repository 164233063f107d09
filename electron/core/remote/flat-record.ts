import { badRequest, throwIfAborted } from '../errors.js';
import type { Entry, WriteOptions, WriteOutcome } from '../target.js';

/**
 * Records that hold files but no folders (a Zenodo deposition, a figshare item). A sub-path
 * is flattened into the file name with this separator (`raw/run1.csv` → `raw__run1.csv`), so
 * a folder can still be deposited and every file keeps a distinct, recognisable name. Reading
 * back does not split names again (a file may really be called `a__b`).
 */
export const FOLDER_SEPARATOR = '__';

/**
 * The name `relativePath` gets in a flat record. The first time a write flattens a sub-path,
 * `outcome.notes` says so, naming `service` (e.g. "Zenodo"): the folders are not kept as
 * folders, and a person should not find that out later.
 */
export function flatName(relativePath: string, outcome: WriteOutcome, service: string): string {
  const name = relativePath.split('/').join(FOLDER_SEPARATOR);
  if (name !== relativePath && !outcome.notes?.some((note) => note.startsWith(flattenedNotePrefix(service)))) {
    outcome.notes = [
      ...(outcome.notes ?? []),
      `${flattenedNotePrefix(service)} files in subfolders were stored with their folder path in their names ('${relativePath}' as '${name}'); Ferry does not split such names into folders again when it reads them.`,
    ];
  }
  return name;
}

const flattenedNotePrefix = (service: string) => `${service} keeps no folders:`;

/**
 * A top-level write into a new record: every entry must sit under one top folder, which names
 * the record. `createRecord` runs when the first entry arrives (an upload of only empty folders
 * still makes its record); each file is then handed to `upload` with its path below the top
 * folder. Answers the record, or null when there were no entries. `newRecord` names it in
 * messages ("A new Zenodo deposition").
 */
export async function writeBelowOneTopFolder<R>(
  entries: AsyncIterable<Entry>,
  options: WriteOptions,
  outcome: WriteOutcome,
  newRecord: string,
  createRecord: (top: string) => Promise<R>,
  upload: (record: R, entry: Entry, relativePath: string) => Promise<void>,
): Promise<R | null> {
  let top: string | null = null;
  let record: R | null = null;
  for await (const entry of entries) {
    throwIfAborted(options.signal);
    const [head, ...rest] = entry.path.split('/');
    if (top === null) {
      top = head as string;
      record = await createRecord(top);
    } else if (head !== top) {
      throw badRequest(`${newRecord} is made from one top folder; '${entry.path}' is outside '${top}'.`);
    }
    if (entry.kind === 'folder') continue;
    if (rest.length === 0) {
      outcome.fileErrors.push({ path: entry.path, error: 'A top-level upload needs its files inside one top folder.' });
      continue;
    }
    await upload(record as R, entry, rest.join('/'));
  }
  return record;
}
