import type { Readable } from 'node:stream';
import type { FixityFailure } from '../../../shared/api.js';
import { CancelledError } from '../errors.js';
import { fastPathOn } from '../fast-paths.js';
import { isComputableHash } from '../hashing.js';
import type { Entry } from '../target.js';
import type { Bandwidth } from './bandwidth.js';
import { CheckedHashingStream, SourceCheckFailed } from './source-check.js';
import { readWholeOf, withReadWhole } from './whole-entry.js';
import { watchedReads } from './open-from.js';

export interface WatchedEntriesOptions {
  signal: AbortSignal;
  /** called whenever the counts move; the job runner rate-limits what it publishes */
  onProgress(progress: { files_done: number; bytes_done: number }): void;
  /** remember the files no read finished, for readUnread() (a staged bag write checks them all) */
  trackUnread?: boolean;
  /** the queue's shared limit on bytes read per second; a limit set while a file is being read applies from the next file */
  bandwidth?: Bandwidth;
  /** algorithms to compute of every file's bytes as sent (`sent`), to verify them against the destination's record */
  digests?: readonly string[];
}

/** What a writer was handed of one file, read to its end: the byte count and the `digests` asked for. */
export interface SentFile {
  bytes: number;
  /** lowercase hex, by algorithm: the options' `digests` and the source's own checked algorithms */
  hashes: Record<string, string>;
}

/**
 * Entries passing from a reader to a writer, watched on the way: every byte a writer reads
 * through `open()` is counted and hashed once, and the hashes the source reported are
 * checked when the stream ends. The writer never sees the difference.
 */
export class WatchedEntries implements AsyncIterable<Entry> {
  filesDone = 0;
  bytesDone = 0;
  /** file entries the writer has been handed */
  filesSeen = 0;
  /** the sum of the known sizes of those files */
  bytesSeen = 0;
  /** the first segment of the first entry: a top-level write's top folder, as the source names it */
  topFolder: string | null = null;
  private readonly failures = new Map<string, FixityFailure[]>();
  /** the last complete read of each file */
  private readonly sentFiles = new Map<string, SentFile>();
  /** every file entry's path, read or not */
  private readonly filePaths = new Set<string>();
  /** files the writer read to the end, in the order it finished them */
  private readonly finishedPaths: string[] = [];
  private readonly open = new Set<Readable>();
  /** with trackUnread: each watched file entry and whether a read of it has finished */
  private readonly watchedFiles: { entry: Entry; finished: () => boolean }[] = [];
  private readonly onAbort = () => this.destroyAll();

  constructor(
    private readonly source: AsyncIterable<Entry>,
    private readonly options: WatchedEntriesOptions,
  ) {
    options.signal.addEventListener('abort', this.onAbort, { once: true });
  }

  /** Fixity failures found so far: the last complete read of each file counts. Such a file is never handed over whole. */
  get fixityFailures(): FixityFailure[] {
    return [...this.failures.values()].flat();
  }

  /** Files the writer was handed in full (read to their end), whether or not it wrote them. */
  get handedOver(): string[] {
    return [...this.finishedPaths];
  }

  /** True when the writer was handed `path` as a file (not a folder). */
  isFile(path: string): boolean {
    return this.filePaths.has(path);
  }

  /** The bytes the writer was last handed of `path` in full, or undefined when no read of it finished. */
  sent(path: string): SentFile | undefined {
    return this.sentFiles.get(path);
  }

  /** True when the file's last read failed its check: it was never handed over whole. */
  refused(path: string): boolean {
    return this.failures.has(path);
  }

  /** Stops listening to the signal; call when the writer is done. */
  dispose(): void {
    this.options.signal.removeEventListener('abort', this.onAbort);
    this.destroyAll();
  }

