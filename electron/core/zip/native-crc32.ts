import { createRequire } from 'node:module';
import { crc32 as zlibCrc32 } from 'node:zlib';

// yazl computes every entry's CRC-32 with buffer-crc32, a byte-at-a-time JavaScript loop:
// about 15% of a bag's CPU time. Node's zlib.crc32 (native) gives the same numbers much
// faster. yazl calls it as `crc32.unsigned(buffer, previous)`, so that one function of the
// module yazl loaded is swapped for a native one, after checking both agree; on any
// surprise (another buffer-crc32, a bundler hiding it) yazl keeps its own.

let done = false;

export function useNativeCrc32InYazl(): void {
  if (done) return;
  done = true;
  try {
    const fromYazl = createRequire(createRequire(import.meta.url).resolve('yazl'));
    const crcModule = fromYazl('buffer-crc32') as { unsigned?: (buffer: Buffer, previous?: unknown) => number };
    const original = crcModule.unsigned;
    if (typeof original !== 'function') return;
    const native = (buffer: Buffer, previous?: unknown): number =>
      typeof previous === 'number' || previous === undefined ? zlibCrc32(buffer, (previous as number | undefined) ?? 0) >>> 0 : original(buffer, previous);
    const sample = Buffer.from('Ferry checks CRC-32 agreement \u00e9\u00e8');
    const chained = original(sample.subarray(10), original(sample.subarray(0, 10)));
    if (native(sample) !== original(sample) || native(sample.subarray(10), native(sample.subarray(0, 10))) !== chained) return;
    crcModule.unsigned = native;
  } catch {
    // keep yazl's own implementation
  }
}
