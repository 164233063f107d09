// Issue #17, parts 4, 5 and 7: one hostile-entry policy for uploads and the offline library.
// Each archive here is refused by the upload reader with a sentence; the library must list it
// damaged with the SAME sentence, and refuse to transfer or download it (a 4xx or a failed
// job with that sentence, nothing written) — never list it "ok" and transfer it, never a 500.
// Names are decoded as their writers meant (part 5), and ZIPs with data in front (part 7)
// are read as unzip, Python and Go read them.
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job, ResourceDetail, ResourceSummary } from '../../shared/api.js';
import { DEFAULT_LIMITS } from '../../electron/core/limits.js';
import { LocalTarget } from '../../electron/core/targets/local/local-target.js';
import { encodeLocalId } from '../../electron/core/targets/local/ids.js';
import { createOfflineTarget } from '../../electron/core/targets/offline/index.js';
import { openUploadZip } from '../../electron/core/bag/upload-reader.js';
import { rawZip } from '../../electron/core/zip/testing/raw-zip.js';
import { snapshotTree, startFerry, uploadForm, waitForJob, type Ferry } from '../api/harness.js';

const x = Buffer.from('payload x\n');
const y = Buffer.from('payload y\n');

/** Python's zipfile writes ASCII names without the UTF-8 flag, as Info-ZIP does. */
function pythonZip(files: Record<string, string>): Buffer {
  const script = 'import io,json,sys,zipfile\nb=io.BytesIO()\nz=zipfile.ZipFile(b,"w")\nfor k,v in json.loads(sys.argv[1]).items(): z.writestr(k,v)\nz.close()\nsys.stdout.buffer.write(b.getvalue())';
  return execFileSync('python3', ['-c', script, JSON.stringify(files)]);
}

const HOSTILE: { label: string; zip: () => Buffer; message: RegExp }[] = [
  { label: 'a path twice', zip: () => rawZip([{ name: 'Data/a.txt', data: x }, { name: 'Data/a.txt', data: y }]), message: /holds "Data\/a\.txt" twice/ },
  { label: 'names differing in case', zip: () => rawZip([{ name: 'Data/A.txt', data: x }, { name: 'Data/a.txt', data: y }]), message: /differ only in case/ },
  { label: 'a backslash name', zip: () => rawZip([{ name: 'Data\\x.txt', data: x }]), message: /uses backslashes/ },
  {
    label: 'two entries over one local header',
    zip: () => rawZip([{ name: 'Data/a.txt', data: x }, { name: 'Data/b.txt', data: x, local: false, localOffset: 0 }]),
    message: /share the same stored data/,
  },
  {
    label: 'an encrypted entry',
    zip: () => rawZip([{ name: 'Data/ok.txt', data: x }, { name: 'Data/secret.txt', data: Buffer.alloc(16, 7), declaredSize: 4, flags: 0x1, method: 0 }]),
    message: /"Data\/secret\.txt" is encrypted/,
  },
  { label: 'a symbolic link', zip: () => rawZip([{ name: 'Data/link', data: Buffer.from('/etc/passwd'), mode: 0o120777, method: 0 }]), message: /symbolic link/ },
  // part 5: a TAB in a name Python wrote without the UTF-8 flag is a TAB (not CP437's ○), and refused
  { label: 'a control character in a name (Python zipfile)', zip: () => pythonZip({ 'Data/a\tb.txt': 'x' }), message: /"Data\/a\\tb\.txt" has a control character \(TAB\) in its name/ },
  { label: 'a line feed in a flagged name', zip: () => rawZip([{ name: 'Data/a\nb.txt', data: x }]), message: /"Data\/a\\nb\.txt" has a control character \(LF\) in its name/ },
];

let ferry: Ferry;
let scratch: string;
const library = () => path.join(ferry.dataDir, 'library');

beforeAll(async () => {
  ferry = await startFerry({ targets: (config) => [new LocalTarget({ root: config.workspace }), createOfflineTarget(config)] });
  scratch = await mkdtemp(path.join(os.tmpdir(), 'ferry-policy-'));
  await mkdir(library(), { recursive: true });
  await mkdir(path.join(ferry.workspace, 'inbox'), { recursive: true });
});
afterAll(async () => {
  await ferry.close();
  await rm(scratch, { recursive: true, force: true });
});

async function uploadRefusal(zip: Buffer): Promise<{ status: number; message: string } | null> {
  const file = path.join(scratch, `upload-${Math.random().toString(16).slice(2)}.zip`);
  await writeFile(file, zip);
  try {
    const archive = await openUploadZip(file, DEFAULT_LIMITS);
    await archive.close();
    return null;
  } catch (error) {
    return { status: (error as { status: number }).status, message: (error as Error).message };
  }
}

async function libraryNode(name: string): Promise<ResourceSummary> {
  const response = await ferry.fetch('/api_v1/targets/offline/resources/?container=None', { headers: ferry.auth() });
  const node = ((await response.json()) as ResourceSummary[]).find((n) => n.title === name);
  expect(node, name).toBeDefined();
  return node!;
}

