// The one format of `ferry-provenance.json`, in a downloaded bag and at the top of what an
// upload or transfer wrote: a versioned log with one entry per action, appended to at every
// hop, so the record follows the data. Pure data (no IO): the bag writer, the job hook and
// the offline library all read and write it through this module only.
//
// A record states only what happened: a file is `verified` only when a hash was compared
// and matched, and `verification` says which, or why nothing could be compared.

import type { FolderMode } from '../../../shared/api.js';

export const PROVENANCE_FILE = 'ferry-provenance.json';
export const PROVENANCE_FORMAT = 'ferry-provenance/1';

export type ProvenanceAction = 'download' | 'upload' | 'transfer';

export interface ProvenanceLog {
  format: typeof PROVENANCE_FORMAT;
  /** oldest first */
  entries: ProvenanceEntry[];
  /** the text of an earlier file Ferry could not read: kept whole rather than dropped */
  unreadable_earlier_record?: string;
}

export interface ProvenanceResource {
  /** a target name (e.g. "osf"); "zip" for an uploaded ZIP, "bag" for a downloaded bag */
  target: string;
  resource_id: string | null;
  title: string | null;
  /** a persistent identifier or landing URL (a DOI URL where there is one), when the target gives it */
  identifier?: string;
}

/**
 * The source's hashes against the bytes read: `not-read` when the file's bytes were never
 * read (a duplicate the destination kept), so nothing was checked.
 */
export type FixityStatus = 'ok' | 'mismatch' | 'no-source-hash' | 'not-read';

export interface ProvenanceFile {
  /** where the file now is: in a bag relative to data/; otherwise as written (Entry.path) */
  path: string;
  /** bytes read, or null when the file was never read (an ignored duplicate) */
  size: number | null;
  /** present only when the name had to change on the way */
  source_path?: string;
  /** present only when the source announced a size that differs from the bytes read */
  source_size?: number;
  /** what the source reported (lowercase hex by algorithm); may be empty */
  source_hashes: Record<string, string>;
  /** what Ferry computed of the bytes it read from the source and passed on */
  computed_hashes: Record<string, string>;
  /** computed_hashes are digests the source remembered, taken because the CRC-32 of the bytes read matched */
  hashes_remembered?: true;
  /** source_hashes against computed_hashes */
  fixity: FixityStatus;
  /** uploads and transfers: what the destination reports of the file after the write */
  destination_hashes?: Record<string, string>;
  /** uploads and transfers: what the destination did with the file */
  outcome?: 'created' | 'updated' | 'ignored' | 'failed';
  /** true only when a hash of the stored file was compared with the source's and matched */
  verified: boolean;
  /** a sentence: what was compared, or why nothing could be */
  verification: string;
}

export interface ProvenanceEntry {
  action: ProvenanceAction;
  /** contract timestamp (core/time.ts) */
  at: string;
  /** the job's ticket number; null for a download (no job) */
  job: string | null;
  software: 'Ferry';
  source: ProvenanceResource;
  destination: ProvenanceResource;
  files: ProvenanceFile[];
  /** what the destination could not keep, or could not be recorded, as sentences */
  notes?: string[];
  /** a write to a record that keeps no folders: how it kept them, so a read can rebuild the tree */
  folders?: FolderLayout;
}

/**
 * How a write kept its folders in a record that has none (remote/packed-folders.ts): each
 * stored file that stands for something else, so reading the record back rebuilds exactly
 * those paths and splits or unpacks nothing it did not make.
 */
export interface FolderLayout {
  mode: FolderMode;
  stored: StoredPath[];
}

/** `file`: the name in the record; `path`: what it stands for, relative to the record ('' for all of it). */
export interface StoredPath {
  file: string;
  path: string;
}

export function emptyLog(): ProvenanceLog {
  return { format: PROVENANCE_FORMAT, entries: [] };
}

export function serializeProvenance(log: ProvenanceLog): Buffer {
  return Buffer.from(`${JSON.stringify(log, null, 2)}\n`, 'utf8');
}

/** The log with `entry` appended; the earlier entries are kept as they were. */
export function appendEntry(log: ProvenanceLog | null, entry: ProvenanceEntry): ProvenanceLog {
  const base = log ?? emptyLog();
  return { ...base, entries: [...base.entries, entry] };
}

/**
 * Two records of the same data (the one that came with it, and one already at the
 * destination) as one: every entry once (the same action, job and time is the same entry),
 * oldest first. Neither record's history is lost.
 */
export function mergeLogs(a: ProvenanceLog | null, b: ProvenanceLog | null): ProvenanceLog | null {
  if (!a || !b) return a ?? b;
  const key = (entry: ProvenanceEntry) => `${entry.action}\u0000${entry.job ?? ''}\u0000${entry.at}`;
  const seen = new Set(a.entries.map(key));
  const entries = [...a.entries, ...b.entries.filter((entry) => !seen.has(key(entry)))];
  // stable: entries of one time keep their order
  entries.sort((x, y) => (x.at < y.at ? -1 : x.at > y.at ? 1 : 0));
  const unreadable = [a.unreadable_earlier_record, b.unreadable_earlier_record].filter((text): text is string => text !== undefined);
  return { format: PROVENANCE_FORMAT, entries, ...(unreadable.length > 0 ? { unreadable_earlier_record: unreadable.join('\n') } : {}) };
}

