import { access } from 'node:fs/promises';
import type { DuplicateFileAction, FolderMode, Job, JobReport } from '../../../shared/api.js';
import { badRequest, FerryError, isFerryError, notSupported } from '../errors.js';
import { tokenAccount, type SecretStore } from '../keychain/port.js';
import type { Limits } from '../limits.js';
import type { TargetRegistry } from '../registry.js';
import type { DescriptiveMetadata, Entry, ReadResult, StoredRecord, Target, TargetContext } from '../target.js';
import { planWrite } from '../plan/write-plan.js';
import { openUploadZip } from '../bag/upload-reader.js';
import type { FolderLayout } from '../provenance/format.js';
import { layoutNote, packWrite } from '../remote/packed-folders.js';
import { completeProvenance, provenanceOn, startTransferProvenance, startUploadProvenance } from '../provenance/job-hook.js';
import { metadataForTransfer, metadataForUpload } from '../metadata/for-new-resource.js';
import { StoppedWithReport } from './outcome.js';
import type { JournaledTop } from './resume-journal.js';
import { capabilitiesOf } from '../capabilities.js';
import { emptyReport, type JobExecutionContext, type JobService } from './types.js';
import { transferParams, uploadParams, type TransferParams } from './job-params.js';
import { plannedWrite, planRequest, reportOf, watchedWithLeftOut, writeOptionsOf, writeWatched, type WriteParams } from './watched-write.js';

export interface TransferExecutorDeps {
  targets: TargetRegistry;
  secrets: SecretStore;
  limits: Limits;
  accessKey: string;
}

/**
 * The two job kinds that move entries into a target: `upload` (a spooled ZIP → the
 * destination) and `transfer` (one target's resource → another's, streaming, no ZIP).
 * Tokens by role: `destination`, and `source` for transfers.
 */
export function registerTransferExecutors(jobs: JobService, deps: TransferExecutorDeps): void {
  jobs.register('upload', (ctx) => runUpload(ctx, deps));
  // an upload's spool is gone once it has ended, so only a transfer can be resumed afterwards
  jobs.register('transfer', (ctx) => runTransfer(ctx, deps), retryTransfer, true);
}

async function runUpload(ctx: JobExecutionContext, deps: TransferExecutorDeps): Promise<JobReport> {
  // The spool is the job's owned file: the job service removes it once the job's end is on
  // disk, never before (a crash in between would leave a resumed job without its ZIP).
  const params = uploadParams(ctx.params);
  const destination = destinationOf(ctx, deps);
  const token = await tokenFor(ctx, deps, 'destination', destination);
  // A target that stages its writes lets the archive's bytes be checked (a bag's against its
  // manifests, a plain ZIP's against their CRC-32s) in the pass that writes them, and nothing
  // is put in place unless all match: one inflate of every byte, instead of a whole checking
  // pass before the write (which a target that cannot stage gets: openUploadZip 'check').
  const staged = capabilitiesOf(destination).stagedWrites === true;
  const archive = await openSpool(params.spoolPath, deps.limits, staged);
  try {
    // the entries judged whole (plan/write-plan.ts) before the destination is called at all
    const folders = await inFolderMode(ctx, destination, archive.entries(), params, { target: 'zip', resourceId: 'upload' });
    const write = await plannedWrite(ctx, destination, token, folders.entries, params);
    ctx.progress({ files_done: 0, files_total: archive.fileCount, bytes_done: 0, bytes_total: archive.totalBytes });
    // provenance (provenance/job-hook.ts): watch the entries, then record what was stored
    const common = { params: ctx.params, ticket: ctx.job.ticket_number, destination, containerId: params.containerId, folders: folders.layout };
    const provenance = await startUploadProvenance({ ...common, kind: archive.kind, topLevel: archive.topLevel, carriedRecord: archive.carriedRecord });
    // a new top-level resource takes what the ZIP or bag says of itself (ro-crate-metadata.json, CITATION.cff)
    const described = await metadataForUpload(archive, destination, params.containerId);
    const entries = watchedWithLeftOut(provenance, write);
    const top = params.containerId === null ? await madeByEarlierRun(ctx, destination, token) : null;
    const storedRecords = new Map<string, StoredRecord>();
    const written = top
      ? await writeIntoMadeTop(ctx, destination, token, entries, { ...params, storedRecords }, top)
      : await writeWatched(ctx, destination, token, write, entries, { ...params, metadata: described.metadata, storedRecords }, staged);
    const report = withNotes(written, [...described.notes, ...titleNotes(described.metadata, written), ...folderNotes(ctx, destination, folders.layout)]);
    return await completeProvenance(provenance, { token, signal: ctx.signal }, report, storedRecords);
  } finally {
    await archive.close();
  }
}

