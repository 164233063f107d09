// Writes the seed inputs of both fuzz targets into test/fuzz/corpus/<target>/ (run once by
// hand: `npx tsx test/fuzz/make-seeds.ts`, then minimise with `node test/fuzz/run.mjs
// --minimize-corpus`). Small valid ZIPs and bags from the tools real people use (yazl, Info-ZIP
// zip, the layout of Ferry's bag writer) and a few malformed ones, each a few hundred bytes.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import yazl from 'yazl';
import { rawZip, zip64Extra } from '../../electron/core/zip/testing/raw-zip.js';
import { FUZZ_TARGETS } from './targets/index.js';

const here = dirname(fileURLToPath(import.meta.url));
const MTIME = new Date('2024-05-06T07:08:10Z');

async function streamToBuffer(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

type YazlItem = { name: string; data?: string; folder?: boolean; stream?: boolean; compress?: boolean; zip64?: boolean; mode?: number };

async function yazlZip(items: YazlItem[]): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const item of items) {
    const options = { mtime: MTIME, compress: item.compress ?? true, forceZip64Format: item.zip64 ?? false, ...(item.mode ? { mode: item.mode } : {}) };
    if (item.folder) zip.addEmptyDirectory(item.name, { mtime: MTIME });
    else if (item.stream) zip.addReadStream(Readable.from([Buffer.from(item.data ?? '')]), item.name, options);
    else zip.addBuffer(Buffer.from(item.data ?? ''), item.name, options);
  }
  zip.end();
  return streamToBuffer(zip.outputStream);
}

const hex = (algorithm: string, text: string) => createHash(algorithm).update(text).digest('hex');

/** A bag at the archive root or in `root/`, its manifests made from `payload` unless told otherwise. */
function bagItems(payload: Record<string, string>, root = '', lie?: { path: string; hash: string }): YazlItem[] {
  const manifest = (algorithm: string) =>
    Object.entries(payload)
      .map(([path, data]) => `${lie?.path === path ? lie.hash : hex(algorithm, data)}  data/${path}\n`)
      .join('');
  const bytes = Object.values(payload).reduce((sum, data) => sum + Buffer.byteLength(data), 0);
  const tags: Record<string, string> = {
    'bagit.txt': 'BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n',
    'bag-info.txt': `Payload-Oxum: ${bytes}.${Object.keys(payload).length}\nBagging-Date: 2024-05-06\n`,
    'manifest-sha256.txt': manifest('sha256'),
    'manifest-md5.txt': manifest('md5'),
  };
  tags['tagmanifest-sha256.txt'] = Object.entries(tags)
    .map(([path, data]) => `${hex('sha256', data)} ${path}\n`)
    .join('');
  return [
    ...Object.entries(tags).map(([name, data]) => ({ name: root + name, data })),
    ...Object.entries(payload).map(([name, data]) => ({ name: `${root}data/${name}`, data })),
  ];
}

/** Laid out as Ferry's bag writer lays out a download: one bag folder, one payload folder, provenance. */
async function ferryShapedBag(): Promise<Buffer> {
  const provenance = JSON.stringify({
    ferry_provenance_version: 1,
    source_target: 'osf',
    resource_id: 'abc12',
    resource_title: 'survey',
    downloaded_at: '2024-05-06T07:08:10Z',
    files: [{ path: 'survey/readme.md', source_hashes: { md5: hex('md5', '# Survey\n') }, fixity: 'ok' }],
  });
  const items = bagItems({ 'survey/readme.md': '# Survey\n', 'survey/raw/w1.csv': 'id,answer\n1,yes\n2,no\n' }, 'osf_download_abc12/');
  return yazlZip([...items, { name: 'osf_download_abc12/ferry-provenance.json', data: provenance }]);
}

function infoZip(): Buffer {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-seed-'));
  try {
    mkdirSync(join(dir, 'study', 'notes'), { recursive: true });
    writeFileSync(join(dir, 'study', 'data.csv'), 'x,y\n1,2\n3,4\n');
    writeFileSync(join(dir, 'study', 'notes', 'ünïcode.txt'), 'Grüße\n');
    execFileSync('zip', ['-q', '-r', '-X', 'out.zip', 'study'], { cwd: dir });
    return readFileSync(join(dir, 'out.zip'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function seeds(): Promise<Record<string, Buffer>> {
  const plain = await yazlZip([
    { name: 'project/', folder: true },
    { name: 'project/readme.txt', data: 'hello, hello, hello, hello\n' },
    { name: 'project/raw/values.bin', data: '\u0001\u0002\u0003', compress: false },
    { name: 'project/streamed.txt', data: 'written with a data descriptor\n', stream: true },
  ]);
  const bag = await yazlZip(bagItems({ 'a.txt': 'alpha\n', 'sub/b.txt': 'beta beta beta\n' }));
  return {
    'plain-yazl.zip': plain,
    'plain-infozip.zip': infoZip(),
    'plain-zip64-entry.zip': await yazlZip([{ name: 'big/one.txt', data: 'zip64 fields\n', zip64: true }]),
    'plain-empty.zip': await yazlZip([]),
    'bag-root.zip': bag,
    'bag-in-folder.zip': await yazlZip(bagItems({ 'x.csv': 'a,b\n1,2\n' }, 'mybag/')),
    'bag-ferry-shaped.zip': await ferryShapedBag(),
    'zip64-end-record.zip': rawZip([{ name: 'r/a.txt', data: Buffer.from('zip64 end') }], { zip64: {} }),
    'zip64-extra-sizes.zip': rawZip([{ name: 'r/b.txt', data: Buffer.from('sizes in zip64'), method: 0, declaredSize: 0xffffffff, declaredCompressedSize: 0xffffffff, centralExtra: zip64Extra(14, 14) }]),
    // malformed: each refused for its own reason
    'bad-truncated.zip': plain.subarray(0, Math.floor(plain.length * 0.6)),
    'bad-zip-slip.zip': rawZip([{ name: 'top/../../evil.txt', data: Buffer.from('x') }]),
    'bad-symlink.zip': rawZip([{ name: 'top/link', data: Buffer.from('/etc/passwd'), mode: 0o120777 }]),
    'bad-encrypted.zip': rawZip([{ name: 'top/secret.txt', data: Buffer.from('0123456789abcdef'), flags: 0x1, method: 0, declaredCompressedSize: 16 }]),
    'bad-crc.zip': rawZip([{ name: 'top/c.txt', data: Buffer.from('crc will not match'), crc: 0x12345678 }]),
    'bad-shared-data.zip': rawZip([{ name: 'top/a.txt', data: Buffer.from('same') }, { name: 'top/b.txt', data: Buffer.from('same'), local: false, localOffset: 0 }]),
    'bad-bag-lying-manifest.zip': await yazlZip(bagItems({ 'a.txt': 'alpha\n' }, '', { path: 'a.txt', hash: '0'.repeat(64) })),
    'bad-case-twins.zip': rawZip([{ name: 'top/Readme.md', data: Buffer.from('1') }, { name: 'top/README.md', data: Buffer.from('2') }]),
  };
}

const made = await seeds();
for (const target of Object.keys(FUZZ_TARGETS)) {
  const dir = join(here, 'corpus', target);
  mkdirSync(dir, { recursive: true });
  for (const [name, bytes] of Object.entries(made)) writeFileSync(join(dir, name), bytes);
}
console.log(`wrote ${Object.keys(made).length} seeds (${Object.values(made).reduce((sum, b) => sum + b.length, 0)} bytes) for ${Object.keys(FUZZ_TARGETS).join(', ')}`);
