import { badRequest, throwIfAborted } from '../errors.js';
import type { NamingRules } from '../plan/naming-rules.js';
import type { Entry, WriteOptions, WriteOutcome } from '../target.js';

/**
 * Records that hold files but no folders (a Zenodo deposition, a figshare item). A sub-path
 * is flattened into the file name with this separator (`raw/run1.csv` → `raw__run1.csv`), so
 * a folder can still be deposited and every file keeps a distinct, recognisable name. Reading
 * back does not split names again (a file may really be called `a__b`).
 */
export const FOLDER_SEPARATOR = '__';

export const flatName = (relativePath: string) => relativePath.split('/').join(FOLDER_SEPARATOR);

/** What such a target declares (Target.namingRules): the planner then refuses two paths that would flatten to one name. */
export const FLAT_RECORD_NAMING_RULES: NamingRules = {
  flattenWith: FOLDER_SEPARATOR,
  evidence: 'no folders inside a record: docs/targets/zenodo.md, figshare.md, invenio.md',
};

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
