// Writing entries into the workspace. Every file goes to a temporary name in its
// destination folder and is renamed into place, so a reader never sees half a file and an
// abort leaves nothing behind. Nothing here follows a symlink: folders are made one level
// at a time and each existing level is lstat-checked, the temp file is opened with
// O_EXCL|O_NOFOLLOW, and each destination folder's realpath is checked to be inside the root.
//
// Durability: a replaced file is fsynced before the rename over it (a crash must not leave an
// empty file where data was). A NEW file is not fsynced, as unzip and cp do not: a crash
// right after the job's end may lose it, but never damages anything that was there, and the
// job (its end fsynced) can be run again. Measured on the bench bag (3,011 files, 229 MiB,
// ext4): an fsync per file costs ~0.75 s (more than a third of the job); one syncfs of the
// file system (`sync -f`, Linux only, and it flushes everyone's data) ~0.13 s. A job's resume
// journal hears of a file only once it is on disk (durable-marks.ts).

import { createHash, randomBytes } from 'node:crypto';
import { constants, type BigIntStats } from 'node:fs';
import { lstat, lutimes, mkdir, open, readdir, realpath, rename, rmdir, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pLimit from 'p-limit';
import { badRequest, CancelledError, throwIfAborted } from '../../errors.js';
import { HashingPassThrough, hashStream } from '../../hashing.js';
import type { Entry, ReadWhole, WriteOptions, WriteOutcome } from '../../target.js';
import { SourceCheckFailed } from '../../jobs/source-check.js';
import type { StagedWriteOptions } from '../../jobs/staged-write.js';
import { opensIndependently, readWholeOf } from '../../jobs/whole-entry.js';
import { giveBack } from '../../read-buffers.js';
import { fastPathOn } from '../../fast-paths.js';
import { fileSink, writeAllAt } from './file-sink.js';
import { FileWorkerLost, fileWriteWorkers, type WrittenFileStat } from '../../jobs/file-write-workers.js';
import { DurableMarks, durabilityBarrier } from './durable-marks.js';
import { isResumable, writeResumable } from './resumable-write.js';
import { keptPartialName } from '../../jobs/resume-journal.js';
import { describePerFileError, PER_FILE_CODES, toFerryError } from './fs-errors.js';
import type { FileVersion, HashCache } from './hash-cache.js';
import { checkRelativePath, inFolder, isInside, joinInside } from './safe-path.js';
import { isCode, joinRelative } from './walk.js';
import { processIsAlive } from '../../process-alive.js';
import { foldName } from '../../name-fold.js';

const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const MAX_NAME_ATTEMPTS = 10_000;

export interface WriteParams {
  /** the workspace root, already resolved with realpath */
  rootRealPath: string;
  /** the destination folder relative to the root; '' for the root itself */
  containerPath: string;
  /** a top-level write: the entries' one top folder becomes a new top-level resource */
  topLevel: boolean;
  entries: AsyncIterable<Entry>;
  options: WriteOptions;
  hashCache: HashCache;
  /** what to compute while bytes pass (the cache then knows a written file's hashes) */
  algorithms: readonly string[];
  idOf(relativePath: string): string;
}

/** A problem with one entry only (a file where a folder should be, ...): reported, the write goes on. */
class EntryConflict extends Error {}

/** What one entry adds to the outcome (merged in entry order). */
type Lists = Pick<WriteOutcome, 'created' | 'updated' | 'ignored' | 'fileErrors'>;
const emptyLists = (): Lists => ({ created: [], updated: [], ignored: [], fileErrors: [] });

/** renames and removals at once (each is latency, not bandwidth) */
const WRITE_CONCURRENCY = 8;
/**
 * Small files in flight at once (see Writer.writeAll), and the most of their bytes held. A
 * file read whole is written in one hop to a worker thread, and the writes asked for in one
 * turn go as one message (file-write-workers.ts): with enough in flight the next files are
 * read and hashed here while the worker writes the ones before them.
 */
const SMALL_FILES_IN_FLIGHT = 32;
const SMALL_BYTES_IN_FLIGHT = 8 * 1024 * 1024;
/** staged files renamed in one hop to a worker at commit */
const RENAME_BATCH = 256;
/**
 * Large files written at once, each streamed alongside the small files, when their source
 * reads each entry independently (Entry.opensIndependently). A folder whose large files come
 * first (sorted names: `raw/` before `site-00/`) then copies two side by side while its small
 * files follow, instead of one large file after another with every small one waiting behind
 * the last; a third large file waits for a place of its own, not in the entry loop, so the
 * small files after it start meanwhile. Two, not rclone's four (`--transfers 4`): each holds
 * its own read buffers and hash ring (~5 MiB), and four were no faster on two cores
 * (docs/performance.md, "Large files side by side").
 */
export const LARGE_FILES_IN_FLIGHT = 2;
/** files up to this size may be written alongside others */
const CONCURRENT_FILE_BYTES = 1024 * 1024;
/** A temporary file written with an entry's bytes. */
interface WrittenTemporary {
  hashes: Record<string, string>;
  bytes: number;
  /** its mtime is already the entry's */
  timesSet: boolean;
  /** its stat after writing, when taken */
  stat: WrittenFileStat | null;
  /**
   * When the write was asked to put it in place (`placeAt`): null once renamed there, else
   * why not (the temporary is then still where it was written). Undefined: not asked, or not
   * done (the caller renames it).
   */
  placeError?: unknown | null;
}

/** A staged file (see StagedWriteOptions): written, checked, waiting to be put in place. */
interface StagedFile {
  temporary: string;
  target: string;
  destination: string;
  /** the entry's own path, for WriteOptions.onFileWritten */
  entryPath: string;
  replacing: boolean;
  hashes: Record<string, string>;
  /** the temporary's stat once written (a rename keeps size, mtime and inode): no lstat after the rename */
  stat: WrittenFileStat | null;
  out: Lists;
}

/** A new file for writing: never one that exists, never through a link. */
const openNewFile = (file: string, mode = 0o644): Promise<FileHandle> => open(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NOFOLLOW, mode);

/** The entry's mtime, when it has a valid one. */
const validMtime = (entry: Entry): Date | null => (entry.mtime && !Number.isNaN(entry.mtime.getTime()) ? entry.mtime : null);

/** a small file's bytes held in memory at most before they are written (a source may understate a size) */
const SMALL_FILE_HOLD_BYTES = 4 * 1024 * 1024;
/** for small files in flight: they are finished, not cut off (see Writer.run) */
const NEVER = new AbortController().signal;

export async function writeEntries(params: WriteParams): Promise<WriteOutcome> {
  return new Writer(params).run();
}

class Writer {
  private readonly outcome: WriteOutcome = { created: [], updated: [], ignored: [], fileErrors: [] };
  private readonly containerAbsolute: string;
  /** folders known to be real directories inside the root */
  private readonly knownFolders = new Set<string>();
  /** folders ensureFolder has made or checked (and found inside the root), by their path relative to the container: each file of one costs a lookup, not a path.join a level */
  private readonly ensuredFolders = new Map<string, string>();
  /** folders this write made, with the mtime their entry asked for (applied at the end) */
  private readonly folderTimes = new Map<string, Date>();
  private readonly madeFolders = new Set<string>();
  /** files this write has put in place (absolute paths, folded: see foldName) */
  private readonly written = new Set<string>();
  /** names stored in folders where an existing file or folder was met (see storedNameDiffers) */
  private readonly storedNames = new Map<string, Set<string>>();
  private top: { to: string } | null = null;
  /** the claim file of a top-level write (see claimTopFolder), removed once the write ends */
  private claimFile: string | null = null;
  /** a staged write's check (StagedWriteOptions.beforeCommit); null: files go in place as written */
  private readonly beforeCommit: (() => Promise<void>) | null;
  /** a staged write's files, in temporaries until the check passes */
  private readonly staged: StagedFile[] = [];
  /** files told to the job (its resume journal) only once on disk; null: nobody listens */
  private readonly marks: DurableMarks | null;

  constructor(private readonly params: WriteParams) {
    this.containerAbsolute = joinInside(params.rootRealPath, params.containerPath);
    this.knownFolders.add(this.containerAbsolute);
    this.beforeCommit = (params.options as StagedWriteOptions).beforeCommit ?? null;
    const tell = params.options.onFileWritten;
    this.marks = tell ? new DurableMarks(durabilityBarrier(params.rootRealPath), tell) : null;
  }

  async run(): Promise<WriteOutcome> {
    try {
      if (!this.params.topLevel) await this.adoptClaimOfContainer();
      const outcome = await this.writeAll();
      // the job ends with this write and removes its journal: no barrier for marks nobody will read
      this.marks?.drop();
      await this.dropClaim();
      return outcome;
    } catch (error) {
      // a paused, cancelled or failed write: what it put in place is made durable and told, so a resume skips it
      await this.marks?.settle();
      this.marks?.drop();
      if (this.beforeCommit) await this.discardStaged();
      // A cancel may be Ferry stopping, whose job resumes at the next start: keep the claim
      // for it. Any other failure ends the job for good: the folders it made and left empty go.
      if (!(error instanceof CancelledError)) {
        await this.removeEmptyMadeFolders();
        await this.dropClaim();
      }
      throw error;
    }
  }

  /**
   * A top-level write resumed after a crash goes on inside the folder its first run claimed
   * (the job's resume journal names it) as a write into that folder: the first run's claim is
   * then this write's to drop when it ends, as a top-level write drops its own.
   */
  private async adoptClaimOfContainer(): Promise<void> {
    if (this.containerAbsolute === this.params.rootRealPath) return; // the root has no claim above it inside the workspace
    const claim = path.join(path.dirname(this.containerAbsolute), claimFileName(this.params.options.jobLabel));
    if ((await readClaim(claim))?.name === path.basename(this.containerAbsolute)) this.claimFile = claim;
  }

  private async dropClaim(): Promise<void> {
    if (this.claimFile) await unlink(this.claimFile).catch(() => undefined);
  }

  private async writeAll(): Promise<WriteOutcome> {
    const { entries, options } = this.params;
    // Small files are written SMALL_FILES_IN_FLIGHT at a time: each one is several file-system calls in
    // a row (lstat, open, write, utimes, rename, lstat), and one after another the disk's
    // latency, not its bandwidth, set the pace of an upload of thousands of small files.
    // Everything else (paths, folders, names) happens in entry order, and the outcome lists
    // are merged in entry order, so they read exactly as a one-at-a-time write's would.
    const slots: { out: Lists; done: boolean }[] = [];
    let merged = 0;
    // A staged write reports only once its files are in place (commitStaged).
    let staging = this.beforeCommit !== null;
    const merge = () => {
      while (!staging && merged < slots.length && slots[merged]!.done) {
        const { out } = slots[merged]!;
        this.outcome.created.push(...out.created);
        this.outcome.updated.push(...out.updated);
        this.outcome.ignored.push(...out.ignored);
        this.outcome.fileErrors.push(...out.fileErrors);
        slots[merged] = undefined as never;
        merged++;
      }
    };
    const inFlight = new Map<string, Promise<void>>();
    let inFlightBytes = 0;
    /** the large files written alongside small ones (see opensIndependently), LARGE_FILES_IN_FLIGHT at a time */
    const largePlace = pLimit(LARGE_FILES_IN_FLIGHT);
    // set from the tasks' callbacks
    let failure = null as { error: unknown } | null;
    try {
      for await (const entry of entries) {
        if (failure) break;
        throwIfAborted(options.signal);
        const problem = checkRelativePath(entry.path);
        if (problem !== null) throw badRequest(`Cannot write '${entry.path.replace(/\0/g, '\\0')}': ${problem}. Nothing outside the destination is written.`);
        const slot = { out: emptyLists(), done: false };
        slots.push(slot);
        const destination = this.params.topLevel ? await this.remapTopLevel(entry, slot.out) : entry.path;
        const onError = (error: unknown) => {
          // a source file that failed its own check was never handed over whole: that file only
          if (error instanceof EntryConflict || error instanceof SourceCheckFailed) slot.out.fileErrors.push({ path: destination, error: error.message });
          else if (isCode(error, ...PER_FILE_CODES)) slot.out.fileErrors.push({ path: destination, error: describePerFileError(error, destination) });
          else failure ??= { error: error instanceof CancelledError ? error : toFerryError(error, destination) };
        };
        let folder: string;
        try {
          if (entry.kind === 'folder') {
            await this.writeFolder(entry, destination, slot.out);
            slot.done = true;
            merge();
            continue;
          }
          const slash = destination.lastIndexOf('/');
          folder = await this.ensureFolder(slash < 0 ? '' : destination.slice(0, slash), slot.out);
        } catch (error) {
          onError(error);
          slot.done = true;
          merge();
          continue;
        }
        // Large files LARGE_FILES_IN_FLIGHT at a time (and a cancel stops them at once); small
        // ones alongside each other, and an in-flight small file is finished rather than cut
        // off by a cancel: every entry handed over before a cancel is written whole.
        const large = entry.size === null || entry.size > CONCURRENT_FILE_BYTES;
        if (large && !opensIndependently(entry)) {
          // a source that may need this stream read to its end before the next entry
          await Promise.allSettled([...inFlight.values()]);
          if (failure) break;
          await this.writeFile(entry, destination, folder, slot.out, options.signal).catch(onError);
          slot.done = true;
          merge();
          continue;
        }
        // the same destination twice in one write (or two spellings one disk may take for the
        // same name, 'README.md' and 'readme.md'): the second waits for the first
        const key = foldName(destination);
        const before = inFlight.get(key);
        const size = large ? 0 : entry.size!;
        inFlightBytes += size;
        const write = () => this.writeFile(entry, destination, folder, slot.out, large ? options.signal : NEVER);
        // Any other large file's source reads later entries independently: they are written
        // while it streams or waits for its place (so a folder or a ZIP whose large files come
        // first does not leave a core idle for their length); one whose place came after the
        // write failed is not started.
        const task: Promise<void> = (before ?? Promise.resolve())
          .then(() => (large ? largePlace(() => (failure ? undefined : write())) : write()))
          .catch(onError)
          .finally(() => {
            inFlightBytes -= size;
            if (inFlight.get(key) === task) inFlight.delete(key);
            slot.done = true;
            merge();
          });
        inFlight.set(key, task);
        while (inFlight.size >= SMALL_FILES_IN_FLIGHT || (inFlightBytes > SMALL_BYTES_IN_FLIGHT && inFlight.size > 0)) await Promise.race(inFlight.values());
      }
    } finally {
      // never return (or throw) while a file is still being written
      await Promise.allSettled([...inFlight.values()]);
    }
    if (failure) throw failure.error;
    if (this.beforeCommit) {
      await this.beforeCommit();
      throwIfAborted(options.signal);
      await this.commitStaged();
      staging = false;
    }
    merge();
    await this.applyFolderTimes();
    if (this.params.topLevel) {
      if (this.top === null) throw badRequest('A top-level upload needs one folder to create; there were no entries.');
      this.outcome.newResource = { id: this.params.idOf(this.top.to), title: this.top.to };
    }
    return this.outcome;
  }

  /**
   * The entry's path with the top folder renamed to the distinct name this write claimed
   * (claimed on the first entry: the plan holds one top folder, and begins with it).
   */
  private async remapTopLevel(entry: Entry, out: Lists): Promise<string> {
    const slash = entry.path.indexOf('/');
    const first = slash < 0 ? entry.path : entry.path.slice(0, slash);
    const rest = slash < 0 ? '' : entry.path.slice(slash);
    if (this.top === null) {
      this.top = { to: await this.claimTopFolder(first, out) };
      // a resumed job writes into this folder, where the files its journal names are
      this.params.options.onNewResource?.({ id: this.params.idOf(this.top.to), title: this.top.to });
    }
    return this.top.to + rest;
  }

  /**
   * Makes `Name`, or `Name (2)`, `Name (3)`… at the root; mkdir claims the name atomically.
   * The name about to be claimed is first written to a hidden claim file named after the job,
   * so the same job run again after a crash (a resumed job) finds the folder it made and
   * goes on there, instead of leaving a partial `Name` beside a whole `Name (2)`.
   */
  private async claimTopFolder(name: string, out: Lists): Promise<string> {
    const claim = path.join(this.containerAbsolute, claimFileName(this.params.options.jobLabel));
    this.claimFile = claim;
    const claimed = await readClaim(claim);
    if (claimed !== null && claimed.name.split('/').length === 1 && (claimed.name === name || claimed.name.startsWith(`${name} (`))) {
      const absolute = path.join(this.containerAbsolute, claimed.name);
      const existing = await lstatOrNull(absolute);
      // A name only tried (the crash came between the claim and its mkdir's answer) is ours
      // only while empty: the folder by that name may be the user's (the mkdir failed with
      // EEXIST), and nothing goes into a folder before its claim says it was made.
      if (existing?.isDirectory() && (claimed.made || (await isEmptyFolder(absolute)))) {
        // files in it may be this job's from before the crash: not a folder this write made
        this.knownFolders.add(absolute);
        out.created.push(claimed.name);
        return claimed.name;
      }
    }
    for (let n = 1; n <= MAX_NAME_ATTEMPTS; n += 1) {
      const candidate = n === 1 ? name : `${name} (${n})`;
      const absolute = path.join(this.containerAbsolute, candidate);
      await writeClaim(claim, candidate);
      try {
        await mkdir(absolute);
      } catch (error) {
        if (isCode(error, 'EEXIST')) continue;
        throw error;
      }
      await writeClaim(claim, candidate, true);
      this.knownFolders.add(absolute);
      this.madeFolders.add(absolute);
      out.created.push(candidate);
      return candidate;
    }
    throw badRequest(`Too many resources are already named like '${name}'; rename the folder and try again.`);
  }

  private async writeFolder(entry: Entry, destination: string, out: Lists): Promise<void> {
    const absolute = await this.ensureFolder(destination, out);
    if (entry.mtime && this.madeFolders.has(absolute) && !Number.isNaN(entry.mtime.getTime())) this.folderTimes.set(absolute, entry.mtime);
  }

  /** Writes one file into `folder` (made by ensureFolder); may run alongside other files. */
  private async writeFile(entry: Entry, destination: string, folder: string, out: Lists, signal: AbortSignal): Promise<void> {
    const target = inFolder(folder, destination.slice(destination.lastIndexOf('/') + 1));
    // In a folder this write made, only this write can have put a file: no lstat (and no
    // ENOENT error object) per file of a fresh upload.
    const existing = this.madeFolders.has(folder) && !this.written.has(foldName(target)) ? null : await lstatOrNull(target);
    if (existing !== null) {
      const name = target.slice(folder.length + 1);
      const stored = await this.storedNameDiffers(folder, name);
      if (stored !== null) throw new EntryConflict(sameNameOnThisDisk('file', destination, stored));
      if (existing.isDirectory()) throw new EntryConflict(`A folder '${destination}' already exists where this file should go; it was left alone.`);
      if (!existing.isFile()) throw new EntryConflict(`'${destination}' already exists and is not a regular file (a link or a device); it was left alone.`);
      if (this.params.options.duplicateAction === 'ignore') {
        this.arrived(out.ignored, destination, entry.path, target);
        return;
      }
    }

    // a large file a job may resume goes to a name the job's next run finds (resumable-write.ts)
    const resumable = isResumable(entry, this.params.options.partials);
    const temporary = inFolder(folder, resumable ? keptPartialName(this.params.options.jobLabel, target) : temporaryName());
    // A new file of an unstaged write needs nothing between its write and its rename: a
    // writer that can (a small file written on a worker thread) puts it in place in the same hop.
    const placeAt = existing === null && !this.beforeCommit ? target : null;
    const written = await this.writeTemporary(entry, temporary, existing !== null, signal, placeAt);
    try {
      if (existing !== null && BigInt(written.bytes) === existing.size) {
        const existingHashes = await this.params.hashCache.getOrCompute(this.versionOf(target, existing), () => hashNoFollow(target, this.params.algorithms));
        if (existingHashes.sha256 !== undefined && existingHashes.sha256 === written.hashes.sha256) {
          await unlink(temporary);
          this.arrived(out.ignored, destination, entry.path, target);
          return;
        }
      }
      if (!written.timesSet && entry.mtime && !Number.isNaN(entry.mtime.getTime())) await lutimes(temporary, new Date(), entry.mtime);
      if (this.beforeCommit) {
        this.staged.push({ temporary, target, destination, entryPath: entry.path, replacing: existing !== null, hashes: written.hashes, stat: written.stat, out });
        return;
      }
      try {
        if (written.placeError === undefined) await rename(temporary, target);
        else if (written.placeError !== null) throw written.placeError;
        this.written.add(foldName(target));
      } catch (error) {
        // A folder appeared at the destination after the check above.
        if (isCode(error, 'EISDIR', 'ENOTEMPTY', 'EEXIST', 'ENOTDIR')) throw new EntryConflict(`A folder '${destination}' already exists where this file should go; it was left alone.`);
        throw error;
      }
    } catch (error) {
      await unlink(temporary).catch(() => undefined);
      throw error;
    }
    // the temporary's stat, taken after its times were set, is the file's (a rename keeps
    // size, mtime and inode): no lstat after the rename
    const stored = written.stat !== null && written.timesSet ? written.stat : await lstatOrNull(target);
    if (stored !== null && (stored === written.stat || (stored as BigIntStats).isFile())) this.keepRecord(destination, target, stored, written.hashes);
    this.arrived(existing === null ? out.created : out.updated, destination, entry.path, target);
  }

  /**
   * A file just put in place at `target`, `stat` its stat there: the digests of the bytes
   * written are remembered for it (the hash cache), and are this write's record of it with
   * its size on disk (WriteOutcome.stored), as rclone's local backend keeps the hashes of
   * what it wrote: the job's check after the write needs no second read of every file, and
   * the provenance record no listing and detail of each.
   */
  private keepRecord(destination: string, target: string, stat: BigIntStats | WrittenFileStat, hashes: Record<string, string>): void {
    this.params.hashCache.set(this.versionOf(target, stat), hashes);
    (this.outcome.stored ??= new Map()).set(destination, { hashes, size: Number(stat.size), hashedAsWritten: true });
  }

  /** A file in place at `target` (or found there already): into its list, and told to the job once on disk (durable-marks.ts). */
  private arrived(list: string[], destination: string, entryPath: string, target: string): void {
    list.push(destination);
    this.marks?.add(entryPath, target);
  }

  /**
   * Puts a staged write's files in place, WRITE_CONCURRENCY renames at a time (each is a
   * rename and an lstat: latency, not bandwidth). A folder that appeared at a file's
   * destination since it was staged is that file's error, as in an unstaged write.
   */
  private async commitStaged(): Promise<void> {
    let next = 0;
    // with the workers, RENAME_BATCH renames in one hop (each promise rename costs this
    // thread ~35 µs besides its trip through libuv's pool); else one at a time. A few files
    // are renamed here: starting the two workers would cost more (~8 MiB of memory each, seen in
    // a 512 MiB upload's peak) than it saves.
    const workers = this.staged.length > WRITE_CONCURRENCY ? fileWriteWorkers() : null;
    const inWorkers = workers?.available === true;
    const putInPlace = async () => {
      while (next < this.staged.length) {
        const batch = this.staged.slice(next, (next += inWorkers ? RENAME_BATCH : 1));
        let errors: (unknown | null)[];
        try {
          errors = inWorkers ? await workers!.renameAll(batch.map((file) => [file.temporary, file.target] as const)) : [await rename(batch[0]!.temporary, batch[0]!.target).then(() => null, (error: unknown) => error)];
        } catch (error) {
          if (!(error instanceof FileWorkerLost)) throw error;
          // the worker died: what it did not rename is renamed here (a rename already done fails with ENOENT, its target in place)
          errors = await Promise.all(batch.map((file) => rename(file.temporary, file.target).then(() => null, (e: unknown) => (isCode(e, 'ENOENT') ? null : e))));
        }
        for (const [i, file] of batch.entries()) await this.placed(file, errors[i] ?? null);
      }
    };
    await Promise.all(Array.from({ length: inWorkers ? 2 : WRITE_CONCURRENCY }, putInPlace));
    this.staged.length = 0;
  }

  /** A staged file's rename has been tried: its outcome (or a folder in its way) is recorded. */
  private async placed(file: StagedFile, error: unknown | null): Promise<void> {
    if (error !== null) {
      if (!isCode(error, 'EISDIR', 'ENOTEMPTY', 'EEXIST', 'ENOTDIR')) throw error;
      await unlink(file.temporary).catch(() => undefined);
      file.out.fileErrors.push({ path: file.destination, error: `A folder '${file.destination}' already exists where this file should go; it was left alone.` });
      return;
    }
    this.written.add(foldName(file.target));
    // a staged temporary was made as a regular file (O_EXCL) by this write
    const stored = file.stat ?? (await lstatOrNull(file.target));
    if (stored !== null && (file.stat !== null || (stored as BigIntStats).isFile())) this.keepRecord(file.destination, file.target, stored, file.hashes);
    this.arrived(file.replacing ? file.out.updated : file.out.created, file.destination, file.entryPath, file.target);
  }

  /**
   * A staged write that does not commit leaves nothing: its temporaries are removed, then the
   * folders it made (deepest first; one someone else has put something in stays).
   */
  private async discardStaged(): Promise<void> {
    const files = this.staged.splice(0);
    for (let i = 0; i < files.length; i += WRITE_CONCURRENCY) {
      await Promise.all(files.slice(i, i + WRITE_CONCURRENCY).map((file) => unlink(file.temporary).catch(() => undefined)));
    }
    await this.removeEmptyMadeFolders();
  }

  /** Deepest first; rmdir refuses a folder that holds anything, so written files stay. */
  private async removeEmptyMadeFolders(): Promise<void> {
    const folders = [...this.madeFolders].sort((a, b) => b.length - a.length);
    for (const folder of folders) await rmdir(folder).catch(() => undefined);
  }

  /**
   * Streams the entry's bytes into a new temporary file, hashing them on the way. Removes
   * the temporary file on any failure; an abort becomes CancelledError. Replacements are
   * fsynced before the rename so a crash cannot leave an empty file where data was.
   */
  private async writeTemporary(entry: Entry, temporary: string, replacing: boolean, signal: AbortSignal, placeAt: string | null = null): Promise<WrittenTemporary> {
    if (entry.size !== null && entry.size <= CONCURRENT_FILE_BYTES) return this.writeSmallTemporary(entry, temporary, replacing, signal, placeAt);
    const { partials } = this.params.options;
    if (isResumable(entry, partials)) {
      const { digests, bytes } = await writeResumable({ entry, partial: temporary, partials, algorithms: this.params.algorithms, signal, sync: replacing });
      return { hashes: this.wantedHashes(digests), bytes, timesSet: false, stat: null };
    }
    const source: Readable = await entry.open();
    // A stream that is already hashing (the job runner's fixity check) computes what the
    // cache needs too, when asked before its first byte (so at once, before any await): the
    // bytes are hashed once, not twice.
    const upstream = source instanceof HashingPassThrough && source.addAlgorithms(this.params.algorithms) ? source : null;
    let handle;
    try {
      handle = await openNewFile(temporary);
    } catch (error) {
      source.destroy();
      throw error;
    }
    const hasher = upstream ?? new HashingPassThrough(this.params.algorithms);
    try {
      // a replacement is fsynced before the sink closes its handle
      const sink = fileSink(handle, replacing);
      if (upstream) await pipeline(source, sink, { signal });
      else await pipeline(source, hasher, sink, { signal });
    } catch (error) {
      throw await this.abandon(handle, temporary, error);
    }
    const hashes = this.wantedHashes(hasher.digests);
    return { hashes, bytes: hasher.bytes, timesSet: false, stat: null };
  }

  /**
   * A small file's bytes are gathered in memory and written with one call, its times set and
   * its stat taken through the open handle: a handful of file-system calls and no write
   * stream per file, which is what an upload of thousands of small files pays for. With the
   * fast path `gathered-small-files` and the file-write threads, the file is made only once
   * its every byte arrived, and then written on a worker thread in one hop as a file read
   * whole is: a download of many small files (WebDAV → local) leaves the main thread six
   * promise calls lighter a file, and a source that fails part-way leaves no temporary.
   */
  private async writeSmallTemporary(entry: Entry, temporary: string, replacing: boolean, signal: AbortSignal, placeAt: string | null): Promise<WrittenTemporary> {
    const readWhole = readWholeOf(entry);
    if (readWhole) return this.writeWholeTemporary(entry, readWhole, temporary, replacing, placeAt);
    const source: Readable = await entry.open();
    const upstream = source instanceof HashingPassThrough && source.addAlgorithms(this.params.algorithms) ? source : null;
    const hasher = upstream ?? new HashingPassThrough(this.params.algorithms);
    const mtime = validMtime(entry);
    const gatherFirst = fastPathOn('gathered-small-files') && fileWriteWorkers().available;
    let handle: FileHandle | null = null;
    if (!gatherFirst) {
      try {
        handle = await openNewFile(temporary);
      } catch (error) {
        source.destroy();
        throw error;
      }
    }
    let stat: BigIntStats;
    try {
      // a source bigger than it said is written as it comes, not held
      let chunks: Buffer[] = [];
      let held = 0;
      const gather = async (stream: AsyncIterable<Buffer>) => {
        for await (const chunk of stream) {
          chunks.push(chunk);
          held += chunk.length;
          if (held > SMALL_FILE_HOLD_BYTES) {
            await writeHeld();
            chunks = [];
            held = 0;
          }
        }
      };
      // the last holder of these chunks (read-buffers.ts): done with them once written
      const writeHeld = async () => {
        handle ??= await openNewFile(temporary);
        await handle.writeFile(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
        for (const chunk of chunks) giveBack(chunk);
      };
      if (upstream) await pipeline(source, gather, { signal });
      else await pipeline(source, hasher, gather, { signal });
      if (handle === null) {
        // every byte held: written on a worker thread (a copy goes there; these stay for a lost worker)
        const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
        const written = await this.writeOnWorker(temporary, bytes, mtime, replacing, placeAt, false);
        if (written !== null) {
          for (const chunk of chunks) giveBack(chunk);
          return { hashes: this.wantedHashes(hasher.digests), bytes: hasher.bytes, ...written };
        }
      }
      if (held > 0) await writeHeld();
      handle ??= await openNewFile(temporary); // an empty file
      if (mtime) await handle.utimes(new Date(), mtime);
      // a replacement is on disk before the rename, so a crash cannot leave an empty file where data was
      if (replacing) await handle.sync();
      stat = await handle.stat({ bigint: true });
      await handle.close();
    } catch (error) {
      if (handle === null) throw this.params.options.signal.aborted ? new CancelledError() : error;
      throw await this.abandon(handle, temporary, error);
    }
    return { hashes: this.wantedHashes(hasher.digests), bytes: hasher.bytes, timesSet: mtime !== null, stat };
  }

  /**
   * A file its reader hands over whole (see whole-entry.ts), its digests computed in the same
   * pass as the reader's own checks: read first, so a damaged entry leaves no temporary; then
   * the same few calls through one handle as writeSmallTemporary.
   */
  private async writeWholeTemporary(entry: Entry, readWhole: ReadWhole, temporary: string, replacing: boolean, placeAt: string | null): Promise<WrittenTemporary> {
    const file = await readWhole(this.params.algorithms);
    let { bytes, hashes } = file;
    const size = bytes.length;
    const mtime = validMtime(entry);
    // Movable bytes go to the worker: `bytes` are empty from here on (read again if it was lost)
    const written = await this.writeOnWorker(temporary, bytes, mtime, replacing, placeAt, file.movable === true);
    if (written !== null) return { hashes: this.wantedHashes(hashes), bytes: size, ...written };
    if (bytes.length !== size) ({ bytes, hashes } = await readWhole(this.params.algorithms));
    const handle = await openNewFile(temporary);
    let stat: BigIntStats;
    try {
      await writeAllAt(handle, bytes, 0);
      if (mtime) await handle.utimes(new Date(), mtime);
      // a replacement is on disk before the rename, so a crash cannot leave an empty file where data was
      if (replacing) await handle.sync();
      stat = await handle.stat({ bigint: true });
      await handle.close();
    } catch (error) {
      throw await this.abandon(handle, temporary, error);
    }
    return { hashes: this.wantedHashes(hashes), bytes: bytes.length, timesSet: mtime !== null, stat };
  }

  /**
   * Open, write, times, (fsync of a replacement), fstat, close (and the rename to `placeAt`) in
   * one hop to a file-write thread, which removes the temporary itself when any but the rename
   * fails. Null when there is no such thread, or it died mid-write (what it left is gone: the
   * caller writes the file here).
   */
  private async writeOnWorker(temporary: string, bytes: Buffer, mtime: Date | null, replacing: boolean, placeAt: string | null, movable: boolean): Promise<Omit<WrittenTemporary, 'hashes' | 'bytes'> | null> {
    const workers = fileWriteWorkers();
    if (!workers.available) return null;
    try {
      const { placeError, ...stat } = await workers.writeNewFile(temporary, bytes, mtime, replacing, placeAt, movable);
      return { timesSet: mtime !== null, stat, ...(placeAt !== null ? { placeError } : {}) };
    } catch (error) {
      if (!(error instanceof FileWorkerLost)) throw this.params.options.signal.aborted ? new CancelledError() : error;
      await unlink(temporary).catch(() => undefined);
      return null;
    }
  }

  /** A temporary file that will not be finished goes; a cancel is reported as one. */
  private async abandon(handle: FileHandle, temporary: string, error: unknown): Promise<unknown> {
    await handle.close().catch(() => undefined);
    await unlink(temporary).catch(() => undefined);
    return this.params.options.signal.aborted ? new CancelledError() : error;
  }

  /** The digests the job asked for, of those computed. */
  private wantedHashes(digests: Record<string, string> | null | undefined): Record<string, string> {
    const found = digests ?? {};
    return Object.fromEntries(this.params.algorithms.filter((algorithm) => found[algorithm] !== undefined).map((algorithm) => [algorithm, found[algorithm]!]));
  }

  /**
   * The absolute path of a folder relative to the container, made one level at a time.
   * An existing level must be a real directory (not a file, not a symlink).
   */
  private async ensureFolder(relative: string, out: Lists): Promise<string> {
    const ensured = this.ensuredFolders.get(relative);
    if (ensured !== undefined) return ensured;
    let current = this.containerAbsolute;
    let currentRelative = '';
    for (const segment of relative === '' ? [] : relative.split('/')) {
      current = path.join(current, segment);
      currentRelative = joinRelative(currentRelative, segment);
      if (this.knownFolders.has(current)) continue;
      try {
        await mkdir(current);
        this.madeFolders.add(current);
        out.created.push(currentRelative);
      } catch (error) {
        if (!isCode(error, 'EEXIST')) throw error;
        const existing = await lstat(current);
        if (!existing.isDirectory()) {
          throw new EntryConflict(`'${currentRelative}' already exists as a ${existing.isFile() ? 'file' : 'link or special file'}, so no folder can be made there; it was left alone.`);
        }
        const stored = await this.storedNameDiffers(path.dirname(current), segment);
        if (stored !== null) throw new EntryConflict(sameNameOnThisDisk('folder', currentRelative, stored));
      }
      this.knownFolders.add(current);
    }
    // Defence in depth: whatever happened above, bytes only land inside the root.
    const real = await realpath(current);
    if (!isInside(this.params.rootRealPath, real)) throw badRequest(`'${relative}' would land outside the workspace; nothing was written there.`);
    // a folder this write made holds nothing but what it writes: no one's temporaries to clear
    if (!this.madeFolders.has(current)) await removeOrphanedTemporaries(current);
    this.ensuredFolders.set(relative, current);
    return current;
  }

  /**
   * On a disk that ignores case or Unicode normalisation (macOS, Windows), `name` finds a
   * file stored as 'readme.md' or in NFD: writing would silently replace that other file.
   * Returns the stored name when it differs from `name`, else null. A folder's names are
   * read once and re-read only on a miss (a file this write or someone else just made), so
   * an update of a large folder reads it once, not once per file.
   */
  private async storedNameDiffers(folder: string, name: string): Promise<string | null> {
    let names = this.storedNames.get(folder);
    if (names?.has(name)) return null;
    names = new Set(await readdir(folder));
    this.storedNames.set(folder, names);
    if (names.has(name)) return null;
    const folded = foldName(name);
    for (const other of names) if (foldName(other) === folded) return other;
    // found by lstat under a spelling this simple folding does not cover: still not this name
    return '(another spelling)';
  }

  /** Folder mtimes last, deepest first: writing files into a folder would change them again. */
  private async applyFolderTimes(): Promise<void> {
    const folders = [...this.folderTimes].sort(([a], [b]) => b.length - a.length);
    for (const [folder, mtime] of folders) await lutimes(folder, new Date(), mtime).catch(() => undefined);
  }

  private versionOf(absolute: string, stat: WrittenFileStat): FileVersion {
    // every path this writer makes is path.join(containerAbsolute, …) of checked segments: below the root as written
    const root = this.params.rootRealPath;
    const below = absolute.startsWith(root + path.sep) ? absolute.slice(root.length + 1) : path.relative(root, absolute);
    const relative = path.sep === '/' ? below : below.split(path.sep).join('/');
    return { path: relative, size: stat.size, mtimeNs: stat.mtimeNs, ino: stat.ino };
  }
}

function sameNameOnThisDisk(kind: 'file' | 'folder', destination: string, stored: string): string {
  return (
    `'${destination}' was not written: this disk ignores case or Unicode normalisation in names, and the ${kind}'s name ` +
    `is taken by '${stored}', which it would have replaced; it was left alone. Rename one of them and try again.`
  );
}

// Temporary names carry the writing process's pid: a file whose process is gone was left by
// a crash (SIGKILL, power loss) and is removed the next time a write uses that folder.
const TEMPORARY = /^\.ferry-(\d+)-[0-9a-f]+\.part$/;

/**
 * A hidden file in the root naming the top folder a top-level write claimed, keyed by the
 * job's label (stable across a resume). Never listed (walk.ts).
 */
export function claimFileName(jobLabel: string): string {
  return `.ferry-claim-${createHash('sha256').update(jobLabel).digest('hex').slice(0, 24)}`;
}

/**
 * A job's claim of its new top folder: the name it tries (written before each mkdir), then
 * the same name with a second line `made` once its mkdir succeeded. A claim without that line
 * (from before it, or cut off by a crash) names a folder that may be someone else's.
 */
interface Claim {
  name: string;
  made: boolean;
}

async function readClaim(file: string): Promise<Claim | null> {
  try {
    const handle = await open(file, constants.O_RDONLY | NOFOLLOW);
    try {
      const [name, mark] = (await handle.readFile('utf8')).split('\n');
      return name ? { name, made: mark === 'made' } : null;
    } finally {
      await handle.close();
    }
  } catch {
    return null;
  }
}

/** Temp file + rename: a crash leaves the old claim or the new one, never half a name. */
async function writeClaim(file: string, name: string, made = false): Promise<void> {
  const temporary = path.join(path.dirname(file), temporaryName());
  const handle = await openNewFile(temporary, 0o600);
  try {
    await handle.writeFile(made ? `${name}\nmade` : name, 'utf8');
  } finally {
    await handle.close();
  }
  await rename(temporary, file);
}

async function isEmptyFolder(absolute: string): Promise<boolean> {
  try {
    return (await readdir(absolute)).length === 0;
  } catch {
    return false;
  }
}

// a random part per process and a counter: unguessable names without a random draw per file
const TEMPORARY_PREFIX = `.ferry-${process.pid}-${randomBytes(8).toString('hex')}`;
let temporaryCount = 0;

function temporaryName(): string {
  temporaryCount += 1;
  return `${TEMPORARY_PREFIX}${temporaryCount.toString(16).padStart(8, '0')}.part`;
}

async function removeOrphanedTemporaries(folder: string): Promise<void> {
  let names: string[];
  try {
    names = await readdir(folder);
  } catch {
    return;
  }
  for (const name of names) {
    const match = TEMPORARY.exec(name);
    if (match && Number(match[1]) !== process.pid && !processIsAlive(Number(match[1]))) {
      await unlink(path.join(folder, name)).catch(() => undefined);
    }
  }
}

async function lstatOrNull(absolute: string): Promise<BigIntStats | null> {
  try {
    return await lstat(absolute, { bigint: true });
  } catch (error) {
    if (isCode(error, 'ENOENT')) return null;
    throw error;
  }
}

async function hashNoFollow(absolute: string, algorithms: readonly string[]): Promise<Record<string, string>> {
  const handle = await open(absolute, constants.O_RDONLY | NOFOLLOW);
  const { hashes } = await hashStream(handle.createReadStream({ highWaterMark: 1024 * 1024, autoClose: true }), algorithms);
  return hashes;
}

