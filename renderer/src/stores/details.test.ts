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
