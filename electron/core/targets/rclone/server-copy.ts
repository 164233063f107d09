import { randomBytes } from 'node:crypto';
import { CancelledError, notFound } from '../../errors.js';
import type { FileError } from '../../../../shared/api.js';
import type { CopyFromOptions, EngineJob, TargetContext, WriteOutcome } from '../../target.js';
import type { WritePlan } from '../../plan/write-plan.js';
import { scrubPaths, type RcItem } from './rc-client.js';
import type { RcloneTarget } from './rclone-target.js';

// A transfer between two remotes of one rclone engine, run as rclone's own job: `sync/copy`
// (a folder) or `operations/copyfile` (a file) with `_async` and a stats `_group` of its own,
// so the bytes go remote → remote inside rclone and never through Ferry.
//
// Invariants:
// - Nothing counts as arrived because rclone says so: the destination is listed before and
//   after, and a file is created/updated only when the after-listing shows it with the
//   source's size and every hash both remotes list cheaply (rclone itself also compares a
//   common hash after each transfer, slow ones included). Every other file is a fileError,
//   with rclone's own sentence for it when `core/transferred` still holds one.
// - A cancel is `job/stop`, and the promise settles only once `job/status` says the job has
//   finished: nothing is still writing when Ferry says "cancelled".
// - Duplicates as everywhere in Ferry: `ignore` never touches an existing file
//   (IgnoreExisting); `update` replaces what differs, by a common hash when there is one
//   (CheckSum), else by size and modification time (rclone's default).

/**
 * How long Ferry may take to notice that rclone's job has finished: 2% of the copy's time so
 * far, at least 10 ms and at most 1 s. rclone has no call that waits for a job, and a fixed
 * interval adds up to a whole one to every copy, a large share of a short one; `job/status` is
 * one small loopback call, so a short copy is asked often, a long one rarely.
 */
const POLL_SHARE = 0.02;
const SHORTEST_POLL_MS = 10;
const LONGEST_POLL_MS = 1000;
/** progress (`core/stats`) is read at most this often while the job runs */
const PROGRESS_MS = 250;
/** how long a stopped job may take to say it has finished */
const STOP_WAIT_MS = 30_000;

interface JobStatus {
  finished: boolean;
  success: boolean;
  error: string;
}

interface GroupStats {
  bytes?: number;
  transfers?: number;
  checks?: number;
  errors?: number;
  lastError?: string;
}

interface Transferred {
  name: string;
  error?: string;
}

