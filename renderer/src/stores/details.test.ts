import { describe, expect, it } from 'vitest';
import { detail } from '../test-support.js';
import { createDetailCache } from './details.js';

describe('detail cache', () => {
  it('runs at most N requests at once, newest wishes first, skips rows that left the screen, caches', async () => {
    let running = 0;
    let peak = 0;
    const order: string[] = [];
    const releases: (() => void)[] = [];
    const api = {
      detail: (_t: string, id: string) => {
        order.push(id);
        running++;
        peak = Math.max(peak, running);
        return new Promise<ReturnType<typeof detail>>((resolve) => {
          releases.push(() => {
            running--;
            resolve(detail(id, id, 1, '2026-01-01T00:00:00.000000Z'));
          });
        });
      },
    };
    const cache = createDetailCache(api, 2);
    for (const id of ['a', 'b', 'c', 'd', 'e']) cache.want('local', id);
    cache.release('local', 'c'); // scrolled away before its turn
    expect(order).toEqual(['a', 'b']);
    while (releases.length) {
      releases.shift()!();
      await new Promise((r) => setTimeout(r, 0));
    }
    expect(peak).toBe(2);
    expect(order).toEqual(['a', 'b', 'e', 'd']);
    expect(cache.get('local', 'a')).toMatchObject({ state: 'ready' });
    cache.want('local', 'a');
    expect(order.length).toBe(4); // cached
  });

  it('keeps the error sentence of a failed detail', async () => {
    const cache = createDetailCache({
      detail: async () => {
        throw new Error('It was not found.');
      },
    });
    expect(await cache.load('local', 'x')).toEqual({ state: 'error', error: 'It was not found.' });
  });
});

describe('detail cache invalidation', () => {
  it('keeps showing a known detail (stale) until the fresh one arrives, then shows the fresh one', async () => {
    let size = 1;
    let release: (() => void) | null = null;
    const cache = createDetailCache({
      detail: (_t: string, id: string) =>
        new Promise<ReturnType<typeof detail>>((resolve) => {
          const answer = detail(id, id, size, '2026-01-01T00:00:00.000000Z');
          release = () => resolve(answer);
        }),
    });
    const first = cache.load('offline', 'a');
    release!();
    await first;
    expect(cache.isStale('offline', 'a')).toBe(false);
    cache.invalidate('offline');
    expect(cache.isStale('offline', 'a')).toBe(true);
    expect(cache.get('offline', 'a')).toMatchObject({ state: 'ready', detail: { extra: { size: 1 } } });
    size = 2;
    const second = cache.load('offline', 'a');
    expect(cache.get('offline', 'a')).toMatchObject({ state: 'ready', detail: { extra: { size: 1 } } }); // no flicker
    expect(cache.isStale('offline', 'a')).toBe(false); // in flight: not asked twice
    release!();
    await second;
    expect(cache.get('offline', 'a')).toMatchObject({ state: 'ready', detail: { extra: { size: 2 } } });
  });

  it('an invalidation during a request asks once more after it lands', async () => {
    const releases: (() => void)[] = [];
    let calls = 0;
    const cache = createDetailCache({
      detail: (_t: string, id: string) => {
        calls++;
        return new Promise<ReturnType<typeof detail>>((resolve) => releases.push(() => resolve(detail(id, id, calls, '2026-01-01T00:00:00.000000Z'))));
      },
    });
    cache.want('offline', 'a');
    expect(calls).toBe(1);
    cache.invalidate('offline');
    releases.shift()!();
    await new Promise((r) => setTimeout(r, 0));
    expect(calls).toBe(2);
    expect(cache.isStale('offline', 'a')).toBe(false);
  });
});
