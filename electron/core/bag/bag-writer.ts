import { Readable } from 'node:stream';
import type { DirectFile, Entry, ReadResult, RememberedDigests } from '../target.js';
import { CancelledError, conflict } from '../errors.js';
import { formatDate } from '../time.js';
import { bagVerification, fixityOf, PROVENANCE_FILE, serializeProvenance, type ProvenanceFile, type ProvenanceLog } from '../provenance/format.js';
import { ROCRATE_FILE, roCrateMetadata } from '../provenance/ro-crate.js';
import { BAGIT_TXT, WRITTEN_ALGORITHMS, baggingDate, manifestLine } from './bagit-format.js';
import { bagWorkers, type BatchFile, type BatchResult, type LargeFileJob, type StreamRole } from './bag-workers.js';
import {
  centralDirectory,
  dataDescriptor,
  dosDateTime,
  FLAG_DATA_DESCRIPTOR,
  FLAG_UTF8,
  METHOD_DEFLATE,
  METHOD_STORE,
  streamedLocalHeader,
  zipEntryName,
  type CentralRecord,
} from '../zip/zip-records.js';
import { isIncompressibleByName, isTextByName, SAMPLE_BYTES, sampleCompressesOffThread } from '../zip/compression-choice.js';
import { ZipOutput, type LendingSink } from '../zip/zip-output.js';
import { askDirectFiles, openDirectSource, streamSource, type LargeFileSource } from './large-file-source.js';

// A download is a BagIt bag (RFC 8493) inside a ZIP, streamed: entries are pulled from the
// target in order, hashed and compressed on worker threads while the bytes go out, and the
// manifests (which need every hash) are written last. Memory grows with the number of
// files, never with their size.

export interface BagWriterOptions {
  targetName: string;
  resourceId: string;
  /** the bag's top folder in the ZIP, see bagNameFor */
  bagName: string;
  signal?: AbortSignal;
  /**
   * The stream the ZIP is piped straight into, and nothing else reads it (an HTTP
   * response): a large local file's stored bytes then go out from the memory they were read
   * into, reused once the sink has sent them, instead of a new buffer per chunk.
   */
  lendTo?: LendingSink;
  /** the download time recorded in bag-info.txt and the provenance file */
  now?: Date;
  /**
   * zlib level (0-9) for files worth compressing. Default 2: on the benchmark's CSV text it
   * costs ~10% less CPU than level 3 for output 0.7% larger, and half the CPU of level 6
   * (zip's default) for output ~10% larger.
   */
  compressionLevel?: number;
  /** what the source says of the resource beyond its title, for the RO-Crate and provenance */
  describe?: BagDescription;
}

export interface BagDescription {
  /** a persistent identifier or landing URL (a DOI URL where there is one) */
  identifier?: string;
  description?: string;
}

export { PROVENANCE_FILE };

/** A bag's record of one file: the common provenance file record (provenance/format.ts). */
export type { ProvenanceFile } from '../provenance/format.js';

/** `<t>_download_<id-safe>`, the bag folder and (with `.zip`) the download's file name. */
export function bagNameFor(targetName: string, resourceId: string): string {
  const safe = (text: string) => text.replace(/[^A-Za-z0-9._-]/g, '_');
  return `${safe(targetName)}_download_${safe(resourceId)}`;
}

const DEFAULT_COMPRESSION_LEVEL = 2;
const FILE_MODE = 0o100644;
const FOLDER_MODE = 0o040755;
/** Files up to this size are read whole and handled in batches (see queueWhole). */
const SMALL_FILE_BYTES = 1024 * 1024;
/** A batch goes to a worker once it holds this many bytes or files. */
const BATCH_BYTES = 512 * 1024;
const BATCH_FILES = 64;
/**
 * Bytes held for small files and not yet written out, at most (a paused client keeps memory
 * bounded): a batch counts its files' sizes until written; one whose files the workers read
 * themselves counts them only until a worker returns its records, then the records' bytes
 * (deflated text is ~1/3 of its size). While a large file streams, the batches after it are
 * made meanwhile and wait here for their turn. Downloads at once share a process-wide amount:
 * one download may run 16 MiB ahead, fifty get about 1.3 MiB each (the load test's memory).
 */
