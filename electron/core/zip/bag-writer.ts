import type { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { createHash } from 'node:crypto';
import yazl from 'yazl';
import type { Entry, ReadResult } from '../target.js';
import { CancelledError } from '../errors.js';
import { HashingPassThrough, MultiHash } from '../hashing.js';
import { formatDate } from '../time.js';
import { BAGIT_TXT, WRITTEN_ALGORITHMS, baggingDate, manifestLine } from './bagit-format.js';
import { chooseCompression, isIncompressibleByName, sampleCompresses, SAMPLE_BYTES } from './compression-choice.js';
import { makeEntryPumpLinear } from './yazl-linear-pump.js';
import { useNativeCrc32InYazl } from './native-crc32.js';

// A download is a BagIt bag (RFC 8493) inside a ZIP, streamed: entries are pulled from the
// target one at a time, hashed while yazl reads them, and the manifests (which need every
// hash) are written last. Memory grows with the number of files, never with their size.

export interface BagWriterOptions {
  targetName: string;
  resourceId: string;
  /** the bag's top folder in the ZIP, see bagNameFor */
  bagName: string;
  signal?: AbortSignal;
  /** the download time recorded in bag-info.txt and the provenance file */
  now?: Date;
  /**
   * zlib level (0-9) for files worth compressing. Default 3: on a mixed 446 MB folder it
   * costs half the CPU of level 6 (zip's default) for a ZIP about 1% larger.
   */
  compressionLevel?: number;
}

export type FixityStatus = 'ok' | 'mismatch' | 'no-source-hash';

export interface ProvenanceFile {
  /** path inside the bag's data/ folder (= the Entry's path) */
  path: string;
  size: number;
  /** present only when the name had to change in the bag (see bagPathOf) */
  source_path?: string;
  /** present only when the source announced a size that differs from the bytes read */
  source_size?: number;
  source_hashes: Record<string, string>;
  computed_hashes: Record<string, string>;
  fixity: FixityStatus;
}

export interface Provenance {
  ferry_provenance_version: 1;
  source_target: string;
  resource_id: string;
  resource_title: string;
  downloaded_at: string;
  files: ProvenanceFile[];
}

export const PROVENANCE_FILE = 'ferry-provenance.json';

/** `<t>_download_<id-safe>`, the bag folder and (with `.zip`) the download's file name. */
export function bagNameFor(targetName: string, resourceId: string): string {
  const safe = (text: string) => text.replace(/[^A-Za-z0-9._-]/g, '_');
  return `${safe(targetName)}_download_${safe(resourceId)}`;
}

const DEFAULT_COMPRESSION_LEVEL = 3;
const FILE_MODE = 0o100644;
const FOLDER_MODE = 0o040755;
/** Files up to this size are added whole (see addSmallFile). */
const SMALL_FILE_BYTES = 1024 * 1024;
/** Small files queued in yazl (read, not yet written out) at most, in bytes. */
const SMALL_QUEUE_BYTES = 8 * 1024 * 1024;
const YAZL_FILE_DATA_DONE = 3; // yazl's Entry.FILE_DATA_DONE
/** Source hashes Ferry can also compute in the same pass, to check them. */
const EXTRA_CHECKABLE = ['sha1', 'sha512'];

/** The ZIP bytes of a bag holding `read`; pipe it to the response. Errors destroy it. */
export function writeBagZip(read: ReadResult, options: BagWriterOptions): Readable {
  useNativeCrc32InYazl();
  const zip = new yazl.ZipFile();
  makeEntryPumpLinear(zip);
  const output = zip.outputStream as Readable;
  const now = options.now ?? new Date();
  const bagRoot = options.bagName;
  let current: Readable | null = null;
  let failed = false;
  let completed = false;

  const fail = (error: Error) => {
    if (failed || completed) return;
    failed = true;
    current?.destroy(error);
    output.destroy(error);
  };
  const onAbort = () => fail(abortReason(options.signal!));
  zip.on('error', (error: Error) => fail(error));
  // The consumer went away (client disconnected): stop reading the source.
  output.on('close', () => {
    if (!completed) fail(new Error('The ZIP output was closed before the bag was complete.'));
  });
  options.signal?.addEventListener('abort', onAbort, { once: true });

  const run = async () => {
    if (options.signal?.aborted) throw abortReason(options.signal);
    zip.addBuffer(Buffer.from(BAGIT_TXT), `${bagRoot}/bagit.txt`, { mtime: now, mode: FILE_MODE });
    const files: ProvenanceFile[] = [];
    let payloadBytes = 0;

    for await (const entry of read.entries) {
      if (failed) return;
      const name = `${bagRoot}/data/${bagPathOf(entry.path)}`;
      if (entry.kind === 'folder') {
        zip.addEmptyDirectory(name, { mtime: entry.mtime ?? now, mode: FOLDER_MODE });
        continue;
      }
      const record = await addFile(entry, name);
      if (failed) return;
      files.push(record);
      payloadBytes += record.size;
    }
    if (failed) return;

    const tagFiles: [string, Buffer][] = [];
    const addTagFile = (name: string, text: string) => {
      const bytes = Buffer.from(text, 'utf8');
      tagFiles.push([name, bytes]);
      zip.addBuffer(bytes, `${bagRoot}/${name}`, { mtime: now, mode: FILE_MODE });
    };
    tagFiles.push(['bagit.txt', Buffer.from(BAGIT_TXT)]);
    addTagFile(
      'bag-info.txt',
      [
        `Bagging-Date: ${baggingDate(now)}`,
        `Payload-Oxum: ${payloadBytes}.${files.length}`,
        'Bag-Software-Agent: Ferry',
        `External-Identifier: ${oneLine(`${options.targetName}:${options.resourceId}`)}`,
        '',
      ].join('\n'),
    );
    for (const algorithm of WRITTEN_ALGORITHMS) {
      addTagFile(`manifest-${algorithm}.txt`, files.map((file) => manifestLine(file.computed_hashes[algorithm] ?? '', `data/${file.path}`)).join(''));
    }
    const provenance: Provenance = {
      ferry_provenance_version: 1,
      source_target: options.targetName,
      resource_id: options.resourceId,
      resource_title: read.title,
      downloaded_at: formatDate(now),
      files,
    };
    addTagFile(PROVENANCE_FILE, `${JSON.stringify(provenance, null, 2)}\n`);
    for (const algorithm of WRITTEN_ALGORITHMS) {
      const lines = tagFiles.map(([name, bytes]) => manifestLine(createHash(algorithm).update(bytes).digest('hex'), name));
      zip.addBuffer(Buffer.from(lines.join(''), 'utf8'), `${bagRoot}/tagmanifest-${algorithm}.txt`, { mtime: now, mode: FILE_MODE });
    }
    // From here the output closing is the normal end, not a consumer going away.
    completed = true;
    zip.end();
  };

  /** Adds one file and resolves once yazl has read all of it (so only one source is open). */
  const addFile = async (entry: Entry, name: string): Promise<ProvenanceFile> => {
    const source = await entry.open();
    current = source;
    if (failed) {
      source.destroy();
      throw new CancelledError();
    }
    const level = options.compressionLevel ?? DEFAULT_COMPRESSION_LEVEL;
    const algorithms = [...WRITTEN_ALGORITHMS, ...EXTRA_CHECKABLE.filter((a) => entry.hashes[a])];
    if (entry.size !== null && entry.size <= SMALL_FILE_BYTES) return addSmallFile(entry, name, source, algorithms, level);
    const { compress, stream } = level === 0 ? { compress: false, stream: source } : await chooseCompression(entry.path, source);
    const hasher = new HashingPassThrough(algorithms);
    current = hasher;
    stream.on('error', (error) => hasher.destroy(error));
    hasher.on('close', () => {
      if (!hasher.readableEnded) stream.destroy();
    });
    stream.pipe(hasher);
    const consumed = finished(hasher);
    zip.addReadStreamLazy(name, { mtime: entry.mtime ?? now, mode: FILE_MODE, compress, compressionLevel: compress ? level : 0 }, (callback) =>
      callback(null, hasher),
    );
    await consumed;
    current = null;
    return provenanceOf(entry, hasher.bytes, hasher.digests!);
  };

  /**
   * A small file whole: read into memory (a local read gives it in one chunk), hashed right
   * here, and handed to yazl as a buffer, which deflates it on the thread pool while the
   * next files are read: no stream pipeline per file, and small files compress in parallel.
   * STORE or DEFLATE is chosen exactly as for large files. yazl queues such entries without
   * regard to the consumer, so adding waits while what is queued, or sits unread in the
   * output, is more than SMALL_QUEUE_BYTES (memory stays bounded for a slow client).
   */
  const addSmallFile = async (entry: Entry, name: string, source: Readable, algorithms: string[], level: number): Promise<ProvenanceFile> => {
    const chunks: Buffer[] = [];
    for await (const chunk of source) chunks.push(chunk as Buffer);
    current = null;
    const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
    const multi = new MultiHash(algorithms);
    multi.update(bytes);
    const computed = multi.digest();
    const compress = level > 0 && !isIncompressibleByName(entry.path) && sampleCompresses(bytes.subarray(0, SAMPLE_BYTES));
    while (!failed && queuedSmallBytes() + unreadOutputBytes() > SMALL_QUEUE_BYTES) await new Promise((resolve) => setTimeout(resolve, 2));
    if (failed) throw new CancelledError();
    zip.addBuffer(bytes, name, { mtime: entry.mtime ?? now, mode: FILE_MODE, compress, compressionLevel: compress ? level : 0 });
    const added = lastEntry(zip);
    if (added) {
      smallQueue.push({ entry: added, bytes: bytes.length });
      smallQueueBytes += bytes.length;
    }
    return provenanceOf(entry, bytes.length, computed);
  };
  /** yazl's output is a PassThrough: what it holds unread sits in both of its buffers */
  const unreadOutputBytes = () => output.readableLength + ((output as Readable & { writableLength?: number }).writableLength ?? 0);
  const smallQueue: ({ entry: { state: number }; bytes: number } | undefined)[] = [];
  let smallQueueBytes = 0;
  let smallQueueHead = 0;
  /** bytes of small files yazl holds but has not written yet (it writes entries in order) */
  const queuedSmallBytes = () => {
    for (let head = smallQueue[smallQueueHead]; head && head.entry.state >= YAZL_FILE_DATA_DONE; head = smallQueue[smallQueueHead]) {
      smallQueueBytes -= head.bytes;
      smallQueue[smallQueueHead++] = undefined;
    }
    return smallQueueBytes;
  };

  run().then(
    () => {
      options.signal?.removeEventListener('abort', onAbort);
    },
    (error: unknown) => {
      options.signal?.removeEventListener('abort', onAbort);
      fail(error instanceof Error ? error : new Error(String(error)));
    },
  );
  return output;
}

/** What the provenance file records of one file: the source's word against the bytes read. */
function provenanceOf(entry: Entry, bytesRead: number, computed: Record<string, string>): ProvenanceFile {
  const file: ProvenanceFile = {
    path: bagPathOf(entry.path),
    size: bytesRead,
    source_hashes: { ...entry.hashes },
    computed_hashes: computed,
    fixity: fixityOf(entry.hashes, computed),
  };
  if (entry.size !== null && entry.size !== bytesRead) file.source_size = entry.size;
  if (file.path !== entry.path) file.source_path = entry.path;
  return file;
}

/** Compares the algorithms both sides have; none in common means nothing to check. */
function fixityOf(source: Record<string, string>, computed: Record<string, string>): FixityStatus {
  const common = Object.keys(source).filter((algorithm) => computed[algorithm] !== undefined);
  if (common.length === 0) return 'no-source-hash';
  return common.every((algorithm) => source[algorithm]?.toLowerCase() === computed[algorithm]) ? 'ok' : 'mismatch';
}

/**
 * A backslash is an ordinary character in a POSIX or remote name, but ZIP readers (and
 * yazl) take it for a folder separator; it becomes "_" so the ZIP and manifests agree.
 */
/** The entry yazl just queued (its internal list, see yazl-linear-pump.ts); null if yazl's internals differ. */
function lastEntry(zip: yazl.ZipFile): { state: number } | null {
  const entries = (zip as unknown as { entries?: { length: number; [index: number]: { state?: unknown } | undefined } }).entries;
  const last = entries && entries.length > 0 ? entries[entries.length - 1] : undefined;
  return last && typeof last.state === 'number' ? (last as { state: number }) : null;
}

function bagPathOf(entryPath: string): string {
  return entryPath.replace(/\\/g, '_');
}

function oneLine(text: string): string {
  return text.replace(/[\r\n]+/g, ' ');
}

function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error && signal.reason.name !== 'AbortError' ? signal.reason : new CancelledError();
}
