import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { describe, expect, it } from 'vitest';
import { CancelledError } from '../errors.js';
import { Bandwidth } from './bandwidth.js';

describe('Bandwidth', () => {
  it('lets everything through at once with no limit, and adds no stream', () => {
    const bandwidth = new Bandwidth(() => 0);
    expect(bandwidth.reserve(10_000_000)).toBe(0);
    expect(bandwidth.throttle(new AbortController().signal)).toBeNull();
  });

  it('spaces reservations so that together they never pass faster than the limit', () => {
    let now = 0;
    const bandwidth = new Bandwidth(() => now);
    bandwidth.limit = 1000; // bytes a second; the bucket starts empty
    expect(bandwidth.reserve(500)).toBe(500);
    expect(bandwidth.reserve(500)).toBe(1000); // waits behind the first
    now = 1000; // the first 1000 bytes have passed
    expect(bandwidth.reserve(1000)).toBe(1000);
    now = 10_000; // a long idle spell refills at most one second's worth
    expect(bandwidth.reserve(1000)).toBe(0);
    expect(bandwidth.reserve(1)).toBeGreaterThan(0);
  });

  it('clears waits when the limit is lifted', () => {
    const bandwidth = new Bandwidth(() => 0);
    bandwidth.limit = 10;
    expect(bandwidth.reserve(100)).toBeGreaterThan(0);
    bandwidth.limit = null;
    expect(bandwidth.reserve(100)).toBe(0);
  });

  it('throttles a real stream to about its limit', async () => {
    const bandwidth = new Bandwidth();
    bandwidth.limit = 200_000;
    const throttle = bandwidth.throttle(new AbortController().signal)!;
    const chunks = Array.from({ length: 10 }, () => Buffer.alloc(20_000, 7)); // 200 kB: about a second beyond the first burst
    let received = 0;
    const started = performance.now();
    await pipeline(Readable.from(chunks), throttle, new Writable({ write: (chunk: Buffer, _e, done) => ((received += chunk.length), done()) }));
    const elapsed = performance.now() - started;
    expect(received).toBe(200_000);
    // the bucket starts empty: 200 kB at 200 kB/s take about a second (generous bounds for a loaded machine)
    expect(elapsed).toBeGreaterThan(800);
    expect(elapsed).toBeLessThan(30_000);
  });

  it('stops waiting with CancelledError when the job is cancelled', async () => {
    const bandwidth = new Bandwidth();
    bandwidth.limit = 1;
    const controller = new AbortController();
    const waiting = bandwidth.take(1_000_000, controller.signal);
    controller.abort();
    await expect(waiting).rejects.toBeInstanceOf(CancelledError);
  });
});