/**
 * Reads a provenance file in this format or in the bag format before it (version 1 of
 * 2025, `ferry_provenance_version: 1`, one download per file). Text that is neither comes
 * back as a log with no entries that keeps it in `unreadable_earlier_record`.
 */
export function parseProvenance(text: string): ProvenanceLog {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ...emptyLog(), unreadable_earlier_record: text };
  }
  // a record comes from an archive or a service: anyone may have written it, so it is read as
  // far as it is well-formed (a file record lacking its hashes is left out), never trusted whole
  if (isObject(value) && value.format === PROVENANCE_FORMAT && Array.isArray(value.entries)) {
    const entries = value.entries.filter(isObject).map((entry) => ({ ...entry, files: wellFormedFiles(entry.files) }));
    return { ...(value as unknown as ProvenanceLog), entries: entries as unknown as ProvenanceEntry[] };
  }
  if (isObject(value) && value.ferry_provenance_version === 1 && Array.isArray(value.files)) {
    return { format: PROVENANCE_FORMAT, entries: [fromBagVersion1({ ...(value as unknown as BagProvenanceV1), files: wellFormedFiles(value.files) })] };
  }
  return { ...emptyLog(), unreadable_earlier_record: text };
}

/** The bag provenance of version 1, as bags downloaded before this format carry it. */
export interface BagProvenanceV1 {
  ferry_provenance_version: 1;
  source_target: string;
  resource_id: string;
  resource_title: string;
  downloaded_at: string;
  files: Omit<ProvenanceFile, 'verified' | 'verification'>[];
}

function fromBagVersion1(old: BagProvenanceV1): ProvenanceEntry {
  return {
    action: 'download',
    at: old.downloaded_at,
    job: null,
    software: 'Ferry',
    source: { target: old.source_target, resource_id: old.resource_id, title: old.resource_title },
    destination: { target: 'bag', resource_id: null, title: null },
    files: old.files.map((file) => ({ ...file, ...bagVerification(file.fixity, file.source_hashes, file.computed_hashes) })),
  };
}

/** The download that made a bag: its first entry, when that is a download. */
export function bagDownloadOf(log: ProvenanceLog): ProvenanceEntry | null {
  const first = log.entries[0];
  return first?.action === 'download' ? first : null;
}

/**
 * A bag's file: what was written into the bag are the bytes read, so the bag's manifests
 * hold computed_hashes, and the file is verified when the source's hash matched them.
 */
export function bagVerification(
  fixity: FixityStatus,
  source: Record<string, string>,
  computed: Record<string, string>,
): Pick<ProvenanceFile, 'verified' | 'verification'> {
  const common = Object.keys(source).filter((algorithm) => computed[algorithm] !== undefined);
  if (fixity === 'ok') return { verified: true, verification: `The ${common.join(' and ')} of the bytes written into the bag matched the source's.` };
  if (fixity === 'mismatch') return { verified: false, verification: `Not verified: the ${common.join(' or ')} of the bytes read did not match the source's.` };
  return { verified: false, verification: 'Not verified: the source reports no hash Ferry could compare.' };
}

/** Compares the algorithms both sides have; none in common means nothing to check. */
export function fixityOf(source: Record<string, string>, computed: Record<string, string>): FixityStatus {
  const common = Object.keys(source).filter((algorithm) => computed[algorithm] !== undefined);
  if (common.length === 0) return 'no-source-hash';
  return common.every((algorithm) => source[algorithm]?.toLowerCase() === computed[algorithm]?.toLowerCase()) ? 'ok' : 'mismatch';
}

/**
 * A bag's download as the offline library reads it (the shape of the version-1 bag file),
 * from a bag file in either format; null when the bag records no download.
 */
export function bagDownloadView(text: string): BagProvenanceV1 | null {
  const download = bagDownloadOf(parseProvenance(text));
  if (!download) return null;
  return {
    ferry_provenance_version: 1,
    source_target: download.source.target,
    resource_id: download.source.resource_id ?? '',
    resource_title: download.source.title ?? '',
    downloaded_at: download.at,
    files: download.files,
  };
}

/** The file records with a path and both hash maps (strings by algorithm); the others dropped. */
function wellFormedFiles<T extends { path: string; source_hashes: Record<string, string>; computed_hashes: Record<string, string> }>(files: unknown): T[] {
  if (!Array.isArray(files)) return [];
  const hashMap = (map: unknown) => isObject(map) && Object.values(map).every((hash) => typeof hash === 'string');
  return files.filter((file): file is T => isObject(file) && typeof file.path === 'string' && hashMap(file.source_hashes) && hashMap(file.computed_hashes));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
