import { compact, knownFields, type DescriptiveMetadata } from './model.js';
import { CITATION_CFF, readCitationCff } from './citation-cff.js';
import { RO_CRATE_METADATA, readRoCrate } from './ro-crate.js';

/** Files larger than this at the top of a folder are not metadata files Ferry reads. */
export const METADATA_FILE_MAX_BYTES = 1024 * 1024;

/**
 * The descriptive metadata a folder, ZIP or bag says of itself in a file at its top:
 * `ro-crate-metadata.json` first (the richer of the two), else `CITATION.cff`. `readTop`
 * answers a top-level file's text, or null when it is not there. Null when neither is there
 * or can be read.
 */
export async function metadataAtTop(readTop: (name: string) => Promise<string | null>): Promise<DescriptiveMetadata | null> {
  const crate = await readTop(RO_CRATE_METADATA);
  const fromCrate = crate === null ? null : readRoCrate(crate);
  if (fromCrate) return fromCrate;
  const cff = await readTop(CITATION_CFF);
  return cff === null ? null : readCitationCff(cff);
}

/** What metadataInArchive reads of an uploaded ZIP or bag (bag/upload-reader.ts UploadArchive). */
export interface ArchiveFiles {
  kind: 'bag' | 'plain';
  /** top-level names of the payload (for a bag, under data/) */
  topLevel: string[];
  /** those of them that are files */
  topLevelFiles: string[];
  readSmallFile(where: 'payload' | 'tag', path: string, maxBytes: number): Promise<string | null>;
}

/**
 * The descriptive metadata an uploaded ZIP or bag says of itself, read at each place such a
 * file may sit: a bag's own tag files (where Ferry's bags keep their RO-Crate, beside
 * bagit.txt), the top of the payload (the ZIP's, or the bag's data/), and the payload's one top
 * folder (the folder that becomes the new resource). Where they differ, the innermost wins
 * field by field, and the outer ones fill what it leaves unsaid: the files inside are the
 * authors' own description of the work, the bag's is its packager's. Null when none says
 * anything.
 */
export async function metadataInArchive(archive: ArchiveFiles): Promise<DescriptiveMetadata | null> {
  const places: { where: 'payload' | 'tag'; prefix: string }[] = [];
  if (archive.kind === 'bag') places.push({ where: 'tag', prefix: '' });
  places.push({ where: 'payload', prefix: '' });
  const [top] = archive.topLevel;
  if (archive.topLevel.length === 1 && !archive.topLevelFiles.includes(top!)) places.push({ where: 'payload', prefix: `${top}/` });
  let merged: DescriptiveMetadata = {};
  for (const { where, prefix } of places) {
    const found = await metadataAtTop((name) => archive.readSmallFile(where, prefix + name, METADATA_FILE_MAX_BYTES));
    if (found) merged = { ...merged, ...compact(found) };
  }
  return knownFields(merged).length > 0 ? merged : null;
}
