// 4.5 / 4.6 over real HTTP with real ZIPs made by the system `zip`: plain ZIPs and bags,
// ignore vs update, top-level uploads, bad bags, hostile archives and every refusal.
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, readdir, symlink } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import yazl from 'yazl';
import type { Acknowledgement, Job, ResourceSummary } from '../../shared/api.js';
import { YOUNG_COLLECTION_BYTES, youngCollectionCounts } from '../../electron/core/young-collection.js';
import { expectApiError, findByPath, snapshotTree, startFerry, uploadForm, waitForJob, writeTree, zipFolder, type Ferry } from './harness.js';

let ferry: Ferry;
let scratch = 0;
beforeAll(async () => {
  ferry = await startFerry();
  await writeTree(ferry.workspace, { 'Data/keep.txt': 'keep\n', 'Data/same.txt': 'same\n', 'Data/changes.txt': 'old\n', 'Top.txt': 'top\n' });
});
afterAll(async () => ferry?.close());

/** A ZIP (system `zip`) of the given files; `args` are passed to zip (-y, -P ...). */
async function makeZip(files: Record<string, string | Buffer>, args: string[] = [], prepare?: (dir: string) => Promise<void>): Promise<Buffer> {
  const dir = path.join(ferry.root, 'scratch', String(scratch++));
  await mkdir(dir, { recursive: true });
  await writeTree(dir, files);
  await prepare?.(dir);
  return zipFolder(dir, path.join(dir, '..', `${scratch}.zip`), args, (await readdir(dir)).sort());
}

/** A ZIP written by yazl, which sets the UTF-8 flag (bit 11) on non-ASCII names. */
async function yazlZip(files: Record<string, string>): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const [name, content] of Object.entries(files)) zip.addBuffer(Buffer.from(content), name);
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** A bag folder's files: payload under data/, with manifests (optionally lying). */
function bagFiles(payload: Record<string, string>, lie = false): Record<string, string> {
  const sha = (text: string) => createHash('sha256').update(text).digest('hex');
  const manifest = Object.entries(payload)
    .map(([file, content], i) => `${lie && i === 0 ? sha('something else') : sha(content)}  data/${file}\n`)
    .join('');
  return {
    'bagit.txt': 'BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n',
    'bag-info.txt': 'Source-Organization: Ferry tests\n',
    'manifest-sha256.txt': manifest,
    ...Object.fromEntries(Object.entries(payload).map(([file, content]) => [`data/${file}`, content])),
  };
}

async function idOf(titlePath: string): Promise<string> {
  const list = (await (await ferry.fetch('/api_v1/targets/local/resources/', { headers: ferry.auth() })).json()) as ResourceSummary[];
  const found = findByPath(list, titlePath);
  if (!found) throw new Error(`no ${titlePath}`);
  return found.id;
}

async function post(containerId: string | null, zip: Buffer, action = 'ignore', headers: Record<string, string> = ferry.auth()): Promise<Response> {
  const where = containerId === null ? '/api_v1/targets/local/resources/' : `/api_v1/targets/local/resources/${encodeURIComponent(containerId)}/`;
  return ferry.fetch(where, { method: 'POST', body: uploadForm(zip), headers: { ...headers, 'duplicate-file-action': action } });
}

async function upload(containerId: string | null, zip: Buffer, action = 'ignore'): Promise<Job> {
  const response = await post(containerId, zip, action);
  const text = await response.text();
  expect(response.status, text).toBe(202);
  const ack = JSON.parse(text) as Acknowledgement;
  expect(Object.keys(ack).sort()).toEqual(['message', 'ticket_number']);
  expect(ack.message).toBe('The server is processing the request.');
  expect(response.headers.get('location')).toBe(`/api_v1/jobs/${ack.ticket_number}/`);
  return waitForJob(ferry, ack.ticket_number);
}

const read = (relative: string) => readFile(path.join(ferry.workspace, relative), 'utf8');

/** The whole temp tree (workspace and its parent) except the data dir, where jobs live. */
async function snapshotAll(): Promise<Record<string, string>> {
  const all = await snapshotTree(ferry.root);
  return Object.fromEntries(Object.entries(all).filter(([file]) => !file.startsWith('data') && !file.startsWith('scratch')));
}