const IN_FLIGHT_BYTES = 16 * 1024 * 1024;
const IN_FLIGHT_BYTES_ALL = 64 * 1024 * 1024;
const IN_FLIGHT_BYTES_LEAST = 2 * BATCH_BYTES;
/** bag ZIPs being written now, in this process */
let activeBags = 0;
const inFlightAllowance = () => Math.max(IN_FLIGHT_BYTES_LEAST, Math.min(IN_FLIGHT_BYTES, Math.floor(IN_FLIGHT_BYTES_ALL / Math.max(1, activeBags))));
/** Large files queued in the output chain ahead of the producer, at most (each is only an Entry until its turn). */
const LARGE_AHEAD = 16;
/** Source hashes Ferry can also compute in the same pass, to check them. */
const EXTRA_CHECKABLE = ['sha1', 'sha512'];

/** A file or folder read whole, on its way to a worker batch. */
interface WholeItem {
  name: Buffer;
  file: BatchFile;
  mode: number;
  mtime: Date;
  onResult?: (result: BatchResult) => void;
  /** set when a worker reads the file itself */
  direct?: DirectFile;
}

/** A worker's failure to read a file, as the error its target's open() would have thrown. */
function readFailure(item: WholeItem, error: { code: string | null; message: string }): Error {
  // without a code (not a file system error) it is still reported as one: the message may name an absolute path
  const cause = Object.assign(new Error(error.message), { code: error.code ?? 'EIO' });
  const mapped = item.direct ? item.direct.toError(cause) : cause;
  return mapped instanceof Error ? mapped : cause;
}

/**
 * The ZIP bytes of a bag holding `read`; pipe it to the response. Errors destroy it.
 *
 * Small files are read whole and sent to worker threads in batches; each comes back as its
 * finished ZIP record (hashed, CRC'd, stored or deflated), written in entry order. Large
 * files stream through the workers (see bag-workers.ts) while their bytes go out. The
 * manifests hold the digests of exactly the bytes written.
 */
export function writeBagZip(read: ReadResult, options: BagWriterOptions): Readable {
  return writeZip(read, options, true);
}

export type PlainZipOptions = Pick<BagWriterOptions, 'signal' | 'now' | 'compressionLevel'>;

/**
 * The same ZIP records without the bag around them: `read`'s entries at the archive's root,
 * by their paths, stored or deflated where it pays, each with its CRC-32 (a flat record's
 * packed folder, remote/packed-folders.ts).
 */
export function writePlainZip(read: ReadResult, options: PlainZipOptions): Readable {
  return writeZip(read, { ...options, targetName: '', resourceId: '', bagName: '' }, false);
}

