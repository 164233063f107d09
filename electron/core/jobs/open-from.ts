import { Readable } from 'node:stream';

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