describe('POST /api_v1/targets/<t>/resources/<id>/ (4.5)', () => {
  it('writes a plain ZIP into a folder', async () => {
    // yazl marks names as UTF-8 (Info-ZIP `zip` on Linux stores them unmarked, see yazlZip)
    const job = await upload(await idOf('Data'), await yazlZip({ 'new.txt': 'new\n', 'nested/n é.txt': 'nested\n' }));
    expect(job.status, job.error ?? '').toBe('succeeded');
    expect(job.kind).toBe('upload');
    expect(job.target).toBe('local');
    expect(job.report!.resources_created).toEqual(expect.arrayContaining(['new.txt', 'nested/n é.txt']));
    expect(await read('Data/new.txt')).toBe('new\n');
    expect(await read('Data/nested/n é.txt')).toBe('nested\n');
    expect(job.progress.files_done).toBe(2);
  });

  it("counts the body it receives towards a young collection, so the socket's dead chunks do not pile up (young-collection.ts)", async () => {
    const big = randomBytes(3 * YOUNG_COLLECTION_BYTES);
    const zip = await makeZip({ 'big.bin': big }, ['-0']);
    const before = youngCollectionCounts.collections;
    const job = await upload(await idOf('Data'), zip);
    expect(job.status, job.error ?? '').toBe('succeeded');
    expect((await readFile(path.join(ferry.workspace, 'Data/big.bin'))).equals(big)).toBe(true);
    // the stored entry is read in lent buffers, given back: only the spool's count collects
    expect(youngCollectionCounts.collections - before).toBeGreaterThanOrEqual(2);
  });

  it('writes the payload of a zipped bag (validated) and not its tag files', async () => {
    const job = await upload(await idOf('Data'), await makeZip(bagFiles({ 'from-bag.txt': 'bagged\n', 'deep/x.txt': 'x\n' })));
    expect(job.status, job.error ?? '').toBe('succeeded');
    expect(await read('Data/from-bag.txt')).toBe('bagged\n');
    expect(await read('Data/deep/x.txt')).toBe('x\n');
    await expect(read('Data/bagit.txt')).rejects.toThrow();
  });

  it('ignore never touches existing files; update replaces only what differs', async () => {
    const zip = await makeZip({ 'same.txt': 'same\n', 'changes.txt': 'new content\n' });
    const data = await idOf('Data');
    const ignored = await upload(data, zip, 'ignore');
    expect(ignored.status).toBe('succeeded');
    expect(ignored.report!.resources_ignored.sort()).toEqual(['changes.txt', 'same.txt']);
    expect(await read('Data/changes.txt')).toBe('old\n');

    const updated = await upload(data, zip, 'update');
    expect(updated.status).toBe('succeeded');
    expect(updated.report!.resources_updated).toEqual(['changes.txt']);
    expect(updated.report!.resources_ignored).toEqual(['same.txt']);
    expect(await read('Data/changes.txt')).toBe('new content\n');
    expect(await read('Data/same.txt')).toBe('same\n');
  });

  it('fails a bag whose manifest does not match, having written nothing', async () => {
    const before = await snapshotAll();
    const job = await upload(await idOf('Data'), await makeZip(bagFiles({ 'a.txt': 'a\n', 'b.txt': 'b\n' }, true)));
    expect(job.status).toBe('failed');
    expect(job.error).toMatch(/manifest|checksum|bag/i);
    expect(await snapshotAll()).toEqual(before);
  });
});

