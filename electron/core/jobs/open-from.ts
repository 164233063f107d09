import { Readable } from 'node:stream';
import type { Entry } from '../target.js';

// A large file a writer stopped in part-way goes on from its last durable byte where the
// source can start a read mid-file (Entry.openFrom, target.ts): the stream is still the whole
// file, its first bytes the writer's own copy read back from disk, so every check that hashes
// the stream (the source's digests, the provenance record, the writer's hash cache) covers
// the whole file, while the source is asked only for the bytes the destination lacks.

/** Entry.openFrom's stream: `kept`'s bytes, then those of `rest()`, opened once `kept` has ended. */
export function keptThenRest(kept: Readable, rest: () => Promise<Readable>): Readable {
  async function* both(): AsyncGenerator<Buffer> {
    let source: Readable | null = null;
    try {
      for await (const chunk of kept) yield chunk as Buffer;
      source = await rest();
      for await (const chunk of source) yield chunk as Buffer;
    } finally {
      kept.destroy();
      source?.destroy();
    }
  }
  return Readable.from(both(), { objectMode: false });
}

/**
 * An entry's reads as a wrapper that watches them gives them: open()'s stream and, where the
 * source offers it, openFrom()'s, each through `watch` (told how many of its first bytes are
 * the writer's own kept ones). One place, so no wrapper watches open() and lets a resumed
 * read past it. `before` runs first on each (a cancelled job's check).
 */
export function watchedReads(entry: Entry, watch: (stream: Readable, kept: number) => Readable, before: () => void = () => undefined): Pick<Entry, 'open' | 'openFrom'> {
  const openFrom = entry.openFrom?.bind(entry);
  return {
    open: async () => {
      before();
      return watch(await entry.open(), 0);
    },
    ...(openFrom
      ? {
          openFrom: async (offset: number, kept: Readable) => {
            before();
            return watch(await openFrom(offset, kept), offset);
          },
        }
      : {}),
  };
}
