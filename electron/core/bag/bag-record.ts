import type { Readable } from 'node:stream';
import { PROVENANCE_FILE } from '../provenance/format.js';

// The provenance record an uploaded bag carries: Ferry's bags hold it as a tag file at the
// bag's top (beside bagit.txt), outside the payload the upload reader hands the writer. The
// upload reader finds it in the central directory it has already read (one reader of central
// directories: zip/central-directory.ts) and reads it here, so the upload's record extends it
// instead of starting anew.

/** a record bigger than this is not one Ferry wrote; it is not read */
const MAX_RECORD_BYTES = 64 * 1024 * 1024;

/** A tag file of the bag, as the upload reader found it. */
export interface TagFile {
  /** relative to the bag's top */
  path: string;
  size: number;
  open(): Promise<Readable>;
}

/** The text of the bag's `ferry-provenance.json` among its tag files, or null when it has none (or one too big to be Ferry's). */
export async function carriedRecord(tagFiles: readonly TagFile[]): Promise<string | null> {
  const record = tagFiles.find((file) => file.path === PROVENANCE_FILE);
  if (record === undefined || record.size > MAX_RECORD_BYTES) return null;
  const chunks: Buffer[] = [];
  for await (const chunk of await record.open()) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
