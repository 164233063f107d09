// Shared by this folder's tests: temp workspaces, entries from in-memory trees, collecting.

import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach } from 'vitest';
import type { Entry, TargetContext, WriteOptions } from '../../target.js';

export const ctx = (): TargetContext => ({ token: 'access-key-not-checked-here', signal: new AbortController().signal });

export const writeOptions = (duplicateAction: 'ignore' | 'update', signal = new AbortController().signal): WriteOptions => ({
  duplicateAction,
  signal,
  jobLabel: 'Ferry test',
});

export async function tempDir(label: string): Promise<{ dir: string; cleanup(): Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), `ferry-local-${label}-`));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** A fresh temp folder for each test of the file that calls this at its top: `.dir` inside a test. */
export function tempDirEach(label: string): { readonly dir: string } {
  const current = { dir: '' };
  let cleanup = async (): Promise<void> => undefined;
  beforeEach(async () => {
    ({ dir: current.dir, cleanup } = await tempDir(label));
  });
  afterEach(() => cleanup());
  return current;
}

export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of iterable) items.push(item);
  return items;
}

/** Entries for a tree given as { 'Top/a.txt': 'bytes', 'Top/empty/': null } (folders end with '/'). */
export async function* entriesOf(tree: Record<string, string | Buffer | null>, mtime: Date | null = null): AsyncGenerator<Entry> {
  for (const [key, content] of Object.entries(tree)) {
    const isFolder = key.endsWith('/');
    const bytes = content === null ? Buffer.alloc(0) : Buffer.from(content);
    yield {
      path: isFolder ? key.slice(0, -1) : key,
      kind: isFolder ? 'folder' : 'file',
      size: isFolder ? null : bytes.length,
      mtime,
      hashes: {},
      open: async () => Readable.from([bytes]),
    };
  }
}
