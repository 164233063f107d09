import type { Readable } from 'node:stream';
import type { FolderMode } from '../../../shared/api.js';
import { writeBagZip, writePlainZip } from '../bag/bag-writer.js';
import { PROVENANCE_FILE, type FolderLayout, type StoredPath } from '../provenance/format.js';
import type { Entry, ReadResult } from '../target.js';
import { FOLDER_SEPARATOR } from './flat-record.js';

// A write to a record that keeps no folders (Zenodo, figshare, InvenioRDM), in the folder
// mode the job was given (header `ferry-folders`): the entries the destination is handed,
// and the layout the provenance record keeps so that reading the record back rebuilds the
// tree (remote/unpacked-record.ts).
//
//   flatten         `raw/run1.csv` → `raw__run1.csv` (the target flattens; nothing changes here)
//   zip-per-folder  each first-level folder → `<folder>.zip` holding `<folder>/…`; files stay files
//   bag             everything → one BagIt ZIP `<title>.zip`, its payload the tree
//
// "First level" is relative to what the record receives: below the top folder for a new
// record (its title), the write's own top level into an existing one. A `ferry-provenance.json`
// at that level is never packed: it is the record the job extends (provenance/recorder.ts).

export interface PackedWrite {
  /** what the destination is handed, in order (a new record's top folder first) */
  entries: Entry[];
  layout: FolderLayout;
}

/** Where the entries come from: a bag's own provenance names it as what was bagged. */
export interface PackedOrigin {
  /** a target name, or "zip" for an uploaded ZIP */
  target: string;
  resourceId: string;
  /** names a bag when a write into a record has no one top-level folder to name it after */
  fallbackTitle: string;
}

export interface PackRequest {
  /** a new record's top folder, or null for a write into a container */
  top: string | null;
  /** the container makes a record of each top-level folder written into it (Target.recordPerTopFolder) */
  recordPerTopFolder: boolean;
  mode: FolderMode;
  origin: PackedOrigin;
}

/**
 * A whole write's entries (judged already: safe paths, a new record's top folder first) as
 * the destination is handed them: one record, or — into a container that makes a record of
 * each top-level folder — each such folder packed as its own record (a top-level file is
 * left as it is, for the target to answer), their layouts together.
 */
export function packWrite(entries: readonly Entry[], request: PackRequest): PackedWrite {
  if (!request.recordPerTopFolder) return packForFlatRecord(entries, request.top, request.mode, request.origin);
  const tops = [...new Set(entries.map((entry) => entry.path.split('/')[0]!))];
  const records = tops.map((top) => {
    const group = entries.filter((entry) => entry.path === top || entry.path.startsWith(`${top}/`));
    const isFile = group.length === 1 && group[0]!.kind === 'file';
    return isFile ? { entries: group, layout: { mode: request.mode, stored: [] } } : packForFlatRecord(group, top, request.mode, request.origin);
  });
  return { entries: records.flatMap((record) => record.entries), layout: { mode: request.mode, stored: records.flatMap((record) => record.layout.stored) } };
}

/**
 * One record's entries: `top`, its top folder (the record's title) when the entries are
 * below one, or null when they go straight into the record.
 */
export function packForFlatRecord(entries: readonly Entry[], top: string | null, mode: FolderMode, origin: PackedOrigin): PackedWrite {
  const prefix = top === null ? '' : `${top}/`;
  const below = (entry: Entry) => entry.path.slice(prefix.length);
  const inRecord = entries.filter((entry) => entry.path !== top);
  const kept = (entry: Entry) => entry.kind === 'file' && below(entry) === PROVENANCE_FILE;
  const head = top === null ? [] : entries.filter((entry) => entry.path === top);
  // one time for every open(), so each writes the same bytes (a ZIP's dates, a bag's Bagging-Date)
  const now = new Date();

  if (mode === 'flatten') {
    const stored = inRecord.filter((entry) => entry.kind === 'file' && below(entry).includes('/')).map((entry) => ({ file: below(entry).split('/').join(FOLDER_SEPARATOR), path: below(entry) }));
    return { entries: [...entries], layout: { mode, stored } };
  }
  if (mode === 'bag') {
    const payload = inRecord.filter((entry) => !kept(entry));
    const firstLevel = [...new Set(payload.map((entry) => below(entry).split('/')[0]!))];
    const title = top ?? (firstLevel.length === 1 && payload.some((entry) => entry.kind === 'folder' && below(entry) === firstLevel[0]) ? firstLevel[0]! : origin.fallbackTitle);
    const file = `${title}.zip`;
    const bag = packed(`${prefix}${file}`, () => writeBagZip(readOf(title, payload, prefix), { targetName: origin.target, resourceId: origin.resourceId, bagName: title, now }));
    return { entries: [...head, bag, ...inRecord.filter(kept)], layout: { mode, stored: [{ file, path: '' }] } };
  }
  const stored: StoredPath[] = [];
  const out: Entry[] = [...head];
  for (const entry of inRecord) {
    if (entry.kind === 'file' && !below(entry).includes('/')) {
      out.push(entry);
      continue;
    }
    // each first-level folder once, with everything below it, where it first appears (named or implied)
    const folder = below(entry).split('/')[0]!;
    if (stored.some((done) => done.path === folder)) continue;
    const tree = inRecord.filter((inner) => below(inner) === folder || below(inner).startsWith(`${folder}/`));
    stored.push({ file: `${folder}.zip`, path: folder });
    out.push(packed(`${prefix}${folder}.zip`, () => writePlainZip(readOf(folder, tree, prefix), { now })));
  }
  return { entries: out, layout: { mode, stored } };
}

/**
 * What a job's report says of a packing mode (flatten says it itself, flat-record.ts), so a
 * person knows what they will find in the record; `recorded`: the layout goes into the
 * provenance record, which is what lets Ferry read the folders back.
 */
export function layoutNote(layout: FolderLayout, service: string, recorded: boolean): string | null {
  if (layout.mode === 'flatten' || layout.stored.length === 0) return null;
  const files = layout.stored.map((stored) => `'${stored.file}'`).join(', ');
  const stored = layout.mode === 'bag' ? `everything was stored as one BagIt ZIP, ${files}` : `each folder was stored as one ZIP (${files})`;
  const back = recorded ? `Ferry reads ${layout.mode === 'bag' ? 'it' : 'them'} back as folders by the record's ${PROVENANCE_FILE}` : `no ${PROVENANCE_FILE} records this, so Ferry reads ${layout.mode === 'bag' ? 'it' : 'them'} back as ZIP files`;
  return `${service} keeps no folders: ${stored}; ${back}.`;
}

/** A file made on demand: every open() writes the ZIP again from the source's entries, the same bytes each time. */
function packed(path: string, write: () => Readable): Entry {
  return { path, kind: 'file', size: null, mtime: null, hashes: {}, open: async () => write() };
}

/** `entries` as a read of `title`, their paths relative to the record (the ZIP's names). */
function readOf(title: string, entries: readonly Entry[], prefix: string): ReadResult {
  async function* relative(): AsyncIterable<Entry> {
    for (const entry of entries) yield { ...entry, path: entry.path.slice(prefix.length) };
  }
  return { title, root: { kind: 'container', kind_name: 'folder', id: title, container: null, title }, entries: relative() };
}
