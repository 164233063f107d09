// A file's bytes (docs/api.md "A file's bytes"): GET …/resources/<id>/content/ over real HTTP,
// on the local target and on the offline library (a file inside a kept ZIP).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResourceSummary } from '../../shared/api.js';
import { fullActions } from '../../electron/core/target.js';
import { LocalTarget } from '../../electron/core/targets/local/index.js';
import { createOfflineTarget } from '../../electron/core/targets/offline/index.js';
import { MAX_CONTENT_BYTES } from '../../electron/server/routes/content.js';
import { expectApiError, findByPath, renamed, startFerry, writeTree, type Ferry } from './harness.js';

const SVG = '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>';
const BIG = Buffer.alloc(MAX_CONTENT_BYTES + 10, 0x61);

let ferry: Ferry;
let ids: Record<string, string>;
beforeAll(async () => {
  ferry = await startFerry({
    targets: (config) => {
      const local = new LocalTarget({ root: config.workspace });
      // the same files behind a target that does not offer downloads
      const noDownload = renamed(local, 'shelf');
      return [
        local,
        createOfflineTarget(config),
        { ...noDownload, info: { ...noDownload.info, supported_actions: { ...fullActions(), resource_download: false } } },
      ];
    },
  });
  await writeTree(ferry.workspace, { 'Data/notes.txt': 'hello, world\n', 'Data/ünï code #1.svg': SVG, 'Data/big.bin': BIG });
  const listing = (await (await ferry.fetch('/api_v1/targets/local/resources/', { headers: ferry.auth() })).json()) as ResourceSummary[];
  ids = Object.fromEntries(['Data', 'Data/notes.txt', 'Data/ünï code #1.svg', 'Data/big.bin'].map((p) => [p, findByPath(listing, p)!.id]));
});
afterAll(async () => ferry?.close());

async function list(target: string, container?: string): Promise<ResourceSummary[]> {
  const query = container === undefined ? '' : `?container=${encodeURIComponent(container)}`;
  return (await (await ferry.fetch(`/api_v1/targets/${target}/resources/${query}`, { headers: ferry.auth() })).json()) as ResourceSummary[];
}

const content = (id: string, query = '', target = 'local', headers = ferry.auth()) =>
  ferry.fetch(`/api_v1/targets/${target}/resources/${encodeURIComponent(id)}/content/${query}`, { headers });

describe("GET /api_v1/targets/<t>/resources/<id>/content/", () => {
  it("answers a file's bytes as an opaque, sandboxed download with its exact length", async () => {
    const response = await content(ids['Data/notes.txt']!);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/octet-stream');
    expect(response.headers.get('content-length')).toBe('13');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('content-security-policy')).toMatch(/^sandbox;/);
    expect(response.headers.get('ferry-content-truncated')).toBeNull();
    expect(await response.text()).toBe('hello, world\n');
  });

  it('serves SVG markup as bytes, never as an image or a page, for any id', async () => {
    const response = await content(ids['Data/ünï code #1.svg']!);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/octet-stream');
    expect(await response.text()).toBe(SVG);
  });

  it('stops at max_bytes and says the file holds more; a file of exactly that size is whole', async () => {
    const cut = await content(ids['Data/notes.txt']!, '?max_bytes=5');
    expect(cut.headers.get('ferry-content-truncated')).toBe('true');
    expect(cut.headers.get('content-length')).toBe('5');
    expect(await cut.text()).toBe('hello');
    const exact = await content(ids['Data/notes.txt']!, '?max_bytes=13');
    expect(exact.headers.get('ferry-content-truncated')).toBeNull();
    expect(await exact.text()).toBe('hello, world\n');
  });

  it('never answers more than 1 MiB: that is the default, and more is refused', async () => {
    const response = await content(ids['Data/big.bin']!);
    expect(response.headers.get('ferry-content-truncated')).toBe('true');
    expect((await response.arrayBuffer()).byteLength).toBe(MAX_CONTENT_BYTES);
    await expectApiError(await content(ids['Data/big.bin']!, `?max_bytes=${MAX_CONTENT_BYTES + 1}`), 400, 'bad_request');
    await expectApiError(await content(ids['Data/big.bin']!, '?max_bytes=0'), 400, 'bad_request');
  });

  it('reads a file inside a kept ZIP (the offline library) as it reads one on disk', async () => {
    const kept = await ferry.fetch(`/api_v1/targets/local/resources/${encodeURIComponent(ids['Data']!)}.zip/?keep=1`, { headers: ferry.auth() });
    expect(kept.status).toBe(200);
    await kept.arrayBuffer();
    // the copy is renamed into place right after the last byte
    for (let i = 0; i < 100 && (await list('offline', 'None')).length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    const inside = (await list('offline')).find((node) => node.title === 'notes.txt');
    expect(inside).toBeDefined();
    const cut = await content(inside!.id, '?max_bytes=5', 'offline');
    expect(cut.headers.get('ferry-content-truncated')).toBe('true');
    expect(await cut.text()).toBe('hello');
    expect(await (await content(inside!.id, '', 'offline')).text()).toBe('hello, world\n');
  });

  it('refuses a folder with a sentence, and follows the read rules: token, unknown id, a target that does not download', async () => {
    const folder = await expectApiError(await content(ids['Data']!), 400, 'bad_request');
    expect(folder.error).toContain("'Data' is a folder");
    await expectApiError(await content(ids['Data/notes.txt']!, '', 'local', {}), 401, 'unauthorized');
    await expectApiError(await content('loc_bm9wZQ'), 404, 'resource_not_found');
    await expectApiError(await content(ids['Data/notes.txt']!, '', 'shelf'), 405, 'action_not_supported');
  });
});