/** The spooled ZIP, with a sentence a person can act on when it has gone missing. */
async function openSpool(spoolPath: string, limits: Limits, deferBagPayload: boolean) {
  try {
    await access(spoolPath);
  } catch {
    throw new FerryError(404, 'not_found', 'The uploaded ZIP for this job is no longer on disk; upload it again.');
  }
  return openUploadZip(spoolPath, limits, { payload: deferBagPayload ? 'defer' : 'check' });
}

async function runTransfer(ctx: JobExecutionContext, deps: TransferExecutorDeps): Promise<JobReport> {
  const params = transferParams(ctx.params);
  const destination = destinationOf(ctx, deps);
  const source = deps.targets.get(params.source.target);
  if (!source.info.supported_actions.resource_download) {
    throw notSupported(`${source.info.readable_name} does not let Ferry read resources, so nothing can be transferred from it.`);
  }
  const sourceToken = await tokenFor(ctx, deps, 'source', source);
  const destinationToken = await tokenFor(ctx, deps, 'destination', destination);
  const ids = params.source.resourceIds;
  if (ids && ids.length > 1) {
    if (params.containerId === null) throw badRequest('Several resources can only be copied into a folder; choose a folder as the destination.');
    ctx.progress({ files_done: 0, files_total: null, bytes_done: 0, bytes_total: null });
    const selection = await inFolderMode(ctx, destination, readEach(source, { token: sourceToken, signal: ctx.signal }, ids), params, originOf(params));
    const write = await plannedWrite(ctx, destination, destinationToken, params.only ? onlyThese(selection.entries, params.only) : selection.entries, params);
    // a selection writes no provenance record, so nothing will say how its folders were kept
    return withNotes(await writeWatched(ctx, destination, destinationToken, write, write.plan, params), folderNotes(ctx, destination, selection.layout, false));
  }
  const read = await source.read({ token: sourceToken, signal: ctx.signal }, params.source.resourceId);
  ctx.progress({ files_done: 0, files_total: null, bytes_done: 0, bytes_total: null });
  if (params.only) return retryFailed(ctx, destination, destinationToken, read, params, params.only);
  const folders = await inFolderMode(ctx, destination, read.entries, params, originOf(params));
  // judged whole before anything is written, also when the destination copies by itself
  const write = await plannedWrite(ctx, destination, destinationToken, folders.entries, params);
  // A destination that copies from this source itself (Target.copyFrom) takes a whole first
  // run, unless the duplicates left files out or renamed them: it copies the whole resource.
  const whole = write.ignored.length === 0 && write.renamedFrom.size === 0;
  const direct = !whole ? null : destination.copyFrom?.({ token: destinationToken, signal: ctx.signal }, source, params.source.resourceId, params.containerId, {
    ...writeOptionsOf(ctx, write.writeAction),
    plan: write.plan,
    sourceToken,
    onProgress: (done, total) => ctx.progress({ files_done: done.files, bytes_done: done.bytes, files_total: total.files, bytes_total: total.bytes }),
    // an earlier run's copy: go on in the resource it made, and wait for its engine job while that still runs
    resume: { top: params.containerId === null ? await madeByEarlierRun(ctx, destination, destinationToken) : null, engineJob: ctx.journal.engineJob },
    onNewResource: (resource) => ctx.journal.recordTop({ ...resource, from: read.title }),
    onEngineJob: (job) => ctx.journal.recordEngineJob(job),
  });
  if (direct) {
    try {
      // the bytes passed outside Ferry: copyFrom counts a file only once the destination's
      // size and hashes match the source's (Target.copyFrom), its own verify after write
      return reportOf(await direct, [], params.containerId === null ? read.title : null, { checks: [], failed: [] });
    } catch (error) {
      // stopped inside the copy: what it had copied is not known here
      throw new StoppedWithReport(error, { ...emptyReport(), unconfirmed: [read.title] });
    }
  }
  // provenance (provenance/job-hook.ts): watch the entries, then record what was stored
  const sourceCtx = { token: sourceToken, signal: ctx.signal };
  const common = { params: ctx.params, ticket: ctx.job.ticket_number, destination, containerId: params.containerId, folders: folders.layout };
  const provenance = await startTransferProvenance({ ...common, source, sourceCtx, sourceId: params.source.resourceId, title: read.title });
  // descriptive metadata (title, creators …) for a new top-level resource, and what could not be carried
  const described = await metadataForTransfer(source, sourceCtx, params.source.resourceId, destination, params.containerId, params.metadata);
  const entries = watchedWithLeftOut(provenance, write);
  const top = params.containerId === null ? await madeByEarlierRun(ctx, destination, destinationToken) : null;
  const storedRecords = new Map<string, StoredRecord>();
  const written = top
    ? await writeIntoMadeTop(ctx, destination, destinationToken, entries, { ...params, storedRecords }, top)
    : await writeWatched(ctx, destination, destinationToken, write, entries, { ...params, metadata: described.metadata, storedRecords });
  const report = withNotes(written, [...described.notes, ...titleNotes(described.metadata, written), ...folderNotes(ctx, destination, folders.layout)]);
  return completeProvenance(provenance, { token: destinationToken, signal: ctx.signal }, report, storedRecords);
}

