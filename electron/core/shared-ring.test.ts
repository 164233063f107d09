import { describe, expect, it } from 'vitest';
import { SharedRing } from './shared-ring.js';

const settled = async (promise: Promise<unknown>) => {
  let done = false;
  void promise.then(() => (done = true));
  await new Promise((resolve) => setImmediate(resolve));
  return done;
};

describe('SharedRing', () => {
  it('hands slots out in order and reuses one only once every reader released it', async () => {
    const ring = new SharedRing(1, 16, 2);
    expect(await ring.acquire()).toBe(0);
    ring.hand(0, 2);
    expect(await ring.acquire()).toBe(1);
    ring.hand(1, 1);
    const third = ring.acquire();
    expect(await settled(third)).toBe(false);
    ring.release(0);
    expect(await settled(third), 'one of two readers still holds slot 0').toBe(false);
    ring.release(0);
    expect(await third).toBe(0);
    expect(ring.idle).toBe(false);
  });

  it('says once when a retired ring has nothing in use, and reset frees every slot', async () => {
    const ring = new SharedRing(2, 16, 2);
    ring.hand(await ring.acquire(), 1);
    ring.hand(await ring.acquire(), 1);
    let idle = 0;
    ring.onIdle = () => (idle += 1);
    ring.release(0);
    expect(idle).toBe(0);
    ring.release(1);
    ring.release(1);
    expect(idle).toBe(1);
    expect(await ring.acquire()).toBe(0);
    ring.hand(0, 3);
    expect(await ring.acquire()).toBe(1);
    const waiting = ring.acquire();
    expect(await settled(waiting), 'slot 0 is held by three readers').toBe(false);
    ring.reset();
    expect(ring.idle).toBe(true);
    expect(await waiting).toBe(0);
  });
});