describe('POST /api_v1/targets/<t>/resources/ (4.6)', () => {
  it('makes the one top-level folder a new resource, with a distinct name when taken', async () => {
    const zip = await makeZip({ 'Fresh/one.txt': '1\n', 'Fresh/sub/two.txt': '2\n' });
    const first = await upload(null, zip);
    expect(first.status, first.error ?? '').toBe('succeeded');
    expect(first.resource_id).toBeNull();
    expect(first.report!.new_resource).toMatchObject({ title: 'Fresh' });
    expect(await read('Fresh/sub/two.txt')).toBe('2\n');
    expect(await idOf('Fresh')).toBe(first.report!.new_resource!.id);

    const second = await upload(null, zip);
    expect(second.status).toBe('succeeded');
    const title = second.report!.new_resource!.title;
    expect(title).not.toBe('Fresh');
    expect(await read(`${title}/one.txt`)).toBe('1\n');
  });

  it('accepts a top-level bag (the folder under data/)', async () => {
    const job = await upload(null, await makeZip(bagFiles({ 'Bagged/x.txt': 'x\n' })));
    expect(job.status, job.error ?? '').toBe('succeeded');
    expect(await read('Bagged/x.txt')).toBe('x\n');
  });

  it('fails a top-level upload that is not exactly one folder, writing nothing', async () => {
    const before = await snapshotAll();
    const job = await upload(null, await makeZip({ 'loose.txt': 'l\n', 'Other/x.txt': 'x\n' }));
    expect(job.status).toBe('failed');
    expect(job.error).toMatch(/one top-level folder/);
    expect(await snapshotAll()).toEqual(before);
  });

  it('fails a top-level upload of a single loose file: a new resource is a folder', async () => {
    const before = await snapshotAll();
    const job = await upload(null, await makeZip({ 'loose.txt': 'l\n' }));
    expect(job.status).toBe('failed');
    expect(job.error).toMatch(/one top-level folder; "loose.txt" is a file/);
    expect(await snapshotAll()).toEqual(before);
  });
});

describe('hostile ZIPs fail their job and leave every byte as it was', () => {
  /** `zip` will not store these names, so same-length names are patched in afterwards. */
  async function patchedZip(realName: string, hostileName: string): Promise<Buffer> {
    expect(hostileName).toHaveLength(realName.length);
    const zip = await makeZip({ [realName]: 'evil\n' });
    const from = Buffer.from(realName);
    const to = Buffer.from(hostileName);
    let at = zip.indexOf(from);
    let count = 0;
    while (at !== -1) {
      to.copy(zip, at);
      count++;
      at = zip.indexOf(from, at + 1);
    }
    expect(count).toBe(2); // local header and central directory
    return zip;
  }

  const cases: [string, () => Promise<Buffer>, RegExp][] = [
    ['zip-slip (../)', () => patchedZip('xx/evil.txt', '../evil.txt'), /outside|\.\.|unsafe|not allowed/i],
    ['deep zip-slip', () => patchedZip('aa/bb/cc/evil.txt', 'aa/../../../e.txt'), /outside|\.\.|unsafe|not allowed/i],
    ['absolute path', () => patchedZip('xtmp/evil.txt', '/tmp/evil.txt'), /absolute|outside|unsafe|not allowed/i],
    [
      'symlink (zip -y)',
      () =>
        makeZip({ 'ok.txt': 'fine\n' }, ['-y'], async (dir) => {
          await symlink('../../outside', path.join(dir, 'link'));
        }),
      /link/i,
    ],
    ['encrypted (zip -P)', () => makeZip({ 'secret.txt': 'secret\n' }, ['-P', 'password']), /encrypt|password/i],
  ];

  for (const [name, build, message] of cases) {
    it(name, async () => {
      const before = await snapshotAll();
      const job = await upload(await idOf('Data'), await build());
      expect(job.status).toBe('failed');
      expect(job.error).toMatch(message);
      expect(job.error).not.toContain(ferry.root);
      expect(await snapshotAll()).toEqual(before);
    });
  }

  it('a zip bomb (compression ratio over the limit)', async () => {
    const small = await startFerry({ limits: { maxCompressionRatio: 50 } });
    try {
      await writeTree(small.workspace, { 'Data/keep.txt': 'keep\n' });
      const list = (await (await small.fetch('/api_v1/targets/local/resources/', { headers: small.auth() })).json()) as ResourceSummary[];
      const before = await snapshotTree(small.workspace);
      const zip = await makeZip({ 'zeros.bin': Buffer.alloc(4 * 1024 * 1024) });
      const response = await small.fetch(`/api_v1/targets/local/resources/${findByPath(list, 'Data')!.id}/`, {
        method: 'POST',
        body: uploadForm(zip),
        headers: small.auth({ 'duplicate-file-action': 'ignore' }),
      });
      expect(response.status).toBe(202);
      const job = await waitForJob(small, ((await response.json()) as Acknowledgement).ticket_number);
      expect(job.status).toBe('failed');
      expect(job.error).toMatch(/ratio|bomb|compress/i);
      expect(await snapshotTree(small.workspace)).toEqual(before);
    } finally {
      await small.close();
    }
  });
});

