import { afterEach, describe, expect, it, vi } from 'vitest';
import { FAST_PATHS, parseFastPathSetting } from './fast-paths.js';

describe('FERRY_FAST_PATHS', () => {
  it('turns nothing off when unset or empty, everything off with "off"', () => {
    expect(parseFastPathSetting(undefined).size).toBe(0);
    expect(parseFastPathSetting('  ').size).toBe(0);
    expect([...parseFastPathSetting('off')].sort()).toEqual([...FAST_PATHS].sort());
  });

  it('turns off the named ones only', () => {
    expect([...parseFastPathSetting('-native-crc32, -kept-listings')].sort()).toEqual(['kept-listings', 'native-crc32']);
  });

  it('refuses a name it does not know, listing the ones it does', () => {
    expect(() => parseFastPathSetting('-turbo')).toThrow(/'turbo', which is not a fast path; known: native-crc32/);
  });
});

describe('each switch changes the path taken', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
    vi.resetModules();
  });

  async function freshModules(setting: string) {
    vi.resetModules();
    vi.stubEnv('FERRY_FAST_PATHS', setting);
    return {
      crc32: await import('./crc32.js'),
      capabilities: await import('./capabilities.js'),
      hashing: await import('./hashing.js'),
      watched: await import('./jobs/entry-stream.js'),
    };
  }

  it("shared-hashing off: a job's fixity check hashes the bytes itself, not through the hasher upstream", async () => {
    const { Readable } = await import('node:stream');
    for (const [setting, shared] of [['', true], ['-shared-hashing', false]] as const) {
      const { hashing, watched } = await freshModules(setting);
      const upstream = new hashing.HashingPassThrough(['md5']);
      const entry = { path: 'a.txt', kind: 'file' as const, size: 3, mtime: null, hashes: { sha256: '0'.repeat(64) }, open: async () => Readable.from([Buffer.from('abc')]).pipe(upstream) };
      const entries = new watched.WatchedEntries((async function* () { yield entry; })(), { signal: new AbortController().signal, onProgress: () => undefined });
      for await (const seen of entries) await seen.open();
      expect(upstream.algorithms.includes('sha256')).toBe(shared);
      entries.dispose();
    }
  });

  it('native-crc32 off: CRC-32 comes from zlib, with the same values', async () => {
    const on = await freshModules('');
    const bytes = new TextEncoder().encode('123456789');
    expect(on.crc32.crc32(bytes)).toBe(0xcbf43926);
    const off = await freshModules('-native-crc32');
    expect(off.crc32.crc32Implementation()).toBe('zlib');
    expect(off.crc32.crc32(bytes)).toBe(0xcbf43926);
  });

  it('moved-file-bytes off: a movable buffer is copied to the file-write worker, not moved', async () => {
    const { mkdtemp, readFile, rm } = await import('node:fs/promises');
    const os = await import('node:os');
    const path = await import('node:path');
    const dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-moved-'));
    try {
      for (const [setting, left] of [['', 0], ['-moved-file-bytes', 3]] as const) {
        vi.resetModules();
        vi.stubEnv('FERRY_FAST_PATHS', setting);
        const { fileWriteWorkers } = await import('./jobs/file-write-workers.js');
        const bytes = Buffer.allocUnsafeSlow(3).fill('abc');
        const file = path.join(dir, `${left}.txt`);
        await fileWriteWorkers().writeNewFile(file, bytes, null, false, null, true);
        expect(bytes.length).toBe(left);
        expect(await readFile(file, 'utf8')).toBe('abc');
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('each capability is hidden exactly when its fast path is off', async () => {
    const columnarListing = { listColumns: () => undefined } as never;
    const cacheableListings = { isKept: () => true };
    const target = { capabilities: { stagedWrites: true, cacheableListings, columnarListing } } as never;
    expect((await freshModules('')).capabilities.capabilitiesOf(target)).toEqual({ stagedWrites: true, cacheableListings, columnarListing });
    expect((await freshModules('-columnar-listing')).capabilities.capabilitiesOf(target)).toEqual({ stagedWrites: true, cacheableListings });
    expect((await freshModules('-kept-listings')).capabilities.capabilitiesOf(target)).toEqual({ stagedWrites: true, columnarListing });
    expect((await freshModules('-staged-bag-check')).capabilities.capabilitiesOf(target)).toEqual({ cacheableListings, columnarListing });
    expect((await freshModules('off')).capabilities.capabilitiesOf(target)).toEqual({});
    expect((await freshModules('')).capabilities.capabilitiesOf({} as never)).toEqual({});
  });
});