export async function serverSideCopy(
  source: RcloneTarget,
  destination: RcloneTarget,
  sourcePath: string,
  /** the destination folder, or null for a new top-level resource */
  base: string | null,
  ctx: TargetContext,
  options: CopyFromOptions,
): Promise<WriteOutcome> {
  const signal = options.signal;
  const root = await source.stat(sourcePath, { signal }, []);
  if (!root) throw notFound(`Nothing is at '${sourcePath}' on the rclone remote '${source.remoteName}' any more; refresh the listing.`);
  if (base !== null && base !== '') await destination.requireFolder(base, ctx);
  const folder = base ?? '';
  // a resumed top-level copy goes on in the folder its first run made (the job's own: nothing in it was there before)
  const resumedTop = base === null ? (options.resume?.top ?? null) : null;
  const name = resumedTop ? resumedTop.title : base === null ? await destination.distinctName(folder, root.Name, signal) : root.Name;
  const destinationPath = joinPath(folder, name);
  if (base === null && !resumedTop) options.onNewResource?.({ id: idOfPath(destinationPath), title: name });

  // hashes both remotes list without reading whole objects: compared after the copy
  const common = source.hashNames.names.filter((hash) => destination.hashNames.names.includes(hash));
  const listed = source.hashNames.slow || destination.hashNames.slow ? [] : common;
  // the job's plan is the source's listing already (read() made it): not listed a second time
  const sources = !root.IsDir ? [{ ...root, Path: '' }] : options.plan ? itemsBelow(options.plan, root.Name) : await source.tree(sourcePath, signal, listed);
  const before = resumedTop ? new Map<string, RcItem>() : await itemsAt(destination, destinationPath, root.IsDir, signal, listed);
  const rootExisted = !resumedTop && root.IsDir && (before.size > 0 || (await destination.stat(destinationPath, { signal }, [])) !== null);
  const files = sources.filter((item) => !item.IsDir);
  const totalBytes = files.reduce((sum, item) => sum + Math.max(0, item.Size), 0);
  options.onProgress({ files: 0, bytes: 0 }, { files: files.length, bytes: totalBytes });

  const client = destination.rcClient;
  const earlier = await earlierJobToFollow(destination, options.resume?.engineJob ?? null);
  const group = earlier?.group ?? `ferry-${randomBytes(8).toString('hex')}`;
  let jobid: number;
  if (earlier) {
    jobid = earlier.jobid;
  } else {
    const config = { IgnoreExisting: options.duplicateAction === 'ignore', CheckSum: options.duplicateAction === 'update' && common.length > 0 };
    // `_async` answers at once; a cancel meanwhile is seen by the loop below, which stops the
    // job: aborting this request could leave a job running that Ferry never heard of. Run
    // again after a crash, rclone's copy skips what already arrived (same size and hash).
    const startSignal = AbortSignal.timeout(60_000);
    const started = root.IsDir
      ? await destination.rc<{ jobid: number }>(
          'sync/copy',
          { srcFs: source.fsOf(sourcePath), dstFs: destination.fsOf(destinationPath), createEmptySrcDirs: true, _async: true, _group: group, _config: config },
          `copy '${sourcePath}' to '${destinationPath}'`,
          startSignal,
        )
      : await destination.rc<{ jobid: number }>(
          'operations/copyfile',
          { srcFs: source.fsOf(''), srcRemote: sourcePath, dstFs: destination.fsOf(''), dstRemote: destinationPath, _async: true, _group: group, _config: config },
          `copy '${sourcePath}' to '${destinationPath}'`,
          startSignal,
        );
    jobid = started.jobid;
    options.onEngineJob?.({ engine: client.endpoint.url, jobid, group });
  }
  try {
    let status: JobStatus;
    const polledFrom = Date.now();
    let progressAt = polledFrom;
    for (;;) {
      if (signal.aborted) {
        await stopJob(destination, jobid);
        throw new CancelledError();
      }
      status = await client.call<JobStatus>('job/status', { jobid });
      if (status.finished) break;
      const now = Date.now();
      if (now - progressAt >= PROGRESS_MS) {
        progressAt = now;
        const stats = await client.call<GroupStats>('core/stats', { group });
        options.onProgress(
          { files: Math.min(files.length, (stats.transfers ?? 0) + (stats.checks ?? 0)), bytes: Math.min(totalBytes, stats.bytes ?? 0) },
          { files: files.length, bytes: totalBytes },
        );
      }
      await sleep(Math.min(LONGEST_POLL_MS, Math.max(SHORTEST_POLL_MS, (now - polledFrom) * POLL_SHARE)), signal);
    }
    const after = await itemsAt(destination, destinationPath, root.IsDir, signal, listed);
    const rootMade = root.IsDir && !rootExisted && (after.size > 0 || (await destination.stat(destinationPath, { signal }, [])) !== null);
    const outcome = judge({ sources, before, after, name, rootMade, listed, ignoreExisting: options.duplicateAction === 'ignore' });
    // rclone's own words, asked for only when something went wrong (read after job/status said
    // finished: they include everything the job did): the job's error, else its stats' last
    // one; each failed file's from the last 100 finished transfers (rclone keeps no more)
    const jobError = status.success ? '' : status.error || (await client.call<GroupStats>('core/stats', { group })).lastError || '';
    const { transferred } = outcome.failed.length === 0 ? { transferred: [] } : await client.call<{ transferred?: Transferred[] }>('core/transferred', { group });
    const said = new Map((transferred ?? []).filter((item) => item.error).map((item) => [item.name, item.error!]));
    for (const failed of outcome.failed) {
      const why = said.get(root.IsDir ? failed.path : sourcePath) ?? jobError;
      outcome.fileErrors.push({
        path: failed.report,
        error: `Not copied: ${why ? `rclone said: ${scrubBoth(source, destination, why)}` : failed.why}`,
      });
    }
    // rclone failed but every file checked out (a folder it could not make, say): still not a success
    if (jobError && outcome.fileErrors.length === 0) outcome.fileErrors.push({ path: name, error: `rclone's copy did not finish cleanly: ${scrubBoth(source, destination, jobError)}` });
    options.onProgress({ files: files.length, bytes: totalBytes }, { files: files.length, bytes: totalBytes });
    return {
      created: outcome.created,
      updated: outcome.updated,
      ignored: outcome.ignored,
      fileErrors: outcome.fileErrors,
      ...(base === null ? { newResource: { id: idOfPath(destinationPath), title: name } } : {}),
    };
  } finally {
    // the group's counters live in rcd until deleted
    await client.call('core/stats-delete', { group }, AbortSignal.timeout(10_000)).catch(() => undefined);
  }
}

