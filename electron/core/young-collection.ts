// A young-generation collection after every few MiB of bytes Ferry is done with (issue #18,
// docs/performance.md "Peak memory: finished chunks collected young").
//
// Why: bytes on their way through Ferry (an upload's body from its socket, a download's body, a
// small file read whole) are chunks outside V8's heap, each held by a JS object of some hundred
// bytes. Once written or sent, a chunk is garbage, but V8 collects its young generation when that
// generation fills (4 MiB here, launch/memory-settings.ts), and such small objects fill it slowly:
// spooling an 89 MiB upload left 25–43 MiB of dead socket chunks at a time, freed only when
// V8's count of memory outside its heap passed V8's own limit. A minor collection (~1–3 ms, the
// young generation only) every 8 MiB done with keeps them to about that.
//
// The holders that say so: the last holder of a chunk when it is done with it (read-buffers.ts
// `giveBack`: the local writer, an upload's request), and the upload spool for each chunk of the
// body it receives (server/spool.ts).
//
// Started with the core (ferry-core.ts); switched off with the other memory settings:
// FERRY_MEMORY_SETTINGS=off.
import { settingsCollector, type Collector } from './idle-collection.js';

/** Bytes done with between two young collections. */
export const YOUNG_COLLECTION_BYTES = 8 * 1024 * 1024;

export class YoungCollection {
  private doneBytes = 0;

  constructor(
    private readonly collect: Collector,
    private readonly everyBytes = YOUNG_COLLECTION_BYTES,
  ) {}

  /** `bytes` more are done with: a young collection once `everyBytes` have been since the last. */
  note(bytes: number): void {
    this.doneBytes += bytes;
    if (this.doneBytes < this.everyBytes) return;
    this.doneBytes = 0;
    youngCollectionCounts.collections++;
    this.collect({ type: 'minor' });
  }
}

/** counts for tests and probes */
export const youngCollectionCounts = { collections: 0 };

let processCollection: YoungCollection | null = null;

/**
 * Starts the process's young collection, as the core starts (ferry-core.ts, beside the idle
 * collection); until then, and with the memory settings off, nothing is collected.
 */
export function startYoungCollection(env: NodeJS.ProcessEnv): void {
  const collect = settingsCollector(env);
  processCollection = collect ? new YoungCollection(collect) : null;
}

/** The process's holders: `bytes` of chunks are done with (see the top of this module). */
export function doneWithBytes(bytes: number): void {
  processCollection?.note(bytes);
}