async function detail(id: string): Promise<ResourceDetail> {
  const response = await ferry.fetch(`/api_v1/targets/offline/resources/${id}.json/`, { headers: ferry.auth() });
  expect(response.status).toBe(200);
  return (await response.json()) as ResourceDetail;
}

/** A transfer of `id` into the workspace's inbox: the job's end (or the refusal's status and sentence). */
async function transfer(id: string): Promise<{ status: number; error: string | null; job: Job | null }> {
  const response = await ferry.fetch(`/api_v1/targets/local/resources/${encodeLocalId('inbox')}/`, {
    method: 'POST',
    body: JSON.stringify({ source_target_name: 'offline', source_resource_id: id }),
    headers: ferry.auth({ 'duplicate-file-action': 'ignore', 'content-type': 'application/json' }),
  });
  if (response.status !== 202) return { status: response.status, error: ((await response.json()) as { error: string }).error, job: null };
  const { ticket_number: ticket } = (await response.json()) as { ticket_number: string };
  const job = await waitForJob(ferry, ticket);
  return { status: 202, error: job.error, job };
}

describe('one policy: what the upload reader refuses, the library lists damaged with the same sentence and never transfers', () => {
  for (const [i, { label, zip, message }] of HOSTILE.entries()) {
    it(label, async () => {
      const bytes = zip();
      const refusal = await uploadRefusal(bytes);
      expect(refusal, 'the upload reader refuses it').not.toBeNull();
      expect(refusal!.status).toBeGreaterThanOrEqual(400);
      expect(refusal!.status).toBeLessThan(500);
      expect(refusal!.message).toMatch(message);

      const name = `hostile-${i}`;
      await writeFile(path.join(library(), `${name}.zip`), bytes);
      const node = await libraryNode(name);
      const info = await detail(node.id);
      expect(info.extra.state).toBe('damaged');
      expect(info.extra.error).toBe(refusal!.message);

      const before = await snapshotTree(ferry.workspace);
      const moved = await transfer(node.id);
      if (moved.job) expect(moved.job.status).toBe('failed');
      else expect(moved.status).toBeGreaterThanOrEqual(400);
      expect(moved.error).toBe(refusal!.message);
      expect(await snapshotTree(ferry.workspace)).toEqual(before);

      const download = await ferry.fetch(`/api_v1/targets/offline/resources/${node.id}.zip/`, { headers: ferry.auth() });
      expect(download.status).toBeGreaterThanOrEqual(400);
      expect(download.status).toBeLessThan(500);
      expect(((await download.json()) as { error: string }).error).toBe(refusal!.message);
    });
  }
});

describe('names decoded as their writers meant (part 5)', () => {
  it('an ASCII name without the UTF-8 flag is read as ASCII, and uploads unchanged', async () => {
    const file = path.join(scratch, 'ascii.zip');
    await writeFile(file, pythonZip({ 'Data/plain name (1).txt': 'x' }));
    const archive = await openUploadZip(file, DEFAULT_LIMITS);
    const paths: string[] = [];
    for await (const entry of archive.entries()) paths.push(entry.path);
    await archive.close();
    expect(paths).toEqual(['Data', 'Data/plain name (1).txt']);
  });

  it('bytes over 0x7f without the flag are CP437, unless an Info-ZIP Unicode Path field (matching CRC) gives the UTF-8 name', async () => {
    const { crc32 } = await import('../../electron/core/crc32.js');
    const plain = Buffer.from([0x44, 0x2f, 0x82, 0x2e, 0x74]); // "D/é.t" in CP437
    const utf8 = Buffer.from('D/café.t', 'utf8');
    const field = (crc: number) => {
      const out = Buffer.alloc(9 + utf8.length);
      out.writeUInt16LE(0x7075, 0);
      out.writeUInt16LE(5 + utf8.length, 2);
      out[4] = 1;
      out.writeUInt32LE(crc >>> 0, 5);
      utf8.copy(out, 9);
      return out;
    };
    const names = async (zip: Buffer) => {
      const file = path.join(scratch, `names-${Math.random().toString(16).slice(2)}.zip`);
      await writeFile(file, zip);
      const archive = await openUploadZip(file, DEFAULT_LIMITS);
      const out: string[] = [];
      for await (const entry of archive.entries()) if (entry.kind === 'file') out.push(entry.path);
      await archive.close();
      return out;
    };
    expect(await names(rawZip([{ name: plain, data: x, utf8: false }]))).toEqual(['D/é.t']);
    expect(await names(rawZip([{ name: plain, data: x, utf8: false, centralExtra: field(crc32(plain)) }]))).toEqual(['D/café.t']);
    // a field whose CRC does not match the plain name is stale: ignored
    expect(await names(rawZip([{ name: plain, data: x, utf8: false, centralExtra: field(1234) }]))).toEqual(['D/é.t']);
  });
});