function writeZip(read: ReadResult, options: BagWriterOptions, bag: boolean): Readable {
  const pool = bagWorkers();
  activeBags++;
  const output = new ZipOutput();
  if (options.lendTo) output.lendTo(options.lendTo);
  const now = options.now ?? new Date();
  const bagRoot = options.bagName;
  const payloadRoot = bag ? `${bagRoot}/data/` : '';
  const bagPaths = new BagPaths();
  const level = options.compressionLevel ?? DEFAULT_COMPRESSION_LEVEL;
  const records: CentralRecord[] = [];
  /** the small file being read here (a target the workers cannot read from) and the large file streaming */
  let current: Readable | null = null;
  let currentLarge: LargeFileSource | null = null;
  let job: LargeFileJob | null = null;
  let failed = false;
  let completed = false;

  const fail = (error: Error) => {
    if (failed || completed) return;
    failed = true;
    current?.destroy(error);
    currentLarge?.close();
    job?.abort();
    output.destroy(error);
    wakeProducer();
  };
  const onAbort = () => fail(abortReason(options.signal!));
  // The consumer went away (client disconnected): stop reading the source.
  output.on('close', () => {
    if (!completed) fail(new Error('The ZIP output was closed before the bag was complete.'));
  });
  options.signal?.addEventListener('abort', onAbort, { once: true });

  // ---- whole files in batches, written in order by a chain of batch results
  let batch: WholeItem[] = [];
  let batchBytes = 0;
  let inFlight = 0;
  let chain: Promise<void> = Promise.resolve();
  let producerWaiting: (() => void) | null = null;
  function wakeProducer() {
    const wake = producerWaiting;
    producerWaiting = null;
    wake?.();
  }

  const dispatch = () => {
    if (batch.length === 0) return;
    const items = batch;
    const bytes = batchBytes;
    batch = [];
    batchBytes = 0;
    inFlight += bytes;
    const result = pool.batch(items.map((item) => item.file));
    result.catch(() => undefined); // seen by the chain
    // once made, a batch of files the workers read holds its records' bytes, no more its
    // files' (bytes read here stay held by its items until written; see IN_FLIGHT_BYTES)
    let held = bytes;
    if (items.every((item) => item.file.bytes.length === 0)) result.then(
      ({ records: made }) => {
        inFlight += made.length - held;
        held = made.length;
        wakeProducer();
      },
      () => undefined,
    );
    chain = chain.then(async () => {
      if (failed) return;
      const { records: written, results } = await result;
      if (failed) return;
      let offset = output.cursor;
      const unread = results.findIndex((r) => r.error);
      if (unread >= 0) throw readFailure(items[unread]!, results[unread]!.error!);
      results.forEach((r, i) => {
        const item = items[i]!;
        const { dosTime, dosDate } = item.file;
        records.push({ name: item.name, flags: FLAG_UTF8, method: r.method, dosTime, dosDate, crc: r.crc, compressedSize: r.compressedSize, size: r.size, mode: item.mode, unixTime: unixTime(item.mtime), offset });
        offset += r.recordBytes;
        item.onResult?.(r);
      });
      output.write(written);
      // counted until the reader has taken them: a paused client stops the producer
      await output.drained();
      inFlight -= held;
      wakeProducer();
    }).catch((error: unknown) => fail(asError(error)));
  };

  /** Queues a file or folder read whole; waits while too much is read and not yet written. */
  const queueWhole = async (item: WholeItem) => {
    batch.push(item);
    batchBytes += item.file.path ? item.file.path.expected : item.file.bytes.length;
    if (batchBytes >= BATCH_BYTES || batch.length >= BATCH_FILES) dispatch();
    while (!failed && inFlight + batchBytes > inFlightAllowance()) await new Promise<void>((resolve) => (producerWaiting = resolve));
    if (failed) throw new CancelledError();
  };

  /**
   * Queues a large file in the output chain, after the small files before it. It is opened
   * and streamed when its turn comes; meanwhile the producer goes on, so the batches of the
   * small files after it are made by the workers while it streams, and written after it.
   */
  let largeAhead = 0;
  const queueLarge = async (entry: Entry, path: string, mtime: Date, algorithms: string[], known: RememberedDigests | null, onRecord: (record: ProvenanceFile) => void) => {
    dispatch();
    largeAhead++;
    chain = chain
      .then(async () => {
        if (failed) return;
        onRecord(await streamLarge(entry, path, mtime, algorithms, known));
      })
      .catch((error: unknown) => fail(asError(error)))
      .finally(() => {
        largeAhead--;
        wakeProducer();
      });
    while (!failed && largeAhead > LARGE_AHEAD) await new Promise<void>((resolve) => (producerWaiting = resolve));
    if (failed) throw new CancelledError();
  };

  /** Everything queued is written out. */
  const flushWhole = async () => {
    dispatch();
    await chain;
    if (failed) throw new CancelledError();
  };

  const wholeItem = (path: string, bytes: Buffer, mtime: Date, algorithms: readonly string[], decide: boolean, onResult?: (result: BatchResult) => void): WholeItem => ({
    name: zipEntryName(path, false),
    file: { name: path, folder: false, bytes, ...dosDateTime(mtime), algorithms, level, decide },
    mode: FILE_MODE,
    mtime,
    onResult,
  });

  // A target that lets the workers open its files (the local one) is asked to: no bytes of
  // a small file then pass through this thread.
  const directFiles = askDirectFiles(read);

  const run = async () => {
    if (options.signal?.aborted) throw abortReason(options.signal);
    const tagFiles: { name: string; hashes?: Record<string, string> }[] = [];
    const addTagFile = async (name: string, bytes: Buffer) => {
      const tag: { name: string; hashes?: Record<string, string> } = { name };
      tagFiles.push(tag);
      await queueWhole(wholeItem(`${bagRoot}/${name}`, bytes, now, WRITTEN_ALGORITHMS, false, (result) => (tag.hashes = result.hashes ?? {})));
    };
    if (bag) await addTagFile('bagit.txt', Buffer.from(BAGIT_TXT));
    const files: ProvenanceFile[] = [];
    const bagFolders: string[] = [];
    let payloadBytes = 0;

    for await (const entry of read.entries) {
      if (failed) return;
      const path = `${payloadRoot}${bagPaths.claim(entry.path, entry.kind)}`;
      const mtime = entry.mtime ?? now;
      if (entry.kind === 'folder') {
        bagFolders.push(path.slice(payloadRoot.length));
        await queueWhole({ name: zipEntryName(path, true), file: { name: `${path}/`, folder: true, bytes: EMPTY, ...dosDateTime(mtime), algorithms: [], level: 0, decide: false }, mode: FOLDER_MODE, mtime });
        continue;
      }
      const algorithms = [...WRITTEN_ALGORITHMS, ...EXTRA_CHECKABLE.filter((a) => entry.hashes[a])];
      const known = rememberedFor(entry, algorithms);
      if (entry.size !== null && entry.size <= SMALL_FILE_BYTES) {
        const direct = directFiles ? entry.direct : undefined;
        const bytes = direct ? EMPTY : await readWhole(entry);
        const compressible = level > 0 && !isIncompressibleByName(entry.path);
        // text by its name is deflated unsampled (kept only if smaller, see bag-workers.ts)
        const item = wholeItem(path, bytes, mtime, known ? [] : algorithms, !isTextByName(entry.path), (result) => {
          const reused = known !== null && result.crc === known.crc32;
          files.push(provenanceOf(entry, path.slice(payloadRoot.length), result.size, reused ? pick(known.hashes, algorithms) : (result.hashes ?? {}), reused));
          // the digests stand for the version listed only if as many bytes were read
          if (!reused && result.size === entry.size) entry.remember?.({ hashes: result.hashes ?? {}, crc32: result.crc });
          payloadBytes += result.size;
        });
        if (known) item.file.recheck = { crc32: known.crc32, algorithms };
        if (!compressible) item.file.level = 0;
        if (direct) {
          item.file.path = { absolutePath: direct.absolutePath, expected: direct.size };
          item.direct = direct;
        }
        await queueWhole(item);
      } else {
        await queueLarge(entry, path, mtime, algorithms, known, (record) => {
          files.push(record);
          payloadBytes += record.size ?? 0;
        });
        // A target whose files the workers open can have the next file open while this one
        // streams; another target's entries are taken one at a time, as they always were.
        if (!directFiles) await flushWhole();
      }
    }
    if (failed) return;
    // the payload's sizes and digests are all known once every payload record is written
    await flushWhole();
    if (bag) await writeTagFiles(tagFiles, addTagFile, files, bagFolders, payloadBytes);
    const directory = centralDirectory(records, output.cursor);
    // From here the output closing is the normal end, not a consumer going away.
    completed = true;
    output.write(directory);
    output.push(null);
  };

  /** bag-info, the manifests, the provenance and RO-Crate files, then the tag manifests, written last. */
  const writeTagFiles = async (
    tagFiles: { name: string; hashes?: Record<string, string> }[],
    addTagFile: (name: string, bytes: Buffer) => Promise<void>,
    files: ProvenanceFile[],
    bagFolders: string[],
    payloadBytes: number,
  ) => {
    await addTagFile(
      'bag-info.txt',
      Buffer.from(
        [
          `Bagging-Date: ${baggingDate(now)}`,
          `Payload-Oxum: ${payloadBytes}.${files.length}`,
          'Bag-Software-Agent: Ferry',
          `External-Identifier: ${oneLine(`${options.targetName}:${options.resourceId}`)}`,
          '',
        ].join('\n'),
      ),
    );
    for (const algorithm of WRITTEN_ALGORITHMS) {
      await addTagFile(`manifest-${algorithm}.txt`, Buffer.from(files.map((file) => manifestLine(file.computed_hashes[algorithm] ?? '', `data/${file.path}`)).join(''), 'utf8'));
    }
    // One log entry: this download. A bag is one hop; later uploads and transfers append.
    const source = { target: options.targetName, resource_id: options.resourceId, title: read.title, ...(options.describe?.identifier ? { identifier: options.describe.identifier } : {}) };
    const provenance: ProvenanceLog = {
      format: 'ferry-provenance/1',
      entries: [{ action: 'download', at: formatDate(now), job: null, software: 'Ferry', source, destination: { target: 'bag', resource_id: bagRoot, title: read.title }, files }],
    };
    await addTagFile(PROVENANCE_FILE, serializeProvenance(provenance));
    await addTagFile(ROCRATE_FILE, roCrateMetadata({ title: read.title, source, describe: options.describe, published: now, files, folders: bagFolders }));
    await flushWhole();
    for (const algorithm of WRITTEN_ALGORITHMS) {
      const lines = tagFiles.map((tag) => manifestLine(tag.hashes?.[algorithm] ?? '', tag.name));
      await queueWhole(wholeItem(`${bagRoot}/tagmanifest-${algorithm}.txt`, Buffer.from(lines.join(''), 'utf8'), now, [], false));
    }
    await flushWhole();
  };

  const readWhole = async (entry: Entry): Promise<Buffer> => {
    const source = await entry.open();
    current = source;
    if (failed) {
      source.destroy();
      throw new CancelledError();
    }
    const bytes = await collect(source);
    current = null;
    return bytes;
  };

  /** How a large file's digests, CRC-32 and deflate are shared among the workers. */
  const rolesFor = (algorithms: readonly string[], deflateLevel: number): StreamRole[] => {
    const [first, ...rest] = algorithms;
    if (first === undefined || pool.size < 2) return [{ algorithms, crc: true, level: deflateLevel }];
    // md5 is the slowest digest: it gets a worker of its own unless deflate needs one more
    if (deflateLevel > 0) return [{ algorithms, crc: false, level: 0 }, { algorithms: [], crc: true, level: deflateLevel }];
    return [{ algorithms: [first], crc: false, level: 0 }, { algorithms: rest, crc: true, level: 0 }];
  };

  /**
   * A large file, streamed: its bytes go out as they come (stored) or as the worker
   * deflates them, while the workers hash them (or only CRC them, when the source remembers
   * its digests); the CRC and sizes follow in a data descriptor. Only this file is open
   * meanwhile.
   */
  const streamLarge = async (entry: Entry, path: string, mtime: Date, algorithms: string[], known: RememberedDigests | null): Promise<ProvenanceFile> => {
    const name = zipEntryName(path, false);
    const source = await openLarge(entry);
    try {
      const compress = level > 0 && !isIncompressibleByName(entry.path) && (await sampleCompressesOffThread(await source.head(SAMPLE_BYTES)));
      if (failed) throw new CancelledError();
      const { dosTime, dosDate } = dosDateTime(mtime);
      const offset = output.cursor;
      const method = compress ? METHOD_DEFLATE : METHOD_STORE;
      output.write(streamedLocalHeader(name, method, dosTime, dosDate));
      let compressedSize = 0;
      const thisJob = pool.stream(rolesFor(known ? [] : algorithms, compress ? level : 0), (bytes) => {
        compressedSize += bytes.length;
        output.write(bytes);
      });
      job = thisJob;
      let size = 0;
      try {
        for (;;) {
          // stored bytes go out as read: on loan from the workers' slots where the file is read into them
          const chunk = await source.next(thisJob, !compress);
          if (!chunk) break;
          if (failed) {
            chunk.giveBack?.();
            throw new CancelledError();
          }
          size += chunk.bytes.length;
          if (!compress) {
            compressedSize += chunk.bytes.length;
            if (chunk.giveBack) output.writeLent(chunk.bytes, chunk.giveBack);
            else output.write(chunk.bytes);
          }
          await output.drained();
        }
        if (failed) throw new CancelledError();
        const { hashes, crc } = await thisJob.end();
        output.write(dataDescriptor(crc, compressedSize, size));
        records.push({ name, flags: FLAG_UTF8 | FLAG_DATA_DESCRIPTOR, method, dosTime, dosDate, crc, compressedSize, size, mode: FILE_MODE, unixTime: unixTime(mtime), offset });
        await output.drained();
        const inBag = path.slice(payloadRoot.length);
        if (known && crc === known.crc32) return provenanceOf(entry, inBag, size, pick(known.hashes, algorithms), true);
        const computed = known ? await hashAgain(entry, algorithms, crc) : hashes;
        if (size === entry.size) entry.remember?.({ hashes: computed, crc32: crc });
        return provenanceOf(entry, inBag, size, computed);
      } catch (error) {
        thisJob.abort();
        throw error;
      } finally {
        job = null;
      }
    } finally {
      source.close();
      currentLarge = null;
    }
  };

  /** A large file opened for reading: by Ferry itself where the target lets it (see large-file-source.ts). */
  const openLarge = async (entry: Entry): Promise<LargeFileSource> => {
    const direct = directFiles ? entry.direct : undefined;
    const source = direct ? await openDirectSource(direct) : streamSource(await entry.open());
    currentLarge = source;
    if (failed) {
      source.close();
      throw new CancelledError();
    }
    return source;
  };

  /**
   * The digests of a large file read a second time: the bytes streamed out did not have the
   * CRC-32 remembered with its digests (the file changed without its size, mtime or inode
   * changing). They stand for the bytes written only if this read has their CRC-32 too.
   */
  const hashAgain = async (entry: Entry, algorithms: string[], writtenCrc: number): Promise<Record<string, string>> => {
    const source = await openLarge(entry);
    const again = pool.stream(rolesFor(algorithms, 0), () => undefined);
    job = again;
    try {
      while (await source.next(again, false)) if (failed) throw new CancelledError();
      const { hashes, crc } = await again.end();
      if (crc !== writtenCrc) throw conflict(`'${entry.path}' changed while it was being downloaded; download it again.`);
      return hashes;
    } catch (error) {
      again.abort();
      throw error;
    } finally {
      source.close();
      currentLarge = null;
    }
  };

  run()
    .then(
      () => {
        options.signal?.removeEventListener('abort', onAbort);
      },
      (error: unknown) => {
        options.signal?.removeEventListener('abort', onAbort);
        fail(asError(error));
      },
    )
    .finally(() => activeBags--);
  return output;
}

