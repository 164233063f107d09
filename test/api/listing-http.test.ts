import http from 'node:http';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../electron/core/limits.js';
import type { ResourceNode, TargetContext } from '../../electron/core/target.js';
import { OfflineTarget } from '../../electron/core/targets/offline/offline-target.js';
import { rawZip } from '../../electron/core/zip/testing/raw-zip.js';
import { startFerry, type Ferry } from './harness.js';
import { toSummary } from '../../electron/server/routes/resources.js';

// A whole offline listing over real HTTP, read fast and read slowly: the listing's buffers are
// written again once their bytes have left (see jsonArrayStream's `written`), so a reader that
// falls behind must still get exactly JSON.stringify of every row.

const ctx = (): TargetContext => ({ token: 'checked-by-the-http-layer', signal: new AbortController().signal });
const awkward = ['naïve.txt', 'say "hi".txt', 'two "quoted" words', '日本語.txt', 'plain.txt'];

let ferry: Ferry;
let libraryDir: string;
let scratch: string;

beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'ferry-listing-http-'));
  libraryDir = path.join(scratch, 'library');
  await mkdir(libraryDir, { recursive: true });
  // ~10 MB of JSON: more than the kernel holds for a reader that stops, so the listing's
  // buffers are taken, still on their way, and wanted again
  const names = Array.from({ length: 40_000 }, (_, i) => `top/d${i % 37}/${i % 97 === 0 ? awkward[i % awkward.length] : ''}file-${i}.dat`);
  await writeFile(path.join(libraryDir, 'many.zip'), rawZip(names.map((name) => ({ name }))));
  ferry = await startFerry({ targets: () => [new OfflineTarget({ libraryDirs: [libraryDir], stateDir: path.join(scratch, 'state'), limits: DEFAULT_LIMITS })] });
});

afterAll(async () => {
  await ferry?.close();
  await rm(scratch, { recursive: true, force: true });
});

/** The body of GET resources/, read in pieces with a pause after each when `slow`. */
function readListing(slow: boolean): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const url = new URL('/api_v1/targets/offline/resources/', ferry.url);
    const request = http.get(url, { headers: ferry.auth() }, (response) => {
      if (response.statusCode !== 200) reject(new Error(`status ${response.statusCode}`));
      const chunks: Buffer[] = [];
      if (slow) {
        // not a byte read for a while: the kernel's buffers fill and the server's writes wait
        response.pause();
        setTimeout(() => response.resume(), 300);
      }
      response.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        if (slow) {
          response.pause();
          setTimeout(() => response.resume(), 2);
        }
      });
      response.on('end', () => resolve(Buffer.concat(chunks)));
      response.on('error', reject);
    });
    request.on('error', reject);
  });
}

async function expected(): Promise<Buffer> {
  // a target of its own: the nodes of a first listing
  const target = new OfflineTarget({ libraryDirs: [libraryDir], stateDir: path.join(scratch, 'state-expected'), limits: DEFAULT_LIMITS });
  const nodes: ResourceNode[] = [];
  for await (const batch of target.listBatches(ctx())) nodes.push(...batch);
  return Buffer.from(JSON.stringify(nodes.map((node) => toSummary(node, ferry.url.replace(/\/$/, ''), 'offline'))), 'utf8');
}

describe('listing over HTTP', () => {
  it('sends exactly JSON.stringify of every row to a fast reader and to a slow one', { timeout: 60_000 }, async () => {
    const want = await expected();
    expect(want.length).toBeGreaterThan(8 * 1024 * 1024);
    for (const slow of [false, true, false]) {
      const body = await readListing(slow);
      expect(body.length).toBe(want.length);
      expect(body.equals(want), `${slow ? 'slow' : 'fast'} reader`).toBe(true);
    }
  });
});
