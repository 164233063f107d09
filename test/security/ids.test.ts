// Resource ids as a path-traversal vector: ids that decode to '..', absolute paths, the
// workspace root, symlinks out of (and within) the workspace, and URL-level tricks
// (dot segments, double encoding). Nothing outside the workspace is read or written.
import { mkdir, readdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResourceSummary } from '../../shared/api.js';
import { encodeLocalId } from '../../electron/core/targets/local/ids.js';
import { LocalTarget } from '../../electron/core/targets/local/local-target.js';
import { createOfflineTarget } from '../../electron/core/targets/offline/index.js';
import { rawZip } from '../../electron/core/zip/testing/raw-zip.js';
import { rawRequest, snapshotTree, startFerry, uploadForm, writeTree, type Ferry } from '../api/harness.js';

let ferry: Ferry;
let outside: string;
beforeAll(async () => {
  ferry = await startFerry({ targets: (config) => [new LocalTarget({ root: config.workspace }), createOfflineTarget(config)] });
  outside = path.join(ferry.root, 'outside');
  await writeTree(outside, { 'secret.txt': 'outside secret\n' });
  await writeTree(ferry.workspace, { 'Data/a.txt': 'a\n' });
  await symlink(outside, path.join(ferry.workspace, 'escape'));
  await symlink(path.join(outside, 'secret.txt'), path.join(ferry.workspace, 'secret-link.txt'));
  await symlink(path.join(ferry.workspace, 'Data'), path.join(ferry.workspace, 'inner-link'));
  await mkdir(path.join(ferry.dataDir, 'library'), { recursive: true });
});
afterAll(async () => ferry?.close());

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64url');

const localIds = () => [
  encodeLocalId('..'),
  encodeLocalId('../outside/secret.txt'),
  encodeLocalId('Data/../../outside/secret.txt'),
  encodeLocalId('Data/../Data/a.txt'), // a non-canonical spelling of a real file
  encodeLocalId('./Data'),
  encodeLocalId('/etc/passwd'),
  encodeLocalId(path.join(outside, 'secret.txt')),
  encodeLocalId('Data\\..\\..\\outside'),
  encodeLocalId('Data/a.txt\0'),
  encodeLocalId(''),
  encodeLocalId('.'),
  'loc_',
  'loc_Li4=', // padded
  `loc_${b64('..')}%00`,
  encodeLocalId('escape'),
  encodeLocalId('escape/secret.txt'),
  encodeLocalId('secret-link.txt'),
  encodeLocalId('inner-link'),
  encodeLocalId('inner-link/a.txt'),
];

describe('ids on the local target', () => {
  it('never name anything outside the workspace, the root itself, or a symlink: 404 for detail, download and upload', async () => {
    const before = await snapshotTree(outside);
    const zip = rawZip([{ name: 'planted.txt', data: Buffer.from('planted') }]);
    for (const id of localIds()) {
      const segment = encodeURIComponent(id);
      for (const suffix of ['.json/', '/', '.zip/']) {
        const response = await ferry.fetch(`/api_v1/targets/local/resources/${segment}${suffix}`, { headers: ferry.auth() });
        const text = await response.text();
        expect([400, 404], `${id}${suffix}: ${text.slice(0, 200)}`).toContain(response.status);
        expect(text).not.toContain('outside secret');
      }
      const upload = await ferry.fetch(`/api_v1/targets/local/resources/${segment}/`, {
        method: 'POST',
        body: uploadForm(zip),
        headers: ferry.auth({ 'duplicate-file-action': 'update' }),
      });
      expect([400, 404], id).toContain(upload.status);
      const listing = await ferry.fetch(`/api_v1/targets/local/resources/?container=${segment}`, { headers: ferry.auth() });
      expect([400, 404], `list ${id}`).toContain(listing.status);
    }
    expect(await snapshotTree(outside)).toEqual(before);
  });

  it('the listing never shows the symlinks, so no id for them is ever handed out', async () => {
    const list = (await (await ferry.fetch('/api_v1/targets/local/resources/', { headers: ferry.auth() })).json()) as ResourceSummary[];
    expect(list.map((node) => node.title).sort()).toEqual(['Data', 'a.txt']);
  });

  it('URL tricks: dot segments, double encoding, encoded slashes', async () => {
    const data = encodeLocalId('Data');
    for (const route of [
      `/api_v1/targets/local/resources/${data}/../../../../outside/secret.txt`,
      '/api_v1/targets/local/resources/%2e%2e/%2e%2e/outside/secret.txt.json/',
      '/api_v1/targets/local/resources/%252e%252e.json/',
      `/api_v1/targets/local/resources/${encodeURIComponent(encodeLocalId('Data'))}%2F..%2F..%2Foutside.json/`,
      '/api_v1/targets/local/resources/..%2f..%2foutside%2fsecret.txt.zip/',
      '/api_v1/targets/..%2f..%2f/resources/',
    ]) {
      const response = await rawRequest(ferry.port, { path: route, headers: { host: `127.0.0.1:${ferry.port}`, ...ferry.auth() } });
      expect([400, 404], route).toContain(response.status);
      expect(response.body).not.toContain('outside secret');
    }
  });
});

describe('ids on the offline target', () => {
  it('an entry id cannot step out of its archive, and an archive id names only a library file', async () => {
    await writeFile(path.join(ferry.dataDir, 'library', 'kept.zip'), rawZip([{ name: 'T/a.txt', data: Buffer.from('a') }]));
    const list = (await (await ferry.fetch('/api_v1/targets/offline/resources/', { headers: ferry.auth() })).json()) as ResourceSummary[];
    const archive = list.find((node) => node.container === 'None')!;
    expect(archive).toBeDefined();
    for (const id of [
      `${archive.id}-${b64('../outside/secret.txt')}`,
      `${archive.id}-${b64('/etc/passwd')}`,
      `${archive.id}-${b64('T/../../x')}`,
      `${archive.id}-${b64('T/a.txt')}=`,
      `${archive.id}-`,
      `${archive.id}--`,
      'zip_000000000000000000000000',
      `zip_${'../'.repeat(8)}`,
      b64('../outside/secret.txt'),
      '..',
    ]) {
      for (const suffix of ['.json/', '.zip/']) {
        const response = await ferry.fetch(`/api_v1/targets/offline/resources/${encodeURIComponent(id)}${suffix}`, { headers: ferry.auth() });
        const text = await response.text();
        expect([400, 404], `${id}${suffix}`).toContain(response.status);
        expect(text).not.toContain('outside secret');
      }
    }
    expect(await readdir(path.join(ferry.dataDir, 'library'))).toEqual(['kept.zip']);
  });
});