function withNotes(report: JobReport, notes: string[]): JobReport {
  return notes.length > 0 ? { ...report, notes: [...(report.notes ?? []), ...notes] } : report;
}

/** What a packing folder mode did, said in the report (remote/packed-folders.ts). */
function folderNotes(ctx: JobExecutionContext, destination: Target, layout: FolderLayout | undefined, recorded = provenanceOn(ctx.params)): string[] {
  const note = layout ? layoutNote(layout, destination.info.readable_name, recorded) : null;
  return note === null ? [] : [note];
}

/** A new resource is named after the source's top folder (made distinct): a described title it does not bear is said, not dropped. */
function titleNotes(metadata: DescriptiveMetadata | undefined, report: JobReport): string[] {
  const made = report.new_resource?.title;
  if (!metadata?.title || !made || made === metadata.title) return [];
  return [`The new resource is named '${made}' after the source's folder; the title '${metadata.title}' was not given to it. Rename it on the destination if you want that title.`];
}

/** A retry of failed files: only those, into what the first run made; its provenance was written then. */
async function retryFailed(ctx: JobExecutionContext, destination: Target, token: string, read: ReadResult, params: TransferParams, paths: string[]): Promise<JobReport> {
  // the failed paths are those the first run wrote: packed as it packed them
  const only = onlyThese((await inFolderMode(ctx, destination, read.entries, params, originOf(params))).entries, paths);
  if (params.insideTop !== undefined) return writeInsideTop(ctx, destination, token, only, params, params.insideTop);
  const write = await plannedWrite(ctx, destination, token, only, params);
  return writeWatched(ctx, destination, token, write, write.plan, params);
}

/**
 * A transfer's failed files only: a new job of the same kind reading the same source,
 * limited to them. A top-level transfer that made its resource writes into it this time.
 */
function retryTransfer(finished: Readonly<Job>, raw: Record<string, unknown>, failedPaths: string[]): Record<string, unknown> {
  const params = transferParams(raw);
  const made = finished.report?.new_resource;
  const retried: TransferParams = { ...params, only: failedPaths };
  if (params.containerId === null && made) {
    retried.containerId = made.id;
    retried.insideTop = failedPaths[0]!.split('/')[0]!;
  }
  return retried as unknown as Record<string, unknown>;
}

/**
 * The entries as a destination that keeps no folders takes them in the job's folder mode
 * (remote/packed-folders.ts), with the layout its provenance record keeps; any other
 * destination gets them as they are. The paths are judged first as the source names them
 * (safe, one top folder), whatever they are then stored as.
 */
async function inFolderMode(
  ctx: JobExecutionContext,
  destination: Target,
  entries: AsyncIterable<Entry>,
  params: { containerId: string | null; duplicateAction: DuplicateFileAction; folders?: FolderMode; insideTop?: string },
  origin: { target: string; resourceId: string },
): Promise<{ entries: AsyncIterable<Entry>; layout?: FolderLayout }> {
  if (destination.namingRules?.flattenWith === undefined) return { entries };
  // a retry inside the record the first run made is packed as that run packed it, from its top folder
  const containerId = params.insideTop === undefined ? params.containerId : null;
  const judged = await planWrite({ info: destination.info }, entries, { ...planRequest(ctx, params), containerId });
  const packed = packWrite(judged.entries.map((planned) => planned.entry), {
    top: judged.top,
    recordPerTopFolder: containerId !== null && destination.recordPerTopFolder?.(containerId) === true,
    mode: params.folders ?? 'flatten',
    origin: { ...origin, fallbackTitle: `Ferry ${ctx.job.kind} ${ctx.job.ticket_number}` },
  });
  return { entries: fromList(packed.entries), layout: packed.layout };
}

function originOf(params: TransferParams): { target: string; resourceId: string } {
  return { target: params.source.target, resourceId: params.source.resourceId };
}

async function* fromList(entries: readonly Entry[]): AsyncIterable<Entry> {
  yield* entries;
}

