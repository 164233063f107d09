import { open, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { constants, performance, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { pipeline } from 'node:stream/promises';
import { describe, expect, it } from 'vitest';
import { exposedCollector } from './idle-collection.js';
import { lendingReadStream, READ_BUFFER_BYTES } from './read-buffers.js';
import { fileSink } from './targets/local/file-sink.js';
import { startYoungCollection, YOUNG_COLLECTION_BYTES, YoungCollection, youngCollectionCounts } from './young-collection.js';

const collector = exposedCollector();
if (!collector) console.log('[young-collection] the real collections not run: this V8 gives no collector');
// as the core starts it (ferry-core.ts)
startYoungCollection({});

describe('young collection', () => {
  it('collects the young generation once every YOUNG_COLLECTION_BYTES done with', () => {
    const asked: unknown[] = [];
    const young = new YoungCollection((options) => asked.push(options));
    young.note(YOUNG_COLLECTION_BYTES / 2);
    young.note(YOUNG_COLLECTION_BYTES / 2 - 1);
    expect(asked).toEqual([]);
    young.note(1);
    expect(asked).toEqual([{ type: 'minor' }]);
    // counted afresh from there
    young.note(YOUNG_COLLECTION_BYTES - 1);
    expect(asked).toHaveLength(1);
  });

  it.skipIf(!collector)("asks V8 for a minor collection, not a full one", async () => {
    const entries: PerformanceEntry[] = [];
    const observer = new PerformanceObserver((list) => entries.push(...list.getEntries()));
    observer.observe({ entryTypes: ['gc'] });
    const start = performance.now();
    new YoungCollection(collector!).note(YOUNG_COLLECTION_BYTES);
    const end = performance.now();
    // gc entries are delivered on a later turn; only those of the call count (the test runner collects too)
    await new Promise((resolve) => setTimeout(resolve, 50));
    observer.disconnect();
    const kinds = entries.filter((entry) => entry.startTime >= start && entry.startTime <= end).map((entry) => ((entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind ?? -1));
    expect(kinds).toContain(constants.NODE_PERFORMANCE_GC_MINOR);
    expect(kinds).not.toContain(constants.NODE_PERFORMANCE_GC_MAJOR);
  });

  it.skipIf(!collector)('the local writer counts the chunks it is done with that were not lent, and not the lent ones', async () => {
    const file = path.join(os.tmpdir(), `ferry-young-${process.pid}.bin`);
    try {
      // fresh chunks (as from a socket): 2 × 8 MiB of them collect at least once
      const fresh = Array.from({ length: (2 * YOUNG_COLLECTION_BYTES) / (256 * 1024) }, () => Buffer.alloc(256 * 1024, 1));
      let before = youngCollectionCounts.collections;
      await pipeline(fresh, fileSink(await open(file, 'w'), false));
      expect(youngCollectionCounts.collections - before).toBeGreaterThanOrEqual(1);

      // lent chunks go back to be read into again: no collection for 3 × 8 MiB of them
      await writeFile(file, Buffer.alloc(3 * YOUNG_COLLECTION_BYTES + READ_BUFFER_BYTES, 2));
      before = youngCollectionCounts.collections;
      await pipeline(lendingReadStream(await open(file, 'r')), fileSink(await open(`${file}.copy`, 'w'), false));
      expect(youngCollectionCounts.collections - before).toBe(0);
    } finally {
      await rm(file, { force: true });
      await rm(`${file}.copy`, { force: true });
    }
  });
});
