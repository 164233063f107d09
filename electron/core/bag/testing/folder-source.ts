import { createReadStream } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Entry, ReadResult } from '../../target.js';

// Test support: a ReadResult over a real folder, shaped like a target's read() (the folder
// itself first, each folder before its contents, paths starting with the title).

export interface FolderSourceOptions {
  /** source hashes to announce, by path (as in Entry.path) */
  hashes?: Record<string, Record<string, string>>;
  /** announce no sizes (as a remote that does not know them) */
  unknownSizes?: boolean;
}

export function folderReadResult(folder: string, options: FolderSourceOptions = {}): ReadResult {
  const title = path.basename(folder);
  return {
    title,
    root: { kind: 'container', kind_name: 'folder', id: title, container: null, title },
    entries: walk(folder, title, options),
  };
}

async function* walk(dir: string, entryPath: string, options: FolderSourceOptions): AsyncGenerator<Entry> {
  const info = await stat(dir);
  yield { path: entryPath, kind: 'folder', size: null, mtime: info.mtime, hashes: {}, open: () => Promise.reject(new Error('a folder has no bytes')) };
  const names = (await readdir(dir)).sort();
  for (const name of names) {
    const full = path.join(dir, name);
    const child = `${entryPath}/${name}`;
    const childInfo = await stat(full);
    if (childInfo.isDirectory()) {
      yield* walk(full, child, options);
    } else {
      yield {
        path: child,
        kind: 'file',
        size: options.unknownSizes ? null : childInfo.size,
        mtime: childInfo.mtime,
        hashes: options.hashes?.[child] ?? {},
        open: async () => createReadStream(full, { highWaterMark: 256 * 1024 }),
      };
    }
  }
}

/** Entries from memory, for cases a folder cannot express (errors, generated data). */
export function memoryReadResult(title: string, entries: Entry[]): ReadResult {
  return {
    title,
    root: { kind: 'container', kind_name: 'folder', id: title, container: null, title },
    entries: (async function* () {
      yield* entries;
    })(),
  };
}
