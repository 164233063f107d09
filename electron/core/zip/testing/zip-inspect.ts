import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import yauzl from 'yauzl';

// Test support: look inside a ZIP with yauzl (independently of Ferry's reader) and run
// the system zip tools.

export const run = promisify(execFile);

export interface InspectedEntry {
  name: string;
  compressionMethod: number;
  compressedSize: number;
  uncompressedSize: number;
  mtime: Date;
  externalMode: number;
}

export async function listZip(zipPath: string): Promise<InspectedEntry[]> {
  const zip = await yauzl.openPromise(zipPath, { lazyEntries: true, autoClose: false });
  const entries: InspectedEntry[] = [];
  try {
    for await (const entry of zip.eachEntry()) {
      entries.push({
        name: entry.fileName,
        compressionMethod: entry.compressionMethod,
        compressedSize: entry.compressedSize,
        uncompressedSize: entry.uncompressedSize,
        mtime: entry.getLastModDate(),
        externalMode: entry.externalFileAttributes >>> 16,
      });
    }
  } finally {
    zip.close();
  }
  return entries;
}

export async function readZipText(zipPath: string, name: string): Promise<string> {
  const zip = await yauzl.openPromise(zipPath, { lazyEntries: true, autoClose: false });
  try {
    for await (const entry of zip.eachEntry()) {
      if (entry.fileName !== name) continue;
      const stream = await zip.openReadStreamPromise(entry);
      const chunks: Buffer[] = [];
      for await (const chunk of stream) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    }
  } finally {
    zip.close();
  }
  throw new Error(`no entry ${name} in the ZIP`);
}
