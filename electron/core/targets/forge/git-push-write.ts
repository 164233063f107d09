import { createHash } from 'node:crypto';
import { FerryError, conflict, throwIfAborted, tooLarge } from '../../errors.js';
import type { Entry, WriteOptions, WriteOutcome } from '../../target.js';
import { ZERO_OID, commitBody, objectId, type Person } from './git-objects.js';
import type { GitHttp } from './git-http.js';
import type { PackObject } from './pack-stream.js';
import { lfsAttributeLine, lfsPointer, lfsUpload, sha256Of, type LfsObject } from './lfs-upload.js';
import { sleep } from './rate-limit.js';
import { pushPack, receivePackRefs, type Advertisement, type PushResult } from './receive-pack.js';
import { buildTrees, type FlatItem } from './tree-builder.js';
import { filesToWrite, reportEmptyFolders, type ExistingItem } from './write-plan.js';

/** What a git host's writer needs to know of the repository and the host's rules. */
export interface GitWriteTarget {
  http: GitHttp;
  /** the branch written to, e.g. "main" */
  branch: string;
  /** the repository as a person names it, e.g. "owner/name" */
  where: string;
  /** every entry of the commit's tree, flat (blobs and trees), paths from the root */
  listTree(commitOid: string): Promise<FlatItem[]>;
  /** the host refuses larger files (GitHub: 100 MB); null: no per-file limit */
  maxFileBytes: number | null;
  /** the host refuses a push larger than this (GitLab.com: 5 GB); undefined: no limit known */
  maxPushBytes?: number;
  /** a warning (not a refusal) above this size */
  warnFileBytes: number | null;
  author: Person;
  /** turns the host's refusal of the ref update into a sentence, when the head did not move */
  refused(reason: string): Error;
  /**
   * Set where files over `maxFileBytes` may go through Git LFS (lfs-upload.ts): the host's LFS
   * limit per file, and how to read the current .gitattributes to extend it.
   */
  lfs?: { maxFileBytes: number; readBlob(oid: string): Promise<Buffer> };
  /**
   * Set for a repository created moments ago (by this write, or by the paused first run of a
   * job resumed at once): its git endpoint may answer 404 for a few seconds after the API made
   * it (hail-is/hail#4517, brucemcpherson/gasGit#2, cli/cli#7761), so the first discovery is
   * asked again before the 404 counts.
   */
  justCreated?: boolean;
}

/** how often someone else's push may move the branch before Ferry gives up */
const ATTEMPTS = 3;
/** how often a push that failed on the way is sent again */
const TRANSIENT_RETRIES = 4;

interface Existing extends ExistingItem {
  oid: string;
  mode: string;
}

/**
 * A write to any git host as ONE commit in ONE `git push` (see receive-pack.ts): the head's
 * tree is read, every file is hashed (a first read), the changed files' blobs, the rebuilt
 * trees and one commit go out in one streamed packfile (a second read), and the branch moves
 * only if it still points at the head the commit was built on. Nothing becomes visible unless
 * all of it does.
 *
 * - Someone else pushed in between: the write is planned again on their commit (their files
 *   count as existing ones), up to `ATTEMPTS` times, then fails with a sentence; it never
 *   overwrites their commit.
 * - A push failed on the way (429/5xx, a broken connection, a timeout): the branch is asked and
 *   the push sent again, up to `TRANSIENT_RETRIES` times. It is conditional on the old head, so
 *   it lands at most once, and a branch at Ferry's commit means it landed though the answer
 *   was lost.
 */
export async function pushEntries(
  target: GitWriteTarget,
  entries: Entry[],
  toRepoPath: (path: string) => string,
  options: WriteOptions,
  base: WriteOutcome,
  landing: Landing = { top: null },
): Promise<WriteOutcome> {
  const { outcome, pushed } = await pushCommit(target, entries, toRepoPath, options, base);
  tellJob(outcome, pushed, options, landing);
  return outcome;
}

/** What the job is told once a write's commit is in (tellJob). */
export interface Landing {
  /** a top-level write: the source's top folder, which the entries' paths were made relative to */
  top: string | null;
  /** a resource that exists only once the commit lands (plain git's new top folder) */
  createdByPush?: { id: string; title: string };
}

