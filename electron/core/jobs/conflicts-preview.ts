import type { ConflictsReport } from '../../../shared/api.js';
import { badRequest } from '../errors.js';
import { previewConflicts } from '../plan/duplicates.js';
import { planWrite } from '../plan/write-plan.js';
import type { Entry, Target, TargetContext } from '../target.js';
import { readEach } from './executors.js';

// Before a transfer or an upload starts: which of the files it would write the destination
// already holds, both sides side by side, so a person can choose per file (issue #22). The
// files are planned exactly as the job will plan them (the same 400 for the same bad input),
// and the destination is looked at as the job's duplicate resolution looks at it.

/** What an upload will hold, as the client describes it: its ZIP is not sent for a preview. */
export interface DescribedFile {
  path: string;
  size?: number | null;
  date_modified?: string | null;
  /** what the client hashed (cheap for small files), shown beside the stored file's; nothing is decided by it */
  hashes?: Record<string, string>;
}

export type ConflictsSource = { source: Target; ctx: TargetContext; ids: readonly string[] } | { files: readonly DescribedFile[] };

export async function previewWrite(destination: Target, ctx: TargetContext, containerId: string, from: ConflictsSource): Promise<ConflictsReport> {
  const entries = 'files' in from ? describedEntries(from.files) : readEach(from.source, from.ctx, from.ids);
  const plan = await planWrite(destination, entries, { containerId, duplicateAction: 'update', signal: ctx.signal });
  return {
    planned_files: plan.entries.filter((planned) => planned.entry.kind === 'file').length,
    conflicts: await previewConflicts(destination, ctx, plan, containerId),
  };
}

/** An upload's files as entries with no bytes: a preview reads none. */
async function* describedEntries(files: readonly DescribedFile[]): AsyncIterable<Entry> {
  for (const file of files) {
    const mtime = file.date_modified ? new Date(file.date_modified) : null;
    if (mtime && Number.isNaN(mtime.getTime())) throw badRequest(`The date_modified of ${JSON.stringify(file.path.slice(0, 200))} is not a date; send it as ISO 8601, or leave it out.`);
    yield { path: file.path, kind: 'file', size: file.size ?? null, mtime, hashes: { ...file.hashes }, open: () => Promise.reject(new Error('A conflicts preview reads no bytes.')) };
  }
}