const EMPTY = Buffer.alloc(0);

/** All of a (small) stream's bytes: plain listeners, cheaper per file than an async iterator. */
function collect(source: Readable): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    source.on('data', (chunk: Buffer) => chunks.push(chunk));
    source.once('error', reject);
    let ended = false;
    source.once('end', () => {
      ended = true;
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    });
    // closed without an end or error (destroyed: the writer has failed already); an Error
    // is made only then, as capturing its stack for every file costs
    source.once('close', () => {
      if (!ended) reject(new CancelledError());
    });
  });
}

function unixTime(date: Date): number {
  return Math.floor(date.getTime() / 1000);
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

/** The source's remembered digests of an entry, when they cover every algorithm the bag needs. */
function rememberedFor(entry: Entry, algorithms: readonly string[]): RememberedDigests | null {
  const known = entry.remembered;
  return known && algorithms.every((algorithm) => typeof known.hashes[algorithm] === 'string') ? known : null;
}

function pick(hashes: Record<string, string>, algorithms: readonly string[]): Record<string, string> {
  return Object.fromEntries(algorithms.map((algorithm) => [algorithm, hashes[algorithm]!]));
}

/** What the provenance file records of one file: the source's word against the bytes read. */
function provenanceOf(entry: Entry, inBag: string, bytesRead: number, computed: Record<string, string>, remembered = false): ProvenanceFile {
  const fixity = fixityOf(entry.hashes, computed);
  const file: ProvenanceFile = {
    path: inBag,
    size: bytesRead,
    source_hashes: { ...entry.hashes },
    computed_hashes: computed,
    fixity,
    ...bagVerification(fixity, entry.hashes, computed),
  };
  if (remembered) file.hashes_remembered = true;
  if (entry.size !== null && entry.size !== bytesRead) file.source_size = entry.size;
  if (file.path !== entry.path) file.source_path = entry.path;
  return file;
}

/**
 * Where each entry goes under data/. A backslash is an ordinary character in a POSIX or
 * remote name, but ZIP readers take it for a folder separator; it becomes "_" so the ZIP
 * and manifests agree. That can make two names one ("a\\b" and "a_b"): the later one then
 * gets " (2)" (a folder's contents follow it), because a bag may hold a path only once
 * (one ZIP entry, one manifest line, RFC 8493 §2.1.3) and neither file may be lost.
 * Targets yield each folder before its contents (target.ts), so a folder's place is known
 * when its files come.
 */
class BagPaths {
  /** paths in the bag, files and folders */
  private readonly taken = new Set<string>();
  /** a folder's entry path → its path in the bag */
  private readonly folders = new Map<string, string>();

  claim(entryPath: string, kind: Entry['kind']): string {
    const cut = entryPath.lastIndexOf('/');
    const parentEntry = cut < 0 ? null : entryPath.slice(0, cut);
    const parent = parentEntry === null ? '' : `${this.folders.get(parentEntry) ?? parentEntry.replace(/\\/g, '_')}/`;
    const name = entryPath.slice(cut + 1).replace(/\\/g, '_');
    let inBag = `${parent}${name}`;
    for (let n = 2; this.taken.has(inBag); n++) inBag = `${parent}${numbered(name, n, kind)}`;
    this.taken.add(inBag);
    if (kind === 'folder') this.folders.set(entryPath, inBag);
    return inBag;
  }
}

/** "a_b.txt" → "a_b (2).txt"; a folder's or a dot file's whole name gets the number. */
function numbered(name: string, n: number, kind: Entry['kind']): string {
  const dot = kind === 'file' ? name.lastIndexOf('.') : -1;
  return dot > 0 ? `${name.slice(0, dot)} (${n})${name.slice(dot)}` : `${name} (${n})`;
}

function oneLine(text: string): string {
  return text.replace(/[\r\n]+/g, ' ');
}

function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error && signal.reason.name !== 'AbortError' ? signal.reason : new CancelledError();
}