/**
 * The job hears of a file only once the host holds it: a push lands whole or not at all, so
 * before it no file is confirmed and after it every file of the outcome is (created, updated,
 * or found there already). Told in the paths the job handed over (the top folder put back), so
 * a job that stops between the push and its end resumes leaving them out (jobs/resume-journal.ts).
 * A resource the push itself made is told first, so the resumed run goes on in it instead of
 * making "Name-2".
 */
function tellJob(outcome: WriteOutcome, pushed: boolean, options: WriteOptions, landing: Landing): void {
  if (pushed && landing.createdByPush) options.onNewResource?.(landing.createdByPush);
  if (!options.onFileWritten) return;
  const asHanded = (path: string) => (landing.top === null ? path : `${landing.top}/${path}`);
  for (const path of [...outcome.created, ...outcome.updated, ...outcome.ignored]) options.onFileWritten(asHanded(path));
}

/** The push itself; `pushed`: a commit of Ferry's is now the branch's head. */
async function pushCommit(target: GitWriteTarget, entries: Entry[], toRepoPath: (path: string) => string, options: WriteOptions, base: WriteOutcome): Promise<{ outcome: WriteOutcome; pushed: boolean }> {
  const hashed = new Map<Entry, { oid: string; size: number }>();
  /** LFS objects already uploaded (by sha256): a re-planned push does not send them again */
  const lfsDone = new Map<Entry, { oid: string; size: number }>();
  let moved = 0;
  let failed = 0;
  for (let first = true; ; first = false) {
    throwIfAborted(options.signal);
    const advertised = first && target.justCreated ? await discoverNewRepository(target.http, options.signal) : await receivePackRefs(target.http);
    const ref = `refs/heads/${target.branch}`;
    const head = advertised.refs.get(ref) ?? null;
    const items = head ? await target.listTree(head) : [];
    const existing = new Map<string, Existing>(items.map((i) => [i.path, { type: i.type, oid: i.oid, mode: i.mode }]));
    const outcome: WriteOutcome = { ...base, created: [], updated: [], ignored: [], fileErrors: [...base.fileErrors] };
    const context = { existing, toRepoPath, where: target.where, clashNoun: 'folder or submodule' };

    const changes = new Map<string, { mode: string; oid: string }>();
    const blobs = new Map<string, PackObject>();
    const large: { entry: Entry; repoPath: string; current: Existing | undefined }[] = [];
    for (const { entry, repoPath, current } of filesToWrite(entries, context, options, outcome)) {
      if (tooBig(entry.size, target)) {
        if (target.lfs) large.push({ entry, repoPath, current });
        else outcome.fileErrors.push({ path: entry.path, error: tooBigMessage(entry.size!, target) });
        continue;
      }
      let blob = hashed.get(entry);
      if (!blob) {
        blob = await blobIdOf(entry, options.signal);
        hashed.set(entry, blob);
      }
      if (tooBig(blob.size, target)) {
        if (target.lfs) large.push({ entry, repoPath, current });
        else outcome.fileErrors.push({ path: entry.path, error: tooBigMessage(blob.size, target) });
        continue;
      }
      if (current?.oid === blob.oid) {
        outcome.ignored.push(entry.path);
        continue;
      }
      if (target.warnFileBytes !== null && blob.size > target.warnFileBytes) {
        outcome.fileErrors.push({ path: entry.path, error: `Warning only: "${entry.path}" (${mb(blob.size)} MB) was uploaded, but ${target.http.endpoint.service} recommends keeping files under ${mb(target.warnFileBytes)} MB.` });
      }
      changes.set(repoPath, { mode: current?.mode === '100755' ? '100755' : '100644', oid: blob.oid });
      // two files with the same bytes are one git object, sent once
      blobs.set(blob.oid, { type: 'blob', size: blob.size, oid: blob.oid, body: () => entry.open(), label: entry.path });
      (current ? outcome.updated : outcome.created).push(entry.path);
    }
    if (large.length && target.lfs) await throughLfs(target, target.lfs, large, existing, ref, lfsDone, changes, blobs, outcome, options.signal);
    reportEmptyFolders(entries, context, target.http.endpoint.service, outcome);
    if (changes.size === 0) return { outcome, pushed: false };
    throwIfAborted(options.signal);
    const total = [...blobs.values()].reduce((n, b) => n + b.size, 0);
    if (target.maxPushBytes !== undefined && total > target.maxPushBytes) {
      throw tooLarge(`These files come to ${mb(total)} MB, more than ${target.http.endpoint.service} accepts in one push (${mb(target.maxPushBytes)} MB); nothing was uploaded. Upload the folder in parts.`);
    }

    const { root, trees } = buildTrees(items, changes);
    const commit = commitBody(root, head ? [head] : [], `Ferry: ${options.jobLabel}`, target.author, new Date());
    const commitOid = objectId('commit', commit);
    const objects: PackObject[] = [
      { type: 'commit', size: commit.length, oid: commitOid, body: commit, label: 'the commit' },
      ...trees.map((t): PackObject => ({ type: 'tree', size: t.body.length, oid: t.oid, body: t.body, label: 'a folder' })),
      ...blobs.values(),
    ];
    let result: PushResult | null = null;
    let failure: FerryError | null = null;
    try {
      result = await pushPack(target.http, advertised, { ref, oldOid: head ?? ZERO_OID, newOid: commitOid }, objects);
    } catch (error) {
      if (!isTransient(error)) throw error;
      failure = error;
    }
    if (result?.ok) return { outcome, pushed: true };
    if (failure) {
      if (++failed > TRANSIENT_RETRIES) {
        // the last answer was lost too: say what happened only once the branch says it
        const landed = await receivePackRefs(target.http).then((a) => a.refs.get(ref) === commitOid, () => null);
        if (landed) return { outcome, pushed: true };
        throw new FerryError(failure.status, failure.code, `${failure.message} ${landed === false ? 'Nothing was committed.' : 'Ferry could not check whether the upload landed; look at the repository before uploading again.'}`, failure.retryAfter);
      }
      await sleep(failure.retryAfter ? Math.min(failure.retryAfter, 60) * 1000 : 250 * 2 ** failed, options.signal);
    }
    const now = (await receivePackRefs(target.http)).refs.get(ref) ?? null;
    if (now === commitOid) return { outcome, pushed: true };
    if (result && now === head) throw target.refused(result.reason);
    if (result && ++moved >= ATTEMPTS) {
      throw conflict(`${target.where} kept changing while Ferry was uploading (someone else pushed ${ATTEMPTS} times); nothing was committed. Upload again when the pushes have stopped.`);
    }
  }
}

