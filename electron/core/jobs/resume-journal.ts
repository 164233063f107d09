import { createHash } from 'node:crypto';
import { copyFile, lstat, open, readFile, rm, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { EngineJob, Entry, KeptPartial } from '../target.js';

/**
 * How long the lines after a batch are gathered (while it is fdatasync'd) before the next one
 * is written. A write of many small files to a server confirms one every few milliseconds, and
 * each batch costs the main thread a write and an fdatasync (~0.1 ms); gathered, a 1,000-file
 * write makes a few hundred batches, not one a file. A flush (the job's end, a pause) and an
 * urgent line write at once.
 */
const BATCH_GATHER_MS = 20;

/**
 * What a job has finished, kept beside its `<ticket>.json` so that a run after a crash, a
 * restart or a cancel (POST /jobs/<ticket>/resume/) does not send those files again.
 *
 * Invariant: a file is appended only after the destination confirmed it (WriteOptions.
 * onFileWritten), keyed by its path as the source names it and the source's identity of it
 * (size and a hash, or size and mtime). So a file half-written at a crash is never in the
 * journal, and a source file changed since is sent again. Lines are appended in batches,
 * each batch fdatasync'd while the next is gathered for BATCH_GATHER_MS: a kill of Ferry
 * loses only lines not yet written (a line written is in the file whatever happens to the
 * process), a power loss at most those not yet synced, and a lost line only means that file
 * is sent once more (or looked at again): no line depends on another being there. An urgent
 * line (see append) is written without waiting for the last batch's sync, which on a busy
 * disk can take seconds.
 *
 * One JSON object a line: `{"f": path, "i": identity}` for a file, `{"top": {...}}` for the
 * new top-level resource a top-level write made (a resumed run writes into it), `{"engine":
 * {...}}` for a copy an engine runs by itself (a resumed run waits for it while it still
 * runs), `{"p": path, "i": identity, "n": bytes, "c": crc32, "at": file}` for a large file
 * written part-way (WriteOptions.partials: the first `n` bytes of the file `at` on this machine
 * are durable, a resumed run goes on from there; a later line for the same path supersedes
 * it, and the job's end removes the file: removeKeptPartials). A torn last line (the crash came mid-write)
 * is ignored, and so is a line of a kind this reader does not know.
 */
export class ResumeJournal {
  private readonly files = new Map<string, string>();
  private readonly partials = new Map<string, { identity: string; kept: KeptPartial }>();
  private top: JournaledTop | null = null;
  private engine: EngineJob | null = null;
  private pending: string[] = [];
  private writing: Promise<void> | null = null;
  private handle: FileHandle | null = null;
  private failure: unknown = null;
  /** ends the gathering of the next batch early (flush) */
  private stopGathering: (() => void) | null = null;
  /** flushes waiting: no batch is gathered meanwhile */
  private flushes = 0;
  /** an urgent line waits in `pending` */
  private urgentWaiting = false;
  /** ends the wait for the last batch's sync early (an urgent line came) */
  private wakeForUrgent: (() => void) | null = null;

  private constructor(private readonly file: string) {}

  /** The journal at `file`, with what an earlier run recorded (none, or unreadable: empty, so all is sent again). */
  static async open(file: string): Promise<ResumeJournal> {
    const journal = new ResumeJournal(file);
    const text = await readFile(file, 'utf8').catch(() => '');
    for (const line of text.split('\n')) journal.apply(line);
    return journal;
  }

  /** A new job resuming a finished one starts from its journal. */
  static async copy(from: string, to: string): Promise<void> {
    try {
      await copyFile(from, to);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }

  static remove(file: string): Promise<void> {
    return rm(file, { force: true });
  }

  /**
   * Removes the partial files the journal at `file` vouches for: a job that ended (succeeded,
   * failed, cancelled, even while paused) goes on from none of them, and a partial is hidden
   * from listings, so nobody else would. Only a regular file by a kept partial's name
   * (keptPartialName) is removed, whatever a journal says.
   */
  static async removeKeptPartials(file: string): Promise<void> {
    const journal = await ResumeJournal.open(file);
    for (const { kept } of journal.partials.values()) {
      if (kept.file === undefined || !isKeptPartialName(path.basename(kept.file))) continue;
      const stat = await lstat(kept.file).catch(() => null);
      if (stat?.isFile()) await unlink(kept.file).catch(() => undefined);
    }
  }

  /** files an earlier run completed */
  get filesDone(): number {
    return this.files.size;
  }

  /** the new top-level resource an earlier run made, or null */
  get newResource(): JournaledTop | null {
    return this.top;
  }

  /** the engine job an earlier run started (rclone's server-side copy), or null */
  get engineJob(): EngineJob | null {
    return this.engine;
  }

  /** True when an earlier run left anything to go on from. */
  get hasEarlierRun(): boolean {
    return this.files.size > 0 || this.partials.size > 0 || this.top !== null || this.engine !== null;
  }

  /** True when an earlier run completed the file at `path` with these same source bytes. */
  has(path: string, identity: string | null): boolean {
    return identity !== null && this.files.get(path) === identity;
  }

  recordFile(path: string, identity: string): void {
    this.files.set(path, identity);
    this.partials.delete(path);
    this.append({ f: path, i: identity });
  }

  /** What an earlier run kept of the file at `path` written part-way, for these same source bytes; else null. */
  partial(path: string, identity: string | null): KeptPartial | null {
    const found = this.partials.get(path);
    return identity !== null && found?.identity === identity ? found.kept : null;
  }

  recordPartial(path: string, identity: string, kept: KeptPartial): void {
    this.partials.set(path, { identity, kept });
    this.append({ p: path, i: identity, n: kept.bytes, c: kept.crc32, at: kept.file }, true);
  }

  recordTop(top: JournaledTop): void {
    this.top = top;
    this.append({ top }, true);
  }

  recordEngineJob(job: EngineJob): void {
    this.engine = job;
    this.append({ engine: job }, true);
  }

  /** Empties the journal: what it recorded is no longer there (the earlier run's resource was removed). */
  async forget(): Promise<void> {
    await this.flush().catch(() => undefined);
    await this.handle?.close().catch(() => undefined);
    this.handle = null;
    this.files.clear();
    this.partials.clear();
    this.top = null;
    this.engine = null;
    await ResumeJournal.remove(this.file);
  }

  /** Resolves once everything recorded so far is on disk; rejects if a write failed. */
  async flush(): Promise<void> {
    this.flushes++;
    try {
      this.stopGathering?.();
      while (this.writing) await this.writing;
    } finally {
      this.flushes--;
    }
    if (this.failure) throw this.failure;
  }

  async close(): Promise<void> {
    await this.flush().catch(() => undefined);
    await this.handle?.close().catch(() => undefined);
    this.handle = null;
  }

  /** `urgent`: a line a resumed run cannot do without (the top it writes into, an engine's job, a kept part), written without gathering */
  private append(record: object, urgent = false): void {
    this.pending.push(`${JSON.stringify(record)}\n`);
    if (urgent) {
      this.urgentWaiting = true;
      this.stopGathering?.();
      this.wakeForUrgent?.();
    }
    this.writing ??= this.drain();
  }

  private async drain(): Promise<void> {
    const syncs: Promise<void>[] = [];
    try {
      while (this.pending.length > 0) {
        const batch = this.pending.join('');
        this.pending = [];
        this.urgentWaiting = false;
        this.handle ??= await open(this.file, 'a', 0o600);
        await this.handle.write(batch);
        const synced = this.handle.datasync();
        synced.catch(() => undefined); // seen by the Promise.all below, which may come only after more batches
        syncs.push(synced);
        // the lines that come meanwhile wait for the next batch (none came: the drain ends),
        // an urgent one only until the next turn
        if (!this.urgentWaiting) {
          const woken = new Promise<void>((resolve) => (this.wakeForUrgent = resolve));
          await Promise.race([Promise.all([synced, this.flushes === 0 ? this.gather() : null]), woken]);
          this.wakeForUrgent = null;
        }
      }
      // a flush resolves once every batch is synced
      await Promise.all(syncs);
    } catch (error) {
      // a journal that cannot be written only costs a resumed run some re-sending
      this.failure ??= error;
      this.pending = [];
    } finally {
      this.writing = null;
    }
  }

  /** Waits BATCH_GATHER_MS, or less when flushed meanwhile. */
  private gather(): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.stopGathering = null;
        resolve();
      };
      const timer = setTimeout(done, BATCH_GATHER_MS);
      this.stopGathering = done;
    });
  }

  private apply(line: string): void {
    if (line === '') return;
    let record: { f?: unknown; i?: unknown; p?: unknown; n?: unknown; c?: unknown; at?: unknown; top?: Partial<JournaledTop>; engine?: Partial<EngineJob> };
    try {
      record = JSON.parse(line) as typeof record;
    } catch {
      return; // torn by a crash
    }
    if (typeof record.f === 'string' && typeof record.i === 'string') {
      this.files.set(record.f, record.i);
      this.partials.delete(record.f);
    }
    const { p, i, n, c, at } = record;
    if (typeof p === 'string' && typeof i === 'string' && isCount(n) && isCount(c) && c <= 0xffffffff) {
      this.files.delete(p);
      this.partials.set(p, { identity: i, kept: { bytes: n, crc32: c, ...(typeof at === 'string' ? { file: at } : {}) } });
    }
    const top = record.top;
    if (top && typeof top.id === 'string' && typeof top.title === 'string' && typeof top.from === 'string') {
      this.top = { id: top.id, title: top.title, from: top.from };
    }
    const engine = record.engine;
    if (engine && typeof engine.engine === 'string' && typeof engine.jobid === 'number' && typeof engine.group === 'string') {
      this.engine = { engine: engine.engine, jobid: engine.jobid, group: engine.group };
    }
  }
}

