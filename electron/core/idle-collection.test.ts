import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { COLLECT_AFTER_GROWTH_BYTES, exposedCollector, IdleCollection, idleCollectionFor } from './idle-collection.js';

afterEach(() => {
  vi.useRealTimers();
});

/** An idle collection over a memory figure the test sets, counting its collections. */
function collection(delayMs = 100) {
  let used = 100 * 1024 * 1024;
  const collections: number[] = [];
  const shared = new IdleCollection({
    collect: () => {
      collections.push(used);
      used = 100 * 1024 * 1024; // what the collection gave back
    },
    usedBytes: () => used,
    delayMs,
  });
  return { idle: shared.listenerFor(), shared, collections, grow: (bytes: number) => (used += bytes) };
}

describe('idle collection', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });

  it('collects once the queue has been idle for the delay, after a job that grew the heap', () => {
    const { idle, collections, grow } = collection();
    grow(COLLECT_AFTER_GROWTH_BYTES);
    idle.idle();
    vi.advanceTimersByTime(99);
    expect(collections).toHaveLength(0);
    vi.advanceTimersByTime(1);
    expect(collections).toHaveLength(1);
  });

  it('does not collect after a job that left less than the threshold', () => {
    const { idle, collections, grow } = collection();
    grow(COLLECT_AFTER_GROWTH_BYTES - 1);
    idle.idle();
    vi.advanceTimersByTime(1000);
    expect(collections).toHaveLength(0);
  });

  it('a job that starts within the delay cancels it; the next idle queue collects', () => {
    const { idle, collections, grow } = collection();
    grow(2 * COLLECT_AFTER_GROWTH_BYTES);
    idle.idle();
    vi.advanceTimersByTime(50);
    idle.busy();
    vi.advanceTimersByTime(1000);
    expect(collections).toHaveLength(0);
    idle.idle();
    vi.advanceTimersByTime(100);
    expect(collections).toHaveLength(1);
  });

  it("waits for every queue of the process: one queue's end does not collect while another's job runs", () => {
    const { idle: first, shared, collections, grow } = collection();
    const second = shared.listenerFor();
    grow(COLLECT_AFTER_GROWTH_BYTES);
    first.busy();
    second.busy();
    first.idle();
    vi.advanceTimersByTime(1000);
    expect(collections).toHaveLength(0);
    second.idle();
    vi.advanceTimersByTime(100);
    expect(collections).toHaveLength(1);
  });

  it('measures growth from what the last collection left, not from the start', () => {
    const { idle, collections, grow } = collection();
    grow(COLLECT_AFTER_GROWTH_BYTES);
    idle.idle();
    vi.advanceTimersByTime(100);
    expect(collections).toHaveLength(1);
    // the collection went back to the start's figure: a small job after it collects nothing
    grow(COLLECT_AFTER_GROWTH_BYTES / 2);
    idle.idle();
    vi.advanceTimersByTime(100);
    expect(collections).toHaveLength(1);
  });

});

describe("the process's collector", () => {
  it("takes V8's own full collection in a process started without --expose-gc, and gives no other context gc", async () => {
    expect((globalThis as { gc?: unknown }).gc).toBeUndefined();
    const collect = exposedCollector();
    expect(collect).toBeTypeOf('function');
    // a real collection: an object nothing holds is gone after it (a WeakRef keeps its target
    // until the task that made it ends, hence the turn between)
    const ref = new WeakRef({ big: new Array(1000).fill(0) });
    await new Promise((resolve) => setImmediate(resolve));
    collect!();
    expect(ref.deref()).toBeUndefined();
    const { runInNewContext } = await import('node:vm');
    expect(runInNewContext('typeof gc')).toBe('undefined');
  });

  it('is off with the other memory settings (FERRY_MEMORY_SETTINGS=off)', () => {
    expect(idleCollectionFor({ FERRY_MEMORY_SETTINGS: 'off' })).toBeNull();
    expect(idleCollectionFor({})).toEqual({ busy: expect.any(Function), idle: expect.any(Function) });
    expect(() => idleCollectionFor({ FERRY_MEMORY_SETTINGS: 'sometimes' })).toThrow(/FERRY_MEMORY_SETTINGS/);
  });
});
