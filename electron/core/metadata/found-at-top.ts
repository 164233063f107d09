import type { DescriptiveMetadata } from './model.js';
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
