// Building blocks of the load test: the workspace it serves, the upload body it sends (one
// template ZIP whose folder name is patched per request, so every upload writes new files),
// a memory sampler for the server process, and the checks run on what came back.
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');

/** Text that deflates (like a CSV) followed by random bytes (like an image): both store paths of the bag writer. */
function mixedFiles(bytes: number, seed: string): Record<string, Buffer> {
  const rows: string[] = ['id,site,value,note'];
  let size = 0;
  for (let i = 0; size < bytes / 2; i++) {
    const row = `${i},${seed}-${i % 17},${(i * 7919) % 1000}.${i % 10},measured at station ${i % 31}`;
    rows.push(row);
    size += row.length + 1;
  }
  return {
    'table.csv': Buffer.from(`${rows.join('\n')}\n`),
    'raw/image.bin': randomBytes(Math.floor(bytes / 2)),
    'notes/readme.txt': Buffer.from(`Folder ${seed}: part of the load test.\n`),
  };
}

export interface LoadWorkspace {
  /** folder title → (relative path → sha256) */
  downloadFolders: Map<string, Map<string, string>>;
  /** titles of the upload containers, one per upload connection */
  uploadContainers: string[];
}

export async function makeLoadWorkspace(workspace: string, options: { downloadFolders: number; folderBytes: number; uploadContainers: number }): Promise<LoadWorkspace> {
  const downloadFolders = new Map<string, Map<string, string>>();
  for (let i = 0; i < options.downloadFolders; i++) {
    const title = `download-${i}`;
    const hashes = new Map<string, string>();
    for (const [relative, bytes] of Object.entries(mixedFiles(options.folderBytes, title))) {
      const file = path.join(workspace, title, relative);
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, bytes);
      hashes.set(relative, sha256(bytes));
    }
    downloadFolders.set(title, hashes);
  }
  const uploadContainers: string[] = [];
  for (let i = 0; i < options.uploadContainers; i++) {
    const title = `inbox-${i}`;
    await mkdir(path.join(workspace, title), { recursive: true });
    await writeFile(path.join(workspace, title, 'README.txt'), `Uploads of connection ${i} land here.\n`);
    uploadContainers.push(title);
  }
  return { downloadFolders, uploadContainers };
}

/** The placeholder in the template's folder name; same length as every name patched in. */
const PLACEHOLDER = 'batch-XXXXXXXXXX';

export interface UploadTemplate {
  zip: Buffer;
  /** relative path below the batch folder → sha256 */
  files: Map<string, string>;
  /** the batch folder name for upload number n of connection c */
  batchName(connection: number, n: number): string;
  /** the ZIP with its folder renamed (names are not covered by the CRC, so a byte patch is a valid ZIP) */
  zipFor(batch: string): Buffer;
}

export async function makeUploadTemplate(dir: string, bytes: number): Promise<UploadTemplate> {
  const files = new Map<string, string>();
  for (const [relative, content] of Object.entries(mixedFiles(bytes, 'upload'))) {
    const file = path.join(dir, PLACEHOLDER, relative);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, content);
    files.set(relative, sha256(content));
  }
  const zipPath = path.join(dir, 'template.zip');
  await run('zip', ['-q', '-r', zipPath, PLACEHOLDER], { cwd: dir });
  const zip = await readFile(zipPath);
  const needle = Buffer.from(PLACEHOLDER);
  const offsets: number[] = [];
  for (let at = zip.indexOf(needle); at !== -1; at = zip.indexOf(needle, at + 1)) offsets.push(at);
  // a local header and a central record per entry (folders included)
  if (offsets.length < 2 * files.size) throw new Error(`template ZIP names found ${offsets.length} times`);
  return {
    zip,
    files,
    batchName: (connection, n) => `batch-${String(connection).padStart(2, '0')}${String(n).padStart(8, '0')}`.slice(0, PLACEHOLDER.length),
    zipFor(batch) {
      if (batch.length !== PLACEHOLDER.length) throw new Error(`batch name ${batch} must be ${PLACEHOLDER.length} characters`);
      const copy = Buffer.from(zip);
      const name = Buffer.from(batch);
      for (const at of offsets) name.copy(copy, at);
      return copy;
    },
  };
}

