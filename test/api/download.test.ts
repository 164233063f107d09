// 4.4 over real HTTP: a streamed BagIt ZIP, unpacked with the system `unzip` and checked
// line by line; Content-Disposition; a writer failure mid-stream cuts the connection.
import { createHash } from 'node:crypto';
import { readFile, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResourceSummary } from '../../shared/api.js';
import { FerryError } from '../../electron/core/errors.js';
import { fullActions, type Entry, type Target } from '../../electron/core/target.js';
import { LocalTarget } from '../../electron/core/targets/local/index.js';
import { attachmentDisposition } from '../../electron/server/routes/resources.js';
import { expectApiError, findByPath, startFerry, unzipTo, writeTree, type Ferry } from './harness.js';

/** A target whose one file breaks after some bytes: the download must not look complete. */
function brokenTarget(state: { opened: number; aborted: boolean }): Target {
  const root = { kind: 'container' as const, kind_name: 'folder' as const, id: 'box', container: null, title: 'Box' };
  return {
    info: { name: 'broken', readable_name: 'Broken', supported_actions: fullActions(false), supported_hash_algorithms: ['md5'], credential: 'access-key' },
    async *list() {
      yield root;
    },
    detail: async () => ({ ...root, date_created: null, date_modified: null, hashes: {}, extra: {} }),
    async read(ctx, id) {
      if (id === 'missing') throw new FerryError(404, 'resource_not_found', 'There is no such box.');
      ctx.signal.addEventListener('abort', () => (state.aborted = true));
      async function* entries(): AsyncIterable<Entry> {
        yield { path: 'Box', kind: 'folder', size: null, mtime: null, hashes: {}, open: async () => Readable.from([]) };
        yield {
          path: 'Box/big.bin',
          kind: 'file',
          size: 64 * 1024 * 1024,
          mtime: null,
          hashes: {},
          async open() {
            state.opened++;
            let sent = 0;
            const chunk = Buffer.alloc(256 * 1024, 7);
            return new Readable({
              read() {
                if (id === 'slow') {
                  // an endless slow file, for the disconnect test
                  setTimeout(() => this.push(chunk), 5);
                  return;
                }
                sent += chunk.length;
                if (sent > 2 * 1024 * 1024) this.destroy(new Error('read error at /abs/secret/path'));
                else this.push(chunk);
              },
            });
          },
        };
      }
      return { title: 'Box', root, entries: entries() };
    },
    write: async () => {
      throw new Error('not used');
    },
  };
}

let ferry: Ferry;
const broken = { opened: 0, aborted: false };
const files: Record<string, string | Buffer> = {
  'Data/a b.txt': 'alpha\n',
  'Data/ünï ✓.txt': 'unicode\n',
  'Data/100%.txt': 'percent\n',
  'Data/data.json': '{"x":1}\n',
  'Data/sub/deeper/bin.dat': Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 31) % 256)),
  'Data/empty.txt': '',
};
beforeAll(async () => {
  ferry = await startFerry({ targets: (config) => [new LocalTarget({ root: config.workspace }), brokenTarget(broken)] });
  await writeTree(ferry.workspace, files);
});
afterAll(async () => ferry?.close());

async function listFiles(dir: string, prefix = ''): Promise<string[]> {
  const out: string[] = [];
  for (const name of (await readdir(path.join(dir, prefix))).sort()) {
    const relative = prefix ? `${prefix}/${name}` : name;
    if ((await stat(path.join(dir, relative))).isDirectory()) out.push(...(await listFiles(dir, relative)));
    else out.push(relative);
  }
  return out;
}

const digest = (algorithm: string, bytes: Buffer) => createHash(algorithm).update(bytes).digest('hex');

