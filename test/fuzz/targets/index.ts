import { checkOfflineArchive } from './offline-archive.js';
import { checkUploadReader } from './upload-reader.js';

/** Every fuzz target by name: its corpus is test/fuzz/corpus/<name>/, its findings test/fuzz/findings/<name>/. */
export const FUZZ_TARGETS = {
  'upload-reader': checkUploadReader,
  'offline-archive': checkOfflineArchive,
} satisfies Record<string, (bytes: Uint8Array, scratchDir: string) => Promise<string>>;

export type FuzzTargetName = keyof typeof FUZZ_TARGETS;
