import type { JobReport } from '../../../shared/api.js';
import type { Entry, StoredRecord, Target, TargetContext } from '../target.js';
import type { FolderLayout, ProvenanceResource } from './format.js';
import { ProvenanceRecorder } from './recorder.js';

// The two calls the upload and transfer executors make (jobs/executors.ts): start a record
// before the write, complete it after. Everything else about provenance stays in this folder.

/** The request header that turns the record off for one job: `ferry-provenance: off`. */
export const PROVENANCE_HEADER = 'ferry-provenance';

/** The job parameter the header sets; absent (jobs submitted before it existed) means on. */
export function provenanceOn(params: Record<string, unknown>): boolean {
  return params.provenance !== false;
}

interface StartCommon {
  params: Record<string, unknown>;
  ticket: string;
  destination: Target;
  containerId: string | null;
  /** a write to a record that keeps no folders: how it kept them (remote/packed-folders.ts) */
  folders?: FolderLayout;
}

/** Upload: the source is the ZIP; a bag's own record (its tag file) is extended. */
export async function startUploadProvenance(
  job: StartCommon & { kind: 'bag' | 'plain'; topLevel: string[]; carriedRecord(): Promise<string | null> },
): Promise<ProvenanceRecorder | null> {
  if (!provenanceOn(job.params)) return null;
  const source: ProvenanceResource = { target: job.kind === 'bag' ? 'bag' : 'zip', resource_id: null, title: job.topLevel.length === 1 ? job.topLevel[0]! : null };
  // a record that cannot be read is one this job does not extend (the job goes on)
  const carried = await job.carriedRecord().catch(() => null);
  return new ProvenanceRecorder({ action: 'upload', ticket: job.ticket, source, destination: job.destination, containerId: job.containerId, carried, folders: job.folders });
}

/** Transfer: the source resource, with its persistent identifier where its detail gives one. */
export async function startTransferProvenance(
  job: StartCommon & { source: Target; sourceCtx: TargetContext; sourceId: string; title: string },
): Promise<ProvenanceRecorder | null> {
  if (!provenanceOn(job.params)) return null;
  let identifier: string | null = null;
  try {
    identifier = identifierOf((await job.source.detail(job.sourceCtx, job.sourceId)).extra);
  } catch {
    identifier = null; // the identifier is a courtesy: the transfer does not depend on it
  }
  const source: ProvenanceResource = { target: job.source.info.name, resource_id: job.sourceId, title: job.title, ...(identifier ? { identifier } : {}) };
  return new ProvenanceRecorder({ action: 'transfer', ticket: job.ticket, source, destination: job.destination, containerId: job.containerId, folders: job.folders });
}

export function watchedForProvenance(recorder: ProvenanceRecorder | null, entries: AsyncIterable<Entry>): AsyncIterable<Entry> {
  return recorder ? recorder.watch(entries) : entries;
}

/** `stored`: the destination's record of each file as the write got it (WriteOutcome.stored), by its path in `report`. */
export async function completeProvenance(
  recorder: ProvenanceRecorder | null,
  ctx: TargetContext,
  report: JobReport,
  stored: ReadonlyMap<string, StoredRecord>,
): Promise<JobReport> {
  return recorder ? recorder.complete(ctx, report, stored) : report;
}

/**
 * A resource's persistent identifier from its detail's `extra`, as targets name it: a DOI
 * (`doi`, as a https://doi.org/ URL), else its landing page (`html_url`).
 */
export function identifierOf(extra: Record<string, unknown>): string | null {
  const doi = typeof extra.doi === 'string' ? extra.doi.trim() : '';
  if (doi) return /^https?:\/\//i.test(doi) ? doi : `https://doi.org/${doi.replace(/^doi:/i, '')}`;
  const html = typeof extra.html_url === 'string' ? extra.html_url.trim() : '';
  return html || null;
}
