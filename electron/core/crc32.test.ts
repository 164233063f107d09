import { randomBytes, randomInt } from 'node:crypto';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { crc32 as zlibCrc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { crc32, crc32Implementation, crc32With, fastCrc32ModulePath, loadNativeCrc32 } from './crc32.js';

const SIZES = [0, 1, 15, 16, 63, 64, 65, 4095, 1024 * 1024 + 3];
const NATIVE_PLATFORM = process.platform === 'linux' && process.arch === 'x64';

/** zlib.crc32, except that no bytes leave the CRC as it was (zlib returns 0 for some empty buffers). */
function reference(bytes: Uint8Array, previous = 0): number {
  return bytes.length === 0 ? previous : zlibCrc32(bytes, previous);
}

/** Each way to compute a CRC here: the default, and each implementation forced. */
const variants: [string, (bytes: Uint8Array, previous?: number) => number][] = [
  ['crc32', crc32],
  ['zlib fallback', crc32With('zlib')],
  ...(crc32Implementation() === 'native' ? [['native', crc32With('native')] as [string, typeof crc32]] : []),
];

describe('implementation', () => {
  it('is the native one on linux x64, where the prebuilt binary exists', () => {
    if (!NATIVE_PLATFORM) {
      console.log(`crc32 native check not applicable on ${process.platform}-${process.arch}; running on ${crc32Implementation()}`);
      return;
    }
    expect(
      crc32Implementation(),
      'the optional dependency @node-rs/crc32-linux-x64-gnu is missing or broken (npm install without optional deps?): CI must exercise the fast path',
    ).toBe('native');
    expect(fastCrc32ModulePath()).toBe(createRequire(import.meta.url).resolve('@node-rs/crc32'));
    expect(path.isAbsolute(fastCrc32ModulePath()!)).toBe(true);
  });

  it('falls back silently when the module does not load, lacks crc32 or computes wrong values', () => {
    const resolve = () => '/nowhere/index.js';
    expect(loadNativeCrc32(() => { throw new Error('Cannot find module @node-rs/crc32-linux-x64-gnu'); }, resolve)).toBeNull();
    expect(loadNativeCrc32(() => ({}), resolve)).toBeNull();
    expect(loadNativeCrc32(() => null, resolve)).toBeNull();
    expect(loadNativeCrc32(() => ({ crc32: () => 0 }), resolve)).toBeNull();
    expect(loadNativeCrc32(() => ({ crc32: () => { throw new Error('illegal instruction'); } }), resolve)).toBeNull();
    // a good module is accepted (zlib standing in for it)
    expect(loadNativeCrc32(() => ({ crc32: zlibCrc32 }), resolve)).toEqual({ crc32: zlibCrc32, modulePath: '/nowhere/index.js' });
  });
});

describe.each(variants)('%s agrees with zlib.crc32', (_name, compute) => {
  it('on the check value and random buffers of many sizes', () => {
    expect(compute(Buffer.from('123456789'))).toBe(0xcbf43926);
    for (const size of SIZES) {
      const bytes = randomBytes(size);
      expect(compute(bytes), `size ${size}`).toBe(zlibCrc32(bytes));
      expect(compute(bytes, 0xdeadbeef), `size ${size}, continued`).toBe(reference(bytes, 0xdeadbeef));
    }
  });

  it('incrementally, split at random points', () => {
    for (const size of SIZES) {
      const bytes = randomBytes(size);
      for (let round = 0; round < 5; round++) {
        const cuts = Array.from({ length: 3 }, () => randomInt(size + 1)).sort((a, b) => a - b);
        let crc = 0;
        let from = 0;
        for (const to of [...cuts, size]) {
          crc = compute(bytes.subarray(from, to), crc);
          from = to;
        }
        expect(crc, `size ${size} cut at ${cuts.join(',')}`).toBe(zlibCrc32(bytes));
      }
    }
  });

  it('on views with a non-zero byteOffset', () => {
    const backing = randomBytes(70_000);
    for (const [offset, length] of [[1, 0], [3, 64], [7, 4095], [13, 65_000]] as const) {
      const view = backing.subarray(offset, offset + length);
      expect(view.byteOffset).toBeGreaterThan(0);
      expect(compute(view)).toBe(zlibCrc32(Buffer.from(view)));
      const plain = new Uint8Array(backing.buffer, backing.byteOffset + offset, length);
      expect(compute(plain)).toBe(zlibCrc32(Buffer.from(view)));
    }
  });

  it('on a view over a SharedArrayBuffer', () => {
    const shared = new SharedArrayBuffer(300_000);
    new Uint8Array(shared).set(randomBytes(300_000));
    const view = new Uint8Array(shared, 11, 250_000);
    const copy = Buffer.from(view);
    expect(compute(view)).toBe(zlibCrc32(copy));
    expect(compute(view.subarray(100_000), compute(view.subarray(0, 100_000)))).toBe(zlibCrc32(copy));
  });

  it('returns unsigned values and reads `previous` as unsigned', () => {
    const bytes = Buffer.from('abc');
    const value = compute(bytes, 0xffffffff);
    expect(value).toBe(zlibCrc32(bytes, 0xffffffff));
    expect(value).toBeGreaterThanOrEqual(0);
    expect(compute(bytes, -1)).toBe(value); // the signed form of 0xffffffff
  });

  it('leaves a running CRC as it was for every form of empty input', () => {
    const empties = [randomBytes(0), Buffer.alloc(0), new Uint8Array(0), new Uint8Array(new ArrayBuffer(0)), randomBytes(8).subarray(4, 4), new Uint8Array(new SharedArrayBuffer(0))];
    for (const empty of empties) {
      expect(compute(empty)).toBe(0);
      expect(compute(empty, 77)).toBe(77);
      expect(compute(empty, 0xdeadbeef)).toBe(0xdeadbeef);
    }
    const bytes = randomBytes(1000);
    expect(compute(bytes.subarray(500), compute(randomBytes(0), compute(bytes.subarray(0, 500))))).toBe(zlibCrc32(bytes));
  });
});

describe('worker threads', () => {
  it('a worker that requires fastCrc32ModulePath() gets the same value', async () => {
    const modulePath = fastCrc32ModulePath();
    if (modulePath === null) {
      expect(NATIVE_PLATFORM, 'native module missing on linux x64').toBe(false);
      console.log('crc32 worker test not applicable: the native module did not load here');
      return;
    }
    const shared = new SharedArrayBuffer(100_003);
    const view = new Uint8Array(shared);
    view.set(randomBytes(view.length));
    // a worker evaluated from a string, as the bag workers are: no module resolution of its own
    const source = `
      const { parentPort, workerData } = require('node:worker_threads');
      const { crc32 } = require(workerData.modulePath);
      const view = new Uint8Array(workerData.shared, 3);
      parentPort.postMessage(crc32(view, 0) >>> 0);
    `;
    const worker = new Worker(source, { eval: true, workerData: { modulePath, shared } });
    try {
      const result = await new Promise<number>((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      });
      expect(result).toBe(zlibCrc32(Buffer.from(shared, 3)));
      expect(result).toBe(crc32(view.subarray(3)));
    } finally {
      await worker.terminate();
    }
  });
});