/** The entries for `paths` (files) and the folders above them, nothing else. */
async function* onlyThese(entries: AsyncIterable<Entry>, paths: readonly string[]): AsyncIterable<Entry> {
  const files = new Set(paths);
  const folders = new Set(paths.flatMap((file) => file.split('/').slice(0, -1).map((_, i, parts) => parts.slice(0, i + 1).join('/'))));
  for await (const entry of entries) if ((entry.kind === 'file' ? files : folders).has(entry.path)) yield entry;
}

/** `Top/a/b.txt` → `a/b.txt`; the entry `Top` itself is left out. */
async function* withoutTop(entries: AsyncIterable<Entry>, top: string): AsyncIterable<Entry> {
  for await (const entry of entries) {
    if (!entry.path.startsWith(`${top}/`)) continue;
    yield { ...entry, path: entry.path.slice(top.length + 1) };
  }
}

/**
 * The new top-level resource an earlier run of this job made (its resume journal), when it
 * is still there; a resumed run writes into it rather than make another. One that is gone
 * (removed when that run stopped) takes the journal with it: everything is sent again.
 */
async function madeByEarlierRun(ctx: JobExecutionContext, destination: Target, token: string): Promise<JournaledTop | null> {
  const top = ctx.journal.newResource;
  if (!top) return null;
  try {
    await destination.detail({ token, signal: ctx.signal }, top.id);
    return top;
  } catch (error) {
    if (!isFerryError(error) || error.status !== 404) throw error;
    await ctx.journal.forget();
    return null;
  }
}

/** A resumed top-level write: into the resource the first run made, reported as that run would have. */
async function writeIntoMadeTop(
  ctx: JobExecutionContext,
  destination: Target,
  token: string,
  entries: AsyncIterable<Entry>,
  params: WriteParams,
  top: JournaledTop,
): Promise<JobReport> {
  const report = await writeInsideTop(ctx, destination, token, entries, { ...params, containerId: top.id }, top.from);
  const prefixed = (paths: string[]) => paths.map((path) => `${top.from}/${path}`);
  return {
    ...report,
    resources_created: [top.from, ...prefixed(report.resources_created)],
    resources_updated: prefixed(report.resources_updated),
    resources_ignored: prefixed(report.resources_ignored),
    new_resource: { id: top.id, title: top.title },
  };
}

/**
 * Entries below the source's top folder `top`, written into `containerId` (the resource made
 * from that folder earlier); failed and already-done files keep the source's names, so a
 * retry or resume of this job finds them.
 */
async function writeInsideTop(
  ctx: JobExecutionContext,
  destination: Target,
  token: string,
  entries: AsyncIterable<Entry>,
  params: WriteParams,
  top: string,
): Promise<JobReport> {
  // judged as what it is now: a write into an existing container (choices name the source's paths, top included)
  const write = await plannedWrite(ctx, destination, token, withoutTop(entries, top), params, (path) => `${top}/${path}`);
  const report = await writeWatched(ctx, destination, token, write, write.plan, { ...params, insideTop: top });
  return { ...report, failed_files: report.failed_files?.map((file) => ({ ...file, path: `${top}/${file.path}` })) };
}

/** The entries of each resource in turn, each under its own title (the paths the destination writes). */
export async function* readEach(source: Target, ctx: TargetContext, ids: readonly string[]): AsyncGenerator<Entry> {
  for (const id of ids) {
    const read = await source.read(ctx, id);
    yield* read.entries;
  }
}


function destinationOf(ctx: JobExecutionContext, deps: TransferExecutorDeps): Target {
  const destination = deps.targets.get(ctx.job.target);
  if (!destination.info.supported_actions.resource_upload) {
    throw notSupported(`${destination.info.readable_name} does not accept uploads.`);
  }
  return destination;
}

/**
 * The token the job was submitted with, or — when the job resumes after a restart and
 * tokens were never written down — the one Ferry can find again: its own access key for
 * local targets, the keychain's for remote ones.
 */
export async function tokenFor(ctx: JobExecutionContext, deps: Pick<TransferExecutorDeps, 'secrets' | 'accessKey'>, role: string, target: Target): Promise<string> {
  const given = ctx.tokens[role];
  if (given) return given;
  if (target.info.credential === 'access-key') return deps.accessKey;
  const stored = await deps.secrets.get(tokenAccount(target.info.name));
  if (stored) return stored;
  const why = ctx.resumed ? 'This job could not go on by itself after Ferry restarted' : 'This job could not start';
  // a transfer's journal outlives this failure: resumed with the token, it sends only what is missing
  const next = ctx.resumed && ctx.job.kind === 'transfer' ? 'resume it with the token; the files it completed are not sent again' : 'submit the job again';
  throw new FerryError(401, 'unauthorized', `${why} because the ${target.info.readable_name} token is not stored in the keychain; ${next}.`);
}
