// Large local files over real HTTP. Their bytes are read straight into the bag workers'
// shared slots and go out to the socket from there, each slot reused only once the response
// has sent it (electron/core/zip/zip-output.ts). A slot reused too early would put other
// bytes in the ZIP: every file is compared with the disk, byte for byte, and with the
// manifests, under a client that stalls, several downloads at once, and a download cut off.
import { createHash, randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResourceSummary } from '../../shared/api.js';
import { findByPath, run, startFerry, unzipTo, writeTree, type Ferry } from './harness.js';

const MiB = 1024 * 1024;
let ferry: Ferry;
let downloads = 0;
const files: Record<string, Buffer> = {
  // stored (random), sizes not a whole number of 1 MiB slots
  'Big/raw/a.bin': randomBytes(5 * MiB + 123),
  'Big/raw/b.bin': randomBytes(3 * MiB + 7),
  // deflated: its slots go to the workers only
  'Big/text/table.csv': Buffer.from(Array.from({ length: 120_000 }, (_, i) => `${i},site-${i % 17},${(i * 7919) % 1000}.5\n`).join('')),
  'Big/small/one.txt': Buffer.from('one\n'),
  'Big/small/two.bin': randomBytes(70_000),
};
let zipUrl: string;

beforeAll(async () => {
  ferry = await startFerry();
  await writeTree(ferry.workspace, files);
  const list = (await (await ferry.fetch('/api_v1/targets/local/resources/', { headers: ferry.auth() })).json()) as ResourceSummary[];
  zipUrl = `/api_v1/targets/local/resources/${findByPath(list, 'Big')!.id}.zip/`;
});
afterAll(async () => ferry?.close());

/**
 * GET the ZIP with node:http, reading like a slow client when asked: nothing for `stallMs`,
 * then a pause of `pauseMs` after every `every` bytes. `stopAfter` cuts the connection.
 */
function download(options: { stallMs?: number; pauseMs?: number; every?: number; stopAfter?: number } = {}): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const request = http.get(new URL(zipUrl, ferry.url), { headers: ferry.auth() }, (response) => {
      if (response.statusCode !== 200) return reject(new Error(`status ${response.statusCode}`));
      const chunks: Buffer[] = [];
      let received = 0;
      let sincePause = 0;
      response.pause();
      setTimeout(() => response.resume(), options.stallMs ?? 0);
      response.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        received += chunk.length;
        sincePause += chunk.length;
        if (options.stopAfter !== undefined && received >= options.stopAfter) {
          request.destroy();
          resolve(Buffer.concat(chunks));
          return;
        }
        if (options.pauseMs && sincePause >= (options.every ?? MiB)) {
          sincePause = 0;
          response.pause();
          setTimeout(() => response.resume(), options.pauseMs);
        }
      });
      response.on('end', () => resolve(Buffer.concat(chunks)));
      response.on('error', reject);
    });
    request.on('error', (error) => (options.stopAfter !== undefined ? undefined : reject(error)));
  });
}

/** The ZIP passes `unzip -t`, and every file and manifest line is the disk's bytes. */
async function expectIntact(zip: Buffer): Promise<void> {
  const name = `download-${++downloads}`;
  const zipPath = path.join(ferry.root, `${name}.zip`);
  await writeFile(zipPath, zip);
  await run('unzip', ['-tqq', zipPath]);
  const out = path.join(ferry.root, name);
  await unzipTo(zipPath, out);
  const [bag] = (await run('ls', [out])).stdout.trim().split('\n');
  for (const [relative, bytes] of Object.entries(files)) {
    const got = await readFile(path.join(out, bag!, 'data', relative));
    expect(got.equals(bytes), relative).toBe(true);
  }
  for (const algorithm of ['md5', 'sha256']) {
    const lines = (await readFile(path.join(out, bag!, `manifest-${algorithm}.txt`), 'utf8')).trim().split('\n');
    expect(lines).toHaveLength(Object.keys(files).length);
    for (const line of lines) {
      const [hex, file] = line.split('  ');
      expect(hex, file).toBe(createHash(algorithm).update(files[file!.slice('data/'.length)]!).digest('hex'));
    }
  }
}

describe('downloading large local files (read into shared slots, sent from them)', () => {
  it('sends the bytes as they are on disk to a client that stalls and pauses', { timeout: 60_000 }, async () => {
    await expectIntact(await download({ stallMs: 300, pauseMs: 40, every: 768 * 1024 }));
  });

  it('keeps several downloads at once apart', { timeout: 60_000 }, async () => {
    const zips = await Promise.all([download({ pauseMs: 15, every: MiB }), download(), download({ stallMs: 100, pauseMs: 10, every: 2 * MiB })]);
    for (const zip of zips) await expectIntact(zip);
  });

  it('after a client goes away mid-file, the next downloads are whole', { timeout: 60_000 }, async () => {
    const cut = await download({ stallMs: 100, stopAfter: 3 * MiB });
    expect(cut.length).toBeGreaterThanOrEqual(3 * MiB);
    await expectIntact(await download());
    await expectIntact(await download({ pauseMs: 20, every: MiB }));
  });
});
