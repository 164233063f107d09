import type { DuplicateFileAction, FixityFailure, JobReport, WriteDuplicateAction } from '../../../shared/api.js';
import { FerryError } from '../errors.js';
import type { DescriptiveMetadata, Entry, StoredRecord, Target, WriteOptions, WriteOutcome } from '../target.js';
import { planWrite, type PlanRequest } from '../plan/write-plan.js';
import { resolveDuplicates, type ResolvedWrite } from '../plan/duplicates.js';
import type { ProvenanceRecorder } from '../provenance/recorder.js';
import { watchedForProvenance } from '../provenance/job-hook.js';
import { WatchedEntries } from './entry-stream.js';
import { JournaledEntries } from './journaled-entries.js';
import { failedFilesOfWrite, StoppedWithReport } from './outcome.js';
import { identityOf } from './resume-journal.js';
import type { StagedWriteOptions } from './staged-write.js';
import { verifyWritten, type WrittenVerification } from './verify-written.js';
import { emptyReport, type JobExecutionContext } from './types.js';

// One write of a job, in the core: its entries judged and planned (plan/write-plan.ts), its
// duplicates decided (plan/duplicates.ts), then handed to the destination with every byte
// counted and checked against the source (entry-stream.ts), each confirmed file journaled
// for a resume (journaled-entries.ts), and the destination's records of what it stored
// checked after the write (verify-written.ts). The job kinds (executors.ts) say what is
// written where; this says how every write goes.

/**
 * destination.write of a planned write with every byte counted and checked against the
 * source's hashes. `entries`: the plan's, or the same watched on their way (provenance).
 */
export async function writeWatched(
  ctx: JobExecutionContext,
  destination: Target,
  token: string,
  write: ResolvedWrite,
  entries: AsyncIterable<Entry>,
  params: { containerId: string | null; metadata?: DescriptiveMetadata; insideTop?: string; storedRecords?: Map<string, StoredRecord> },
  /** an archive not yet checked: every byte must match (a bag's manifests, a ZIP's CRC-32s) before any file is put in place */
  verifyBag = false,
): Promise<JobReport> {
  // files an earlier run of the job completed are left out; each file confirmed is journaled
  // the journal keys a file by its source path: a renamed file's is the name it was planned under
  const top = params.insideTop;
  const journaled = new JournaledEntries(ctx.journal, (path) => {
    const planned = write.renamedFrom.get(path) ?? path;
    return top === undefined ? planned : `${top}/${planned}`;
  });
  const watched = new WatchedEntries(journaled.filter(entries), {
    signal: ctx.signal,
    onProgress: (done) => ctx.progress({ ...done, files_done: done.files_done + journaled.alreadyDone.length }),
    trackUnread: verifyBag,
    bandwidth: ctx.bandwidth,
    // what the destination may record of a stored file, to verify each file after the write
    digests: destination.info.supported_hash_algorithms.map((algorithm) => algorithm.toLowerCase()),
  });
  const options: StagedWriteOptions = { ...writeOptionsOf(ctx, write.writeAction, params.metadata), plan: write.plan };
  options.onFileWritten = journaled.onFileWritten;
  options.partials = journaled.partials;
  options.onNewResource = (resource) => {
    if (watched.topFolder !== null) ctx.journal.recordTop({ ...resource, from: watched.topFolder });
  };
  if (verifyBag) {
    options.beforeCommit = async () => {
      // files the writer never read (ignored duplicates, per-file errors) are checked too
      await watched.readUnread();
      refuseBadPayload(watched.fixityFailures);
    };
  }
  let outcome: WriteOutcome;
  try {
    outcome = await destination.write({ token, signal: ctx.signal }, params.containerId, watched, options);
  } catch (error) {
    // What changed before it stopped: a staged write leaves nothing; any other may have put
    // in place the files it was handed in full.
    throw new StoppedWithReport(error, {
      ...emptyReport(),
      failed_fixity: watched.fixityFailures,
      failed_files: failedFilesOfWrite(watched.fixityFailures, [], null),
      unconfirmed: verifyBag ? [] : watched.handedOver.filter((path) => !watched.refused(path)),
    });
  } finally {
    watched.dispose();
  }
  // Files the writer skipped without reading (ignored duplicates) are done too, and so are
  // those an earlier run completed.
  const files = watched.filesSeen + journaled.alreadyDone.length;
  ctx.progress({
    files_done: files,
    files_total: files,
    bytes_done: Math.max(watched.bytesDone, watched.bytesSeen),
    bytes_total: Math.max(watched.bytesDone, watched.bytesSeen),
  });
  const verification = verifyWritten(outcome, watched, destination.info.readable_name);
  // the destination's record of each file, by its path in the report: the provenance record takes it from here
  for (const [path, record] of outcome.stored ?? []) params.storedRecords?.set(top === undefined ? path : `${top}/${path}`, record);
  const report = withDuplicates(reportOf(outcome, watched.fixityFailures, params.containerId === null ? watched.topFolder : null, verification), write);
  return journaled.alreadyDone.length > 0 ? { ...report, already_done: journaled.alreadyDone } : report;
}