export const BOUNDARY = 'ferry-load-boundary-7d1f0c';

/** A multipart/form-data body with the ZIP as `service-file`, as a browser or curl sends it. */
export function multipartBody(zip: Buffer): Buffer {
  return Buffer.concat([
    Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="service-file"; filename="upload.zip"\r\nContent-Type: application/zip\r\n\r\n`),
    zip,
    Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
  ]);
}

/** Samples a process's resident memory (VmRSS) and peak (VmHWM) from /proc, in MiB. */
export class MemorySampler {
  samples = 0;
  peakRssMiB = 0;
  /** RSS in MiB, one value every `timelineEveryMs` */
  readonly timeline: number[] = [];
  private lastTimelineAt = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly pid: number,
    private readonly everyMs = 200,
    private readonly timelineEveryMs = 5000,
  ) {}

  async read(): Promise<{ rssMiB: number; hwmMiB: number } | null> {
    try {
      const status = await readFile(`/proc/${this.pid}/status`, 'utf8');
      const kib = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
      return { rssMiB: kib('VmRSS') / 1024, hwmMiB: kib('VmHWM') / 1024 };
    } catch {
      return null; // no /proc (not Linux) or the process is gone
    }
  }

  start(): void {
    this.timer = setInterval(() => {
      void this.read().then((sample) => {
        if (!sample) return;
        this.samples++;
        if (Date.now() - this.lastTimelineAt >= this.timelineEveryMs) {
          this.lastTimelineAt = Date.now();
          this.timeline.push(Math.round(sample.rssMiB));
        }
        this.peakRssMiB = Math.max(this.peakRssMiB, sample.rssMiB, sample.hwmMiB);
      });
    }, this.everyMs);
  }

  async stop(): Promise<number> {
    if (this.timer) clearInterval(this.timer);
    const last = await this.read();
    if (last) this.peakRssMiB = Math.max(this.peakRssMiB, last.rssMiB, last.hwmMiB);
    return this.peakRssMiB;
  }
}

/**
 * Checks one downloaded bag ZIP: `unzip -t` passes, every manifest-sha256 line matches the
 * extracted bytes, and every payload file matches the source folder's file. Returns the
 * number of payload files checked.
 */
export async function checkDownloadedBag(zipPath: string, extractDir: string, title: string, source: Map<string, string>): Promise<number> {
  await run('unzip', ['-tq', zipPath]);
  await run('unzip', ['-q', zipPath, '-d', extractDir]);
  const [bagName] = await readdir(extractDir);
  if (!bagName) throw new Error('empty download');
  const bag = path.join(extractDir, bagName);
  const manifest = await readFile(path.join(bag, 'manifest-sha256.txt'), 'utf8');
  const listed = new Map<string, string>();
  for (const line of manifest.split('\n').filter(Boolean)) {
    const match = /^([0-9a-f]{64})\s+(.+)$/.exec(line);
    if (!match) throw new Error(`manifest line not understood: ${line}`);
    listed.set(match[2]!, match[1]!);
  }
  for (const [relative, expected] of listed) {
    const actual = sha256(await readFile(path.join(bag, relative)));
    if (actual !== expected) throw new Error(`${bagName}/${relative}: bytes do not match manifest-sha256.txt`);
  }
  for (const [relative, expected] of source) {
    const inBag = `data/${title}/${relative}`;
    if (listed.get(inBag) !== expected) throw new Error(`${bagName}: ${inBag} is ${listed.get(inBag) ?? 'missing'}, the source is ${expected}`);
  }
  if (listed.size !== source.size) throw new Error(`${bagName}: ${listed.size} payload files, the source has ${source.size}`);
  return listed.size;
}
