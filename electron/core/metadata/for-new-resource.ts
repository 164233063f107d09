import type { DescriptiveMetadata, Target, TargetContext } from '../target.js';
import { metadataInArchive, type ArchiveFiles } from './found-at-top.js';

// The descriptive metadata a new top-level resource is created with (the executors in
// jobs/executors.ts ask here), and the notes on what could not be carried: a source that
// could not say, or a destination that keeps none. What a destination that keeps metadata
// could not hold its own writer names (WriteOptions.metadata).

export interface CarriedMetadata {
  /** for WriteOptions.metadata; absent when there is none to carry, or nowhere to keep it */
  metadata?: DescriptiveMetadata;
  notes: string[];
}

/** A transfer carries the source's metadata (Target.describe), or the copy a person `reviewed` instead. */
export async function metadataForTransfer(
  source: Target,
  sourceCtx: TargetContext,
  sourceId: string,
  destination: Target,
  containerId: string | null,
  reviewed?: DescriptiveMetadata,
): Promise<CarriedMetadata> {
  if (containerId !== null || (!source.describe && !reviewed)) return { notes: [] };
  return carried(`The ${source.info.readable_name} resource`, async () => reviewed ?? (await source.describe!(sourceCtx, sourceId)), destination);
}

/**
 * An upload carries what the ZIP or bag says of itself: a ro-crate-metadata.json or
 * CITATION.cff (metadataInArchive). A destination that keeps no metadata loses nothing: the
 * files that say it are written with the rest, and describe it there.
 */
export async function metadataForUpload(archive: ArchiveFiles, destination: Target, containerId: string | null): Promise<CarriedMetadata> {
  if (containerId !== null || !destination.info.keepsMetadata) return { notes: [] };
  return carried('The uploaded ZIP', () => metadataInArchive(archive), destination);
}

async function carried(from: string, read: () => Promise<DescriptiveMetadata | null>, destination: Target): Promise<CarriedMetadata> {
  let metadata: DescriptiveMetadata | null;
  try {
    metadata = await read();
  } catch (error) {
    return { notes: [`${from}'s descriptive metadata could not be read (${error instanceof Error ? error.message : String(error)}); none was carried.`] };
  }
  const fields = Object.keys(metadata ?? {});
  if (!metadata || fields.length === 0) return { notes: [] };
  if (!destination.info.keepsMetadata) {
    return { notes: [`The destination (${destination.info.readable_name}) keeps no descriptive metadata: the source's ${fields.join(', ')} were not carried (ferry-provenance.json names the source).`] };
  }
  return { metadata, notes: [] };
}