/** How a job writes: where, and what happens to files already there. */
export interface WriteParams {
  containerId: string | null;
  duplicateAction: DuplicateFileAction;
  duplicateChoices?: Record<string, DuplicateFileAction>;
  /** filled with the destination's record of each file written (WriteOutcome.stored), by its path in the job's report */
  storedRecords?: Map<string, StoredRecord>;
}

/**
 * The entries judged whole (plan/write-plan.ts), then their duplicates decided against the
 * destination (plan/duplicates.ts), before the destination is asked to write anything.
 * `sourcePathOf`: an entry's path → the source's, the key of the per-file choices.
 */
export async function plannedWrite(
  ctx: JobExecutionContext,
  destination: Target,
  token: string,
  entries: AsyncIterable<Entry>,
  params: WriteParams,
  sourcePathOf?: (path: string) => string,
): Promise<ResolvedWrite> {
  const plan = await planWrite(destination, entries, planRequest(ctx, params));
  const sourcePath = sourcePathOf ?? ((path: string) => path);
  return resolveDuplicates(destination, { token, signal: ctx.signal }, plan, {
    containerId: params.containerId,
    action: params.duplicateAction,
    ...(params.duplicateChoices ? { choices: params.duplicateChoices } : {}),
    sourcePathOf: sourcePath,
    completed: (entry) => ctx.journal.has(sourcePath(entry.path), identityOf(entry)),
    resumed: ctx.resumed || ctx.job.resumed != null,
  });
}

/**
 * A write's entries watched for its provenance record, the files the duplicates left out
 * included (recorded as ignored, never opened), then left out before the destination.
 */
export async function* watchedWithLeftOut(provenance: ProvenanceRecorder | null, write: ResolvedWrite): AsyncIterable<Entry> {
  const leftOut = new Set(write.ignored);
  for await (const entry of watchedForProvenance(provenance, write.withLeftOut)) if (entry.kind === 'folder' || !leftOut.has(entry.path)) yield entry;
}

/** The files the duplicates left out are ignored, with the notes saying why; a renamed file that failed is named as the source names it, for a retry. */
function withDuplicates(report: JobReport, write: ResolvedWrite): JobReport {
  if (write.ignored.length === 0 && write.renamedFrom.size === 0 && write.notes.length === 0) return report;
  const notes = [...(report.notes ?? []), ...write.notes];
  return {
    ...report,
    resources_ignored: [...report.resources_ignored, ...write.ignored],
    failed_files: report.failed_files?.map((file) => ({ ...file, path: write.renamedFrom.get(file.path) ?? file.path })) ?? [],
    ...(notes.length > 0 ? { notes } : {}),
  };
}

export function planRequest(ctx: JobExecutionContext, params: { containerId: string | null; duplicateAction: DuplicateFileAction }): PlanRequest {
  return { containerId: params.containerId, duplicateAction: params.duplicateAction, signal: ctx.signal };
}

export function writeOptionsOf(ctx: JobExecutionContext, duplicateAction: WriteDuplicateAction, metadata?: DescriptiveMetadata): WriteOptions {
  return {
    duplicateAction,
    signal: ctx.signal,
    jobLabel: `Ferry ${ctx.job.kind} ${ctx.job.ticket_number}`,
    ...(metadata ? { metadata } : {}),
  };
}

/**
 * The job's report of a write; `top`: the source's top folder, for a top-level write. A file
 * whose check against the destination's record failed is failed, not created or updated.
 */
export function reportOf(outcome: WriteOutcome, fixity: FixityFailure[], top: string | null, verification: WrittenVerification): JobReport {
  const topRenamed = outcome.newResource && top !== null ? { from: top, to: outcome.newResource.title } : null;
  const unverified = new Set(verification.failed.map((failure) => failure.path));
  return {
    resources_created: outcome.created.filter((path) => !unverified.has(path)),
    resources_updated: outcome.updated.filter((path) => !unverified.has(path)),
    resources_ignored: outcome.ignored,
    failed_fixity: fixity,
    file_errors: [...outcome.fileErrors, ...verification.failed.map(({ path, error }) => ({ path, error }))],
    failed_files: failedFilesOfWrite(fixity, outcome.fileErrors, topRenamed, verification.failed),
    written_checks: verification.checks,
    ...(outcome.notes?.length ? { notes: outcome.notes } : {}),
    new_resource: outcome.newResource ?? null,
  };
}

/** As the bag validator words it: the bag is refused, and the staged write leaves nothing. */
function refuseBadPayload(failures: FixityFailure[]): void {
  if (failures.length === 0) return;
  const shown = failures
    .slice(0, PROBLEMS_SHOWN)
    .map((failure) => `data/${failure.path} does not match its ${failure.algorithm} checksum in manifest-${failure.algorithm}.txt`)
    .join('; ');
  const more = failures.length > PROBLEMS_SHOWN ? ` (and ${failures.length - PROBLEMS_SHOWN} more problems)` : '';
  throw new FerryError(400, 'bad_bag', `The uploaded bag is not valid, so nothing was written: ${shown}${more}.`);
}

const PROBLEMS_SHOWN = 5;
