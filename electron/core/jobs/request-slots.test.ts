import { describe, expect, it } from 'vitest';
import { CancelledError } from '../errors.js';
import { RequestSlots } from './request-slots.js';

const tick = () => new Promise((resolve) => setImmediate(resolve));

/** A request that ends when the test says so. */
function request(log: string[], name: string) {
  let end!: () => void;
  const ended = new Promise<void>((resolve) => (end = resolve));
  return {
    end,
    run: async () => {
      log.push(`start ${name}`);
      await ended;
      return name;
    },
  };
}

describe('RequestSlots', () => {
  it('sends at most `size` at once, the next in the order asked as each ends', async () => {
    const log: string[] = [];
    const slots = new RequestSlots(2);
    const requests = ['a', 'b', 'c', 'd'].map((name) => request(log, name));
    const results = requests.map((r) => slots.run(r.run));
    await tick();
    expect(log).toEqual(['start a', 'start b']);
    requests[1]!.end();
    await tick();
    expect(log).toEqual(['start a', 'start b', 'start c']);
    requests[0]!.end();
    await tick();
    expect(log).toEqual(['start a', 'start b', 'start c', 'start d']);
    requests[2]!.end();
    requests[3]!.end();
    expect(await Promise.all(results)).toEqual(['a', 'b', 'c', 'd']);
  });

  it('gives a slot back when its request fails', async () => {
    const slots = new RequestSlots(1);
    await expect(slots.run(() => Promise.reject(new Error('refused')))).rejects.toThrow('refused');
    expect(await slots.run(async () => 'next')).toBe('next');
  });

  it('a cancel throws CancelledError from every wait at once, and lets no waiting request start', async () => {
    const log: string[] = [];
    const controller = new AbortController();
    const slots = new RequestSlots(1, controller.signal);
    const first = request(log, 'first');
    const running = slots.run(first.run);
    const waiting = slots.run(request(log, 'second').run);
    await tick();
    controller.abort();
    await expect(waiting).rejects.toBeInstanceOf(CancelledError);
    await expect(slots.run(async () => 'late')).rejects.toBeInstanceOf(CancelledError);
    first.end();
    expect(await running).toBe('first');
    expect(log).toEqual(['start first']);
  });
});