/** The ref advertisement of a repository just created: a 404 is asked again, 5 times over about 15 s. */
async function discoverNewRepository(http: GitHttp, signal: AbortSignal): Promise<Advertisement> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await receivePackRefs(http);
    } catch (error) {
      if (!(error instanceof FerryError) || error.status !== 404 || attempt >= 5) throw error;
      await sleep(500 * 2 ** attempt, signal);
    }
  }
}

/** A push that failed on the way (busy, broken, timed out, a 5xx) rather than being refused. */
function isTransient(error: unknown): error is FerryError {
  return error instanceof FerryError && [429, 502, 503, 504].includes(error.status) && error.code !== 'conflict';
}

/**
 * Files over the host's limit, through Git LFS: each one's sha256, one batch request, the bytes
 * to the storage the server names, then a pointer file in the tree and a .gitattributes line
 * so git clients fetch the content. A repository without LFS refuses them with a sentence,
 * before anything is pushed; the other files still go.
 */
async function throughLfs(
  target: GitWriteTarget,
  lfs: NonNullable<GitWriteTarget['lfs']>,
  large: { entry: Entry; repoPath: string; current: Existing | undefined }[],
  existing: Map<string, Existing>,
  ref: string,
  done: Map<Entry, { oid: string; size: number }>,
  changes: Map<string, { mode: string; oid: string }>,
  blobs: Map<string, PackObject>,
  outcome: WriteOutcome,
  signal: AbortSignal,
): Promise<void> {
  const service = target.http.endpoint.service;
  const pending: LfsObject[] = [];
  const planned: { entry: Entry; repoPath: string; current: Existing | undefined; pointer: Buffer; pointerOid: string }[] = [];
  for (const item of large) {
    throwIfAborted(signal);
    const content = done.get(item.entry) ?? (await sha256Of(item.entry));
    if (content.size > lfs.maxFileBytes) {
      outcome.fileErrors.push({ path: item.entry.path, error: `This file (${mb(content.size)} MB) is larger than ${service}'s Git LFS limit of ${mb(lfs.maxFileBytes)} MB per file, so it was not uploaded; the other files were.` });
      continue;
    }
    const pointer = lfsPointer(content.oid, content.size);
    const pointerOid = objectId('blob', pointer);
    if (item.current?.oid === pointerOid) {
      outcome.ignored.push(item.entry.path);
      continue;
    }
    if (!done.has(item.entry)) pending.push({ ...content, entry: item.entry });
    done.set(item.entry, content);
    planned.push({ ...item, pointer, pointerOid });
  }
  if (pending.length && !(await lfsUpload(target.http, ref, pending, signal))) {
    for (const item of planned) {
      done.delete(item.entry);
      outcome.fileErrors.push({ path: item.entry.path, error: `This file is larger than ${service}'s limit of ${mb(target.maxFileBytes ?? 0)} MB per file and ${target.where} has no Git LFS, so it was not uploaded; the other files were. Turn on Git LFS for the repository or store the file with another target.` });
    }
    return;
  }
  if (!planned.length) return;
  const attributes = existing.get('.gitattributes');
  let text = attributes?.type === 'blob' ? (await lfs.readBlob(attributes.oid)).toString('utf8') : '';
  for (const item of planned) {
    changes.set(item.repoPath, { mode: '100644', oid: item.pointerOid });
    blobs.set(item.pointerOid, { type: 'blob', size: item.pointer.length, oid: item.pointerOid, body: item.pointer, label: item.entry.path });
    (item.current ? outcome.updated : outcome.created).push(item.entry.path);
    const line = lfsAttributeLine(item.repoPath);
    if (!text.split('\n').includes(line)) text = `${text}${text && !text.endsWith('\n') ? '\n' : ''}${line}\n`;
  }
  const body = Buffer.from(text, 'utf8');
  const oid = objectId('blob', body);
  if (oid !== attributes?.oid) {
    changes.set('.gitattributes', { mode: '100644', oid });
    blobs.set(oid, { type: 'blob', size: body.length, oid, body, label: '.gitattributes' });
  }
}

