import { writeFile } from 'node:fs/promises';
import { rawZip } from '../../electron/core/zip/testing/raw-zip.js';

// A ZIP of `count` empty stored files written in one go: tests and benchmarks need archives
// with 100,000 entries, and a streaming writer takes longer to build those than the
// reading they measure.
export async function writeManyEntriesZip(file: string, count: number, nameOf: (i: number) => string): Promise<void> {
  await writeFile(file, rawZip(Array.from({ length: count }, (_, i) => ({ name: nameOf(i) }))));
}