/**
 * The engine job an earlier run of this Ferry job started (a remote rcd outlives a crash of
 * Ferry), when the same engine still knows it by its number and stats group and it is
 * worth following: still running, or finished without an error while Ferry was down (its
 * result is then checked by the listings as any copy's is; copying again would only repeat its
 * checks). A job that failed, or one the engine no longer knows (rcd restarted, or its finished
 * jobs expired: `--rc-job-expire-duration`), is copied again: rclone skips what already arrived.
 */
async function earlierJobToFollow(target: RcloneTarget, job: EngineJob | null): Promise<EngineJob | null> {
  if (!job || job.engine !== target.rcClient.endpoint.url) return null;
  const status = await target.rcClient.call<JobStatus & { group?: string }>('job/status', { jobid: job.jobid }, AbortSignal.timeout(10_000)).catch(() => null);
  return status && status.group === job.group && (!status.finished || status.success) ? job : null;
}

/** `job/stop`, then wait until rclone says the job has finished (its transfers really ended). */
async function stopJob(target: RcloneTarget, jobid: number): Promise<void> {
  const client = target.rcClient;
  const deadline = Date.now() + STOP_WAIT_MS;
  await client.call('job/stop', { jobid }, AbortSignal.timeout(10_000)).catch(() => undefined);
  while (Date.now() < deadline) {
    const status = await client.call<JobStatus>('job/status', { jobid }, AbortSignal.timeout(10_000)).catch(() => null);
    if (!status || status.finished) return;
    await sleep(50);
  }
}

/**
 * The planned entries below the copied folder `rootName` as a listing of it would give them
 * (Path relative to it; the sizes and hashes read() listed).
 */
function itemsBelow(plan: WritePlan, rootName: string): RcItem[] {
  const prefix = `${rootName}/`;
  return plan.entries
    .filter(({ entry }) => entry.path.startsWith(prefix))
    .map(({ entry }) => ({
      Path: entry.path.slice(prefix.length),
      Name: entry.path.slice(entry.path.lastIndexOf('/') + 1),
      Size: entry.size ?? -1,
      ModTime: entry.mtime?.toISOString() ?? '',
      IsDir: entry.kind === 'folder',
      Hashes: entry.hashes,
    }));
}

/** What is at `path` on `target`: its tree by Path relative to it (a folder), or the one file under '' . */
async function itemsAt(target: RcloneTarget, path: string, isDir: boolean, signal: AbortSignal, hashes: readonly string[]): Promise<Map<string, RcItem>> {
  if (isDir) return new Map((await target.tree(path, signal, hashes)).map((item) => [item.Path, item]));
  const item = await target.stat(path, { signal }, hashes);
  return new Map(item ? [['', item]] : []);
}