/** The git blob id and size of a file, read once; a file of unknown size is measured first. */
async function blobIdOf(entry: Entry, signal: AbortSignal): Promise<{ oid: string; size: number }> {
  let size = entry.size;
  if (size === null) {
    size = 0;
    for await (const chunk of await entry.open()) size += (chunk as Buffer).length;
  }
  const hash = createHash('sha1').update(`blob ${size}\0`);
  let seen = 0;
  for await (const chunk of await entry.open()) {
    throwIfAborted(signal);
    seen += (chunk as Buffer).length;
    hash.update(chunk as Buffer);
  }
  if (seen !== size) {
    throw conflict(`"${entry.path}" was announced as ${size} bytes but has ${seen}; it may be changing. Nothing was pushed.`);
  }
  return { oid: hash.digest('hex'), size };
}

const tooBig = (size: number | null, target: GitWriteTarget) => size !== null && target.maxFileBytes !== null && size > target.maxFileBytes;
const mb = (bytes: number) => Math.round(bytes / (1024 * 1024));

function tooBigMessage(size: number, target: GitWriteTarget): string {
  return `This file (${mb(size)} MB) is larger than ${target.http.endpoint.service}'s limit of ${mb(target.maxFileBytes!)} MB per file, so it was not uploaded; the other files were. Ferry does not upload through Git LFS yet: store it with another target.`;
}