describe('data in front of the archive (part 7)', () => {
  it('a self-extractor stub before an unadjusted archive: uploaded and transferred exactly, as unzip reads it', async () => {
    const stub = Buffer.concat([Buffer.from('MZ'), Buffer.alloc(4094, 0x90)]);
    const bytes = rawZip([{ name: 'Data/a.txt', data: x }, { name: 'Data/sub/b.bin', data: y, method: 0 }], { prefix: stub });
    const file = path.join(scratch, 'sfx.zip');
    await writeFile(file, bytes);
    // unzip reads it (warning about the extra bytes, exit status 1)
    const out = path.join(scratch, 'sfx-unzip');
    try {
      execFileSync('unzip', ['-q', file, '-d', out], { stdio: 'ignore' });
    } catch (error) {
      expect((error as { status: number }).status).toBe(1);
    }
    expect(await readFile(path.join(out, 'Data/a.txt'))).toEqual(x);

    const archive = await openUploadZip(file, DEFAULT_LIMITS);
    const read: Record<string, Buffer> = {};
    for await (const entry of archive.entries()) {
      if (entry.kind !== 'file') continue;
      const chunks: Buffer[] = [];
      for await (const chunk of await entry.open()) chunks.push(chunk as Buffer);
      read[entry.path] = Buffer.concat(chunks);
    }
    await archive.close();
    expect(read).toEqual({ 'Data/a.txt': x, 'Data/sub/b.bin': y });

    // through the API: the spool recognises it as a ZIP (its end record), the job writes it
    await mkdir(path.join(ferry.workspace, 'sfx-upload'));
    const response = await ferry.fetch(`/api_v1/targets/local/resources/${encodeLocalId('sfx-upload')}/`, { method: 'POST', headers: ferry.auth({ 'duplicate-file-action': 'ignore' }), body: uploadForm(bytes) });
    expect(response.status, await response.clone().text()).toBe(202);
    const uploaded = await waitForJob(ferry, ((await response.json()) as { ticket_number: string }).ticket_number);
    expect(uploaded.status, uploaded.error ?? '').toBe('succeeded');
    expect(await readFile(path.join(ferry.workspace, 'sfx-upload', 'Data/sub/b.bin'))).toEqual(y);

    await writeFile(path.join(library(), 'sfx.zip'), bytes);
    const node = await libraryNode('sfx');
    expect((await detail(node.id)).extra.state).toBe('ok');
    const moved = await transfer(node.id);
    expect(moved.job?.status, moved.error ?? '').toBe('succeeded');
    const title = moved.job!.report!.resources_created[0] ?? 'sfx';
    expect(await readFile(path.join(ferry.workspace, 'inbox', title, 'Data/a.txt'))).toEqual(x);
    expect(await readFile(path.join(ferry.workspace, 'inbox', title, 'Data/sub/b.bin'))).toEqual(y);
  });
});

describe('a library archive with a damaged entry (CRC-32 or size)', () => {
  it('is refused before anything is transferred or downloaded, with the sentence an upload gets', async () => {
    const bytes = rawZip([{ name: 'Data/a.txt', data: x }, { name: 'Data/b.txt', data: y, crc: 1234 }, { name: 'Data/c.txt', data: x }]);
    const refusal = await uploadRefusal(bytes);
    expect(refusal?.message).toMatch(/"Data\/b\.txt" is damaged \(its CRC-32 does not match\)/);
    await writeFile(path.join(library(), 'bad-crc.zip'), bytes);
    const node = await libraryNode('bad-crc');
    const before = await snapshotTree(ferry.workspace);
    const moved = await transfer(node.id);
    if (moved.job) expect(moved.job.status).toBe('failed');
    expect(moved.error).toBe(refusal!.message);
    expect(await snapshotTree(ferry.workspace)).toEqual(before);
    const download = await ferry.fetch(`/api_v1/targets/offline/resources/${node.id}.zip/`, { headers: ferry.auth() });
    expect(download.status).toBe(400);
    expect(((await download.json()) as { error: string }).error).toBe(refusal!.message);
  });
});

describe('data in front of a ZIP64 archive (part 7)', () => {
  it('its ZIP64 end record found where it is, though the locator points where it would be without the stub', async () => {
    const stub = Buffer.alloc(1000, 0x4d);
    const bytes = rawZip([{ name: 'Data/a.txt', data: x }, { name: 'Data/b.txt', data: y }], { prefix: stub, zip64: {} });
    const file = path.join(scratch, 'sfx64.zip');
    await writeFile(file, bytes);
    const archive = await openUploadZip(file, DEFAULT_LIMITS);
    const read: Record<string, Buffer> = {};
    for await (const entry of archive.entries()) {
      if (entry.kind !== 'file') continue;
      const chunks: Buffer[] = [];
      for await (const chunk of await entry.open()) chunks.push(chunk as Buffer);
      read[entry.path] = Buffer.concat(chunks);
    }
    await archive.close();
    expect(read).toEqual({ 'Data/a.txt': x, 'Data/b.txt': y });
  });
});
