import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Entry, TargetContext, WriteOptions } from '../../electron/core/target.js';
import { planWrite, type PlanDestination } from '../../electron/core/plan/write-plan.js';

/** Helpers the target tests share: in-memory entries, contexts, draining reads. */

/** Entries from a map path → content (null is a folder; a trailing '/' on its key is dropped). */
export async function* entriesFrom(files: Record<string, string | Buffer | null>, options: { withSize?: boolean; withMd5?: boolean } = {}): AsyncIterable<Entry> {
  for (const [path, content] of Object.entries(files)) {
    if (content === null) {
      yield { path: path.replace(/\/+$/, ''), kind: 'folder', size: null, mtime: null, hashes: {}, open: () => Promise.reject(new Error('folder')) };
      continue;
    }
    const bytes = Buffer.isBuffer(content) ? content : Buffer.from(content);
    yield {
      path,
      kind: 'file',
      size: options.withSize === false ? null : bytes.length,
      mtime: null,
      hashes: options.withMd5 ? { md5: md5(bytes) } : {},
      open: async () => Readable.from([bytes]),
    };
  }
}

export const md5 = (bytes: Buffer | string) => createHash('md5').update(bytes).digest('hex');
export const sha1 = (bytes: Buffer | string) => createHash('sha1').update(bytes).digest('hex');

export function ctx(token: string): TargetContext {
  return { token, signal: new AbortController().signal };
}

export function writeOptions(duplicateAction: 'ignore' | 'update' = 'ignore'): WriteOptions {
  return { duplicateAction, signal: new AbortController().signal, jobLabel: 'Ferry test upload' };
}

/**
 * `options` with the plan a job hands over for `entries` (plan/write-plan.ts): a target given
 * it streams the entries it is handed, so a test can fail or cancel that stream part-way.
 */
export async function withPlanOf(destination: PlanDestination, containerId: string | null, entries: AsyncIterable<Entry>, options = writeOptions()): Promise<WriteOptions> {
  const plan = await planWrite(destination, entries, { containerId, duplicateAction: options.duplicateAction, signal: options.signal });
  return { ...options, plan };
}

export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of iterable) items.push(item);
  return items;
}

export async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Reads every entry: path → bytes (files) or null (folders). */
export async function drain(entries: AsyncIterable<Entry>): Promise<Map<string, Buffer | null>> {
  const out = new Map<string, Buffer | null>();
  for await (const entry of entries) {
    if (entry.kind === 'folder') {
      out.set(entry.path, null);
      continue;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of await entry.open()) chunks.push(chunk as Buffer);
    out.set(entry.path, Buffer.concat(chunks));
  }
  return out;
}