interface Judged {
  created: string[];
  updated: string[];
  ignored: string[];
  fileErrors: FileError[];
  /** source files the destination does not show as they are at the source */
  failed: { path: string; report: string; why: string }[];
}

/**
 * The outcome, from the listings alone (rclone's word is not taken). Paths in the report are
 * relative to the destination folder and start with the copy's name, as write() reports them.
 */
export function judge(input: {
  sources: RcItem[];
  before: Map<string, RcItem>;
  after: Map<string, RcItem>;
  name: string;
  /** the copy made the destination folder (it was not there before, it is now) */
  rootMade: boolean;
  listed: readonly string[];
  ignoreExisting: boolean;
}): Judged {
  const judged: Judged = { created: [], updated: [], ignored: [], fileErrors: [], failed: [] };
  const reported = (relative: string) => (relative === '' ? input.name : `${input.name}/${relative}`);
  if (input.rootMade) judged.created.push(input.name);
  const ordered = [...input.sources].sort((a, b) => (a.Path < b.Path ? -1 : a.Path > b.Path ? 1 : 0));
  for (const item of ordered) {
    const was = input.before.get(item.Path);
    const now = input.after.get(item.Path);
    const report = reported(item.Path);
    if (item.IsDir) {
      if (!was && now?.IsDir) judged.created.push(report);
      continue;
    }
    // `ignore`: rclone was told to leave it alone; reported so only if it did
    if (was && !was.IsDir && input.ignoreExisting && now && !now.IsDir && !changed(was, now, input.listed)) {
      judged.ignored.push(report);
      continue;
    }
    const why = mismatch(item, now, input.listed);
    if (why) {
      judged.failed.push({ path: item.Path, report, why });
      continue;
    }
    if (!was) judged.created.push(report);
    else if (changed(was, now!, input.listed)) judged.updated.push(report);
    else judged.ignored.push(report);
  }
  return judged;
}

/** Why `now` is not the source's file, or null when it is. */
function mismatch(source: RcItem, now: RcItem | undefined, hashes: readonly string[]): string | null {
  if (!now) return 'the destination does not show the file after rclone\'s copy.';
  if (now.IsDir) return 'a folder of that name is at the destination.';
  if (source.Size >= 0 && now.Size >= 0 && source.Size !== now.Size) return `the destination shows ${now.Size} bytes of the source's ${source.Size}.`;
  for (const hash of hashes) {
    const ours = source.Hashes?.[hash];
    const theirs = now.Hashes?.[hash];
    if (ours && theirs && ours.toLowerCase() !== theirs.toLowerCase()) return `the destination's ${hash} ${theirs} differs from the source's ${ours}.`;
  }
  return null;
}

/** An existing file the copy replaced: other size or hash, or, with no hash listed, another modification time. */
function changed(was: RcItem, now: RcItem, hashes: readonly string[]): boolean {
  if (was.Size !== now.Size) return true;
  const compared = hashes.filter((hash) => was.Hashes?.[hash] && now.Hashes?.[hash]);
  if (compared.length > 0) return compared.some((hash) => was.Hashes![hash]!.toLowerCase() !== now.Hashes![hash]!.toLowerCase());
  return was.ModTime !== now.ModTime;
}

/** rclone's text with no path of this machine in it (either remote may be a local folder) */
function scrubBoth(source: RcloneTarget, destination: RcloneTarget, text: string): string {
  return scrubPaths(text, [...source.rootShown, ...destination.rootShown]);
}

function joinPath(folder: string, name: string): string {
  return folder === '' ? name : `${folder}/${name}`;
}

/** as rclone-target.ts makes ids (kept here to avoid a value import cycle) */
function idOfPath(remotePath: string): string {
  return Buffer.from(remotePath, 'utf8').toString('base64url');
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
  });
}