describe('refusals, in the contract shape', () => {
  it('400 invalid_duplicate_action for a missing or unknown duplicate-file-action', async () => {
    const zip = await makeZip({ 'x.txt': 'x' });
    const data = await idOf('Data');
    for (const action of ['', 'overwrite']) {
      const response = await ferry.fetch(`/api_v1/targets/local/resources/${data}/`, {
        method: 'POST',
        body: uploadForm(zip),
        headers: ferry.auth(action ? { 'duplicate-file-action': action } : {}),
      });
      const body = await expectApiError(response, 400, 'invalid_duplicate_action');
      expect(body.error).toMatch(/ignore.*update/);
    }
  });

  it('400 missing_file without the service-file field; 400 not_a_zip for other bytes', async () => {
    await expectApiError(await ferry.fetch('/api_v1/targets/local/resources/', {
      method: 'POST',
      body: uploadForm(await makeZip({ 'F/x.txt': 'x' }), 'other-field'),
      headers: ferry.auth({ 'duplicate-file-action': 'ignore' }),
    }), 400, 'missing_file');
    await expectApiError(await post(null, Buffer.from('this is not a zip at all')), 400, 'not_a_zip');
    await expectApiError(await post(null, Buffer.alloc(0)), 400, 'not_a_zip');
    expect(await readdir(path.join(ferry.dataDir, 'spool')).then((names) => names.filter((n) => n.endsWith('.part')))).toEqual([]);
  });

  it('415 for any other content type, and for none', async () => {
    for (const headers of [{ 'content-type': 'text/plain' }, { 'content-type': 'application/x-www-form-urlencoded' }, {}] as Record<string, string>[]) {
      await expectApiError(
        await ferry.fetch('/api_v1/targets/local/resources/', { method: 'POST', body: headers['content-type'] ? 'a=b' : undefined, headers: ferry.auth({ 'duplicate-file-action': 'ignore', ...headers }) }),
        415,
        'unsupported_media_type',
      );
    }
  });

  it('401 without the destination token, 404 for an unknown target or folder, 400 when the container is a file', async () => {
    const zip = await makeZip({ 'x.txt': 'x' });
    await expectApiError(await post(await idOf('Data'), zip, 'ignore', {}), 401, 'unauthorized');
    await expectApiError(await post(await idOf('Data'), zip, 'ignore', { 'service-destination-token': 'nope' }), 401, 'unauthorized');
    await expectApiError(
      await ferry.fetch('/api_v1/targets/nowhere/resources/', { method: 'POST', body: uploadForm(zip), headers: ferry.auth({ 'duplicate-file-action': 'ignore' }) }),
      404,
      'target_not_found',
    );
    await expectApiError(await post('loc_bm9wZQ', zip), 404, 'resource_not_found');
    await expectApiError(await post(await idOf('Top.txt'), zip), 400, 'bad_request');
  });

  it('413 over the upload size limit, leaving no partial spool file', async () => {
    const small = await startFerry({ limits: { maxUploadBytes: 64 * 1024 } });
    try {
      const big = await makeZip({ 'F/noise.bin': Buffer.from(Array.from({ length: 200_000 }, () => Math.floor(Math.random() * 256))) });
      const response = await small.fetch('/api_v1/targets/local/resources/', {
        method: 'POST',
        body: uploadForm(big),
        headers: small.auth({ 'duplicate-file-action': 'ignore' }),
      });
      await expectApiError(response, 413, 'too_large');
      expect(await readdir(path.join(small.dataDir, 'spool'))).toEqual([]);
    } finally {
      await small.close();
    }
  });
});