describe('GET /api_v1/targets/<t>/resources/<id>.zip/ (4.4)', () => {
  it('streams a BagIt bag whose every manifest line matches the bytes', async () => {
    const list = (await (await ferry.fetch('/api_v1/targets/local/resources/', { headers: ferry.auth() })).json()) as ResourceSummary[];
    const data = findByPath(list, 'Data')!;
    const detail = (await (await fetch(`${data.detail}.json/`, { headers: ferry.auth() })).json()) as { download_url: string };

    const response = await fetch(detail.download_url, { headers: ferry.auth() });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/zip');
    const bagName = `local_download_${data.id}`;
    expect(response.headers.get('content-disposition')).toBe(`attachment; filename="${bagName}.zip"`);
    const zipPath = path.join(ferry.root, 'download.zip');
    await import('node:fs/promises').then(async (fs) => fs.writeFile(zipPath, Buffer.from(await response.arrayBuffer())));
    const out = path.join(ferry.root, 'unzipped');
    await unzipTo(zipPath, out);

    const bag = path.join(out, bagName);
    const all = await listFiles(bag);
    const payload = all.filter((file) => file.startsWith('data/'));
    expect(payload.sort()).toEqual(Object.keys(files).map((file) => `data/${file}`).sort());
    for (const [relative, content] of Object.entries(files)) {
      expect(await readFile(path.join(bag, 'data', relative))).toEqual(Buffer.from(content));
    }
    expect(await readFile(path.join(bag, 'bagit.txt'), 'utf8')).toBe('BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n');
    expect(all).toEqual(expect.arrayContaining(['bag-info.txt', 'manifest-md5.txt', 'manifest-sha256.txt', 'tagmanifest-md5.txt', 'tagmanifest-sha256.txt']));

    for (const algorithm of ['md5', 'sha256']) {
      const lines = (await readFile(path.join(bag, `manifest-${algorithm}.txt`), 'utf8')).trim().split('\n');
      expect(lines).toHaveLength(payload.length);
      for (const line of lines) {
        const [, hex, encoded] = /^([0-9a-f]+) {2}(.+)$/.exec(line)!;
        const file = encoded!.replace(/%25/g, '%');
        expect(hex, file).toBe(digest(algorithm, await readFile(path.join(bag, file))));
      }
      const tagLines = (await readFile(path.join(bag, `tagmanifest-${algorithm}.txt`), 'utf8')).trim().split('\n');
      const tagged = tagLines.map((line) => line.split('  ')[1]);
      expect(tagged).toEqual(expect.arrayContaining(['bagit.txt', 'bag-info.txt', 'manifest-md5.txt', 'manifest-sha256.txt']));
      for (const line of tagLines) {
        const [hex, file] = line.split('  ');
        expect(hex, file).toBe(digest(algorithm, await readFile(path.join(bag, file!))));
      }
    }

    // the provenance file records the source and, per file, source vs computed hashes
    const provenance = JSON.parse(await readFile(path.join(bag, 'ferry-provenance.json'), 'utf8')).entries[0];
    expect(provenance).toMatchObject({ action: 'download', source: { target: 'local', resource_id: data.id, title: 'Data' } });
    expect(provenance.files).toHaveLength(payload.length);
    for (const file of provenance.files) {
      expect(file.computed_hashes.sha256).toBe(digest('sha256', Buffer.from(files[file.path]!)));
    }
  });

  it('downloads a single file as a bag too, and needs the token', async () => {
    const list = (await (await ferry.fetch('/api_v1/targets/local/resources/', { headers: ferry.auth() })).json()) as ResourceSummary[];
    const item = findByPath(list, 'Data/data.json')!;
    await expectApiError(await fetch(`${item.detail}.zip/`), 401, 'unauthorized');
    const response = await fetch(`${item.detail}.zip`, { headers: ferry.bearer() });
    expect(response.status).toBe(200);
    const zipPath = path.join(ferry.root, 'one.zip');
    await import('node:fs/promises').then(async (fs) => fs.writeFile(zipPath, Buffer.from(await response.arrayBuffer())));
    const out = path.join(ferry.root, 'one');
    await unzipTo(zipPath, out);
    expect(await readFile(path.join(out, `local_download_${item.id}`, 'data', 'data.json'), 'utf8')).toBe('{"x":1}\n');
  });

  it('answers an unknown resource with 404 before any byte', async () => {
    await expectApiError(await ferry.fetch('/api_v1/targets/local/resources/loc_bm9wZQ.zip/', { headers: ferry.auth() }), 404, 'resource_not_found');
    const response = await ferry.fetch('/api_v1/targets/broken/resources/missing.zip/', { headers: ferry.auth() });
    expect(response.headers.get('content-disposition')).toBeNull();
    await expectApiError(response, 404, 'resource_not_found');
  });

  it('cuts the connection when the source fails mid-stream (no "200 OK" of a broken zip)', async () => {
    const response = await ferry.fetch('/api_v1/targets/broken/resources/box.zip/', { headers: ferry.auth() });
    expect(response.status).toBe(200);
    await expect(response.arrayBuffer()).rejects.toThrow();
  });

  it('aborts the read when the client disconnects', async () => {
    broken.aborted = false;
    const controller = new AbortController();
    const response = await ferry.fetch('/api_v1/targets/broken/resources/slow.zip/', { headers: ferry.auth(), signal: controller.signal });
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    const deadline = Date.now() + 5000;
    while (!broken.aborted && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(broken.aborted).toBe(true);
  });

  it('adds an RFC 5987 filename* when the name is not plain ASCII', () => {
    expect(attachmentDisposition('a_download_b.zip')).toBe('attachment; filename="a_download_b.zip"');
    expect(attachmentDisposition('ü.zip')).toBe(`attachment; filename="_.zip"; filename*=UTF-8''%C3%BC.zip`);
  });
});