  /**
   * Reads (and so hashes and checks) every file the writer was handed but never read to the
   * end: an ignored duplicate, a file that hit a per-file error. Needs `trackUnread`.
   */
  async readUnread(): Promise<void> {
    for (const { entry, finished } of this.watchedFiles) {
      if (finished()) continue;
      throwIfCancelled(this.options.signal);
      try {
        const readWhole = readWholeOf(entry);
        if (readWhole) {
          await readWhole([]);
          continue;
        }
        const stream = await entry.open();
        for await (const chunk of stream) void chunk;
      } catch (error) {
        // a file that fails its check is recorded in fixityFailures; the caller decides
        if (!(error instanceof SourceCheckFailed)) throw error;
      }
    }
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Entry> {
    throwIfCancelled(this.options.signal);
    for await (const entry of this.source) {
      throwIfCancelled(this.options.signal);
      this.topFolder ??= entry.path.split('/')[0] ?? null;
      if (entry.kind === 'file') {
        this.filesSeen += 1;
        this.bytesSeen += entry.size ?? 0;
        this.filePaths.add(entry.path);
        yield this.watch(entry);
      } else {
        yield entry;
      }
    }
  }

  private watch(entry: Entry): Entry {
    const expected = Object.entries(entry.hashes)
      .map(([algorithm, value]) => [algorithm.toLowerCase(), value.toLowerCase()] as const)
      .filter(([algorithm]) => isComputableHash(algorithm));
    const algorithms = [...new Set([...expected.map(([algorithm]) => algorithm), ...(this.options.digests ?? [])])].filter(isComputableHash);
    // A writer may open a file more than once (a retried upload): count each byte once.
    let counted = 0;
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      this.finishedPaths.push(entry.path);
      this.filesDone += 1;
      this.report();
    };
    /** the last complete read decides: null when its bytes matched, else the refusal */
    const judge = (actual: Record<string, string>, bytes: number): SourceCheckFailed | null => {
      this.failures.delete(entry.path);
      this.sentFiles.set(entry.path, { bytes, hashes: actual });
      const mismatches = expected
        .filter(([algorithm, value]) => actual[algorithm] !== value)
        .map(([algorithm, value]) => ({ path: entry.path, algorithm, expected: value, actual: actual[algorithm] ?? '' }));
      finish();
      if (mismatches.length === 0) return null;
      this.failures.set(entry.path, mismatches);
      return new SourceCheckFailed(entry.path, mismatches);
    };
    /** `raw`: the whole file's bytes; `kept`: how many of the first are the writer's own (Entry.openFrom), not read from the source */
    const watchStream = (raw: Readable, kept: number): Readable => {
      let read = 0;
      // the last chunk is held back until the hashes match (source-check.ts)
      const hasher = new CheckedHashingStream(
        algorithms,
        (n) => {
          read += n;
          if (read > counted) {
            this.bytesDone += read - counted;
            counted = read;
            this.report();
          }
        },
        (actual) => judge(actual, read),
      );
      raw.on('error', (error) => {
        // the source's own check (a ZIP entry's CRC-32) refused the bytes: a fixity failure too
        if (error instanceof SourceCheckFailed) {
          this.failures.set(entry.path, error.failures.map((failure) => ({ ...failure, path: entry.path })));
          finish();
        }
        hasher.destroy(error);
      });
      // The writer attaches its listeners only after an await (opening its temp file): an
      // error before that (a small damaged ZIP entry) would otherwise be uncaught and end the
      // process. pipeline() still reports the stored error to the writer.
      hasher.on('error', () => undefined);
      // a source that hashes as it passes (the provenance record's watch) hashes for this check too
      if (fastPathOn('shared-hashing')) hasher.hashAlongWith(raw);
      hasher.on('close', () => {
        this.open.delete(raw);
        this.open.delete(hasher);
        if (!raw.destroyed && !raw.readableEnded) raw.destroy();
      });
      this.open.add(raw);
      this.open.add(hasher);
      if (this.options.signal.aborted) this.destroyAll();
      // the limit is on bytes read from the source: a writer's own kept bytes pass freely
      const throttle = this.options.bandwidth?.throttle(this.options.signal, kept);
      if (!throttle) return raw.pipe(hasher);
      throttle.on('error', (error) => hasher.destroy(error));
      return raw.pipe(throttle).pipe(hasher);
    };
    const watched: Entry = { ...entry, ...watchedReads(entry, watchStream, () => throwIfCancelled(this.options.signal)) };
    // The whole-file path (small files): the same count and check, without a stream; a file
    // that fails it is never handed over.
    const readWhole = readWholeOf(entry);
    if (readWhole) {
      withReadWhole(watched, async (wanted) => {
        throwIfCancelled(this.options.signal);
        let file;
        try {
          file = await readWhole([...new Set([...algorithms, ...wanted])]);
        } catch (error) {
          if (error instanceof SourceCheckFailed) {
            this.failures.set(entry.path, error.failures.map((failure) => ({ ...failure, path: entry.path })));
            finish();
          }
          throw error;
        }
        await this.options.bandwidth?.take(file.bytes.length, this.options.signal);
        if (file.bytes.length > counted) {
          this.bytesDone += file.bytes.length - counted;
          counted = file.bytes.length;
        }
        const refusal = judge(file.hashes, file.bytes.length);
        this.report();
        if (refusal) throw refusal;
        return file;
      });
    }
    if (this.options.trackUnread) this.watchedFiles.push({ entry: watched, finished: () => finished });
    return watched;
  }

  private report(): void {
    this.options.onProgress({ files_done: this.filesDone, bytes_done: this.bytesDone });
  }

  private destroyAll(): void {
    for (const stream of this.open) stream.destroy(new CancelledError());
    this.open.clear();
  }
}

function throwIfCancelled(signal: AbortSignal): void {
  if (signal.aborted) throw new CancelledError();
}