/** A top-level write's new resource: its id and title, and the source's top folder it was made from. */
export interface JournaledTop {
  id: string;
  title: string;
  from: string;
}

/** Hashes by preference: the strongest the source reports names the bytes. */
const IDENTITY_HASHES = ['sha512', 'sha256', 'sha1', 'md5', 'crc32'];

/**
 * What says a source file is still the one a journal line recorded: its size and a hash the
 * source reports, else its size and modification time. Null (never skipped) when the source
 * knows neither.
 */
export function identityOf(entry: Entry): string | null {
  if (entry.size === null) return null;
  for (const algorithm of IDENTITY_HASHES) {
    const hash = entry.hashes[algorithm];
    if (hash) return `${entry.size}:${algorithm}:${hash.toLowerCase()}`;
  }
  const mtime = entry.mtime?.getTime();
  return mtime !== undefined && !Number.isNaN(mtime) ? `${entry.size}:mtime:${mtime}` : null;
}

/**
 * The hidden name a large file's partial goes by in its destination's folder: the same for the
 * same job and destination on every run, so the job's next run finds it.
 */
export function keptPartialName(jobLabel: string, destination: string): string {
  return `.ferry-resume-${createHash('sha256').update(`${jobLabel}\0${destination}`).digest('hex').slice(0, 32)}.part`;
}

const KEPT_PARTIAL_NAME = /^\.ferry-resume-[0-9a-f]{32}\.part$/;
const isKeptPartialName = (name: string) => KEPT_PARTIAL_NAME.test(name);

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** Where a job's journal lives: beside `<ticket>.json`. */
export function journalFileOf(jobsDir: string, ticket: string): string {
  return path.join(jobsDir, `${ticket}.journal`);
}
