import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { sep } from 'node:path';
import { crc32 as zlibCrc32 } from 'node:zlib';
import { fastPathOn } from './fast-paths.js';

// CRC-32 runs over every byte of every bag download, plain-ZIP upload and offline fixity
// check. Node 20's zlib.crc32 is table-driven: 31-32 ms per 64 MiB on the dev machine (x64).
// @node-rs/crc32 (crc32fast, PCLMULQDQ) does the same 64 MiB in 9-10 ms with the same values,
// incremental form included (3.3x). It is a native binary from an optional dependency, so it may be
// absent (another platform, a package built without it) or broken: then zlib does the work,
// slower but identical. Loading never throws.

export type Crc32Implementation = 'native' | 'zlib';

type Crc32Function = (bytes: Uint8Array, previous: number) => number;

interface LoadedNative {
  crc32: Crc32Function;
  modulePath: string;
}

/** The standard check value: CRC-32 of the ASCII "123456789". */
const CHECK_INPUT = new TextEncoder().encode('123456789');
const CHECK_VALUE = 0xcbf43926;

/**
 * Loads the native module through `load` (a require) and proves it on the check value;
 * null if it does not load, lacks crc32 or computes something else. Exported for tests.
 */
export function loadNativeCrc32(load: (id: string) => unknown, resolve: (id: string) => string): LoadedNative | null {
  try {
    const native = load('@node-rs/crc32') as { crc32?: unknown } | null;
    if (typeof native?.crc32 !== 'function') return null;
    const crc32 = native.crc32 as Crc32Function;
    if (crc32(CHECK_INPUT, 0) >>> 0 !== CHECK_VALUE) return null;
    return { crc32, modulePath: unpackedPath(resolve('@node-rs/crc32')) };
  } catch {
    return null;
  }
}

/**
 * In a packaged app the module resolves inside app.asar; electron-builder.yml unpacks it, and
 * a compute thread (evaluated from a string) is safer requiring the real file than relying on asar
 * support in that thread. Outside a package the path is returned as is.
 */
function unpackedPath(modulePath: string): string {
  const asar = `${sep}app.asar${sep}`;
  if (!modulePath.includes(asar)) return modulePath;
  const unpacked = modulePath.replace(asar, `${sep}app.asar.unpacked${sep}`);
  return existsSync(unpacked) ? unpacked : modulePath;
}

/**
 * Loaded at the first CRC, not at start: the library maps ~4 MiB of resident memory, and a
 * process that never computes a CRC-32 (a bag upload checks its manifests' digests instead)
 * need not carry it.
 */
let native: LoadedNative | null | undefined;
function loaded(): LoadedNative | null {
  if (native === undefined) {
    const load = fastPathOn('native-crc32') ? nodeRequire() : null;
    native = load ? loadNativeCrc32(load, (id) => load.resolve(id)) : null;
  }
  return native;
}

/**
 * createRequire works from the TypeScript sources (vitest, tsx) and from the electron-vite
 * bundle in out/main (ESM), where dependencies stay external and are required at run time;
 * a CommonJS bundle (the fuzz harness's) has no import.meta.url but its own require.
 */
function nodeRequire(): NodeJS.Require | null {
  try {
    return typeof require === 'function' ? require : createRequire(import.meta.url);
  } catch {
    return null;
  }
}

/** Which implementation `crc32` uses in this process. */
export function crc32Implementation(): Crc32Implementation {
  return loaded() ? 'native' : 'zlib';
}

/**
 * CRC-32 (the ZIP one) of `bytes`, continuing from `previous` (a CRC this function returned
 * for the bytes before). Unsigned 32-bit, the values of zlib.crc32. `previous` is taken as
 * `>>> 0`, so both implementations read any number the same way. Empty input gives
 * `previous`: Node 20's zlib.crc32 returns 0 for an empty buffer whose memory pointer is null
 * (e.g. randomBytes(0)), zlib's "initial value" call, which would reset a running CRC.
 */
export function crc32(bytes: Uint8Array, previous = 0): number {
  if (bytes.length === 0) return previous >>> 0;
  const implementation = native === undefined ? loaded() : native;
  return (implementation ? implementation.crc32 : zlibCrc32)(bytes, previous >>> 0) >>> 0;
}

/** `crc32` with a chosen implementation (tests, benchmarks); throws if that one did not load. */
export function crc32With(implementation: Crc32Implementation): (bytes: Uint8Array, previous?: number) => number {
  const chosen = implementation === 'zlib' ? zlibCrc32 : loaded()?.crc32;
  if (!chosen) throw new Error(`the ${implementation} CRC-32 implementation did not load in this process`);
  return (bytes, previous = 0) => (bytes.length === 0 ? previous >>> 0 : chosen(bytes, previous >>> 0) >>> 0);
}

/**
 * Absolute path to require the native module by (for compute threads, evaluated from a
 * string, which have no module resolution of their own), or null when it does not load here.
 */
export function fastCrc32ModulePath(): string | null {
  return loaded()?.modulePath ?? null;
}
