import { throwIfAborted } from '../errors.js';
import { PROVENANCE_FILE } from '../provenance/format.js';
import { plannedEntries, type PlanDestination } from '../plan/write-plan.js';
import type { NamingRules } from '../plan/naming-rules.js';
import type { Entry, WriteOptions, WriteOutcome } from '../target.js';

/**
 * Records that hold files but no folders (a Zenodo deposition, a figshare item). A sub-path
 * is flattened into the file name with this separator (`raw/run1.csv` → `raw__run1.csv`), so
 * a folder can still be deposited and every file keeps a distinct, recognisable name. Reading
 * back splits a name again only where the record's provenance says Ferry joined it (a file may
 * really be called `a__b`; remote/unpacked-record.ts). The other folder modes: packed-folders.ts.
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
      `${flattenedNotePrefix(service)} files in subfolders were stored with their folder path in their names ('${relativePath}' as '${name}'); when Ferry reads the record, it splits them into folders again where its ${PROVENANCE_FILE} records them (send ferry-folders: zip-per-folder to store each folder as one ZIP instead).`,
    ];
  }
  return name;
}

const flattenedNotePrefix = (service: string) => `${service} keeps no folders:`;

/** What such a target declares (Target.namingRules): the planner then refuses two paths that would flatten to one name. */
export const FLAT_RECORD_NAMING_RULES: NamingRules = {
  flattenWith: FOLDER_SEPARATOR,
  evidence: 'no folders inside a record: docs/targets/zenodo.md, figshare.md, invenio.md',
};

/**
 * A top-level write into a new record: the entries, judged whole by the core's planner (one
 * top folder, which names the record), then `createRecord`, once (an upload of only empty
 * folders still makes its record); each file is then handed to `upload` with its path below
 * the top folder. Answers the record.
 */
export async function writeBelowOneTopFolder<R>(
  destination: PlanDestination,
  entries: AsyncIterable<Entry>,
  options: WriteOptions,
  createRecord: (top: string) => Promise<R>,
  upload: (record: R, entry: Entry, relativePath: string) => Promise<void>,
): Promise<R> {
  const planned = await plannedEntries(destination, null, entries, options);
  const top = planned.top!;
  const record = await createRecord(top);
  for (const entry of planned.entries) {
    throwIfAborted(options.signal);
    if (entry.kind === 'folder') continue;
    await upload(record, entry, entry.path.slice(top.length + 1));
  }
  return record;
}
