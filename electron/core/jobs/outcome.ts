import type { CheckReport, FailedFile, FileError, FixityFailure, JobReport, JobStatus } from '../../../shared/api.js';
import { describeMismatch } from './source-check.js';

// Which status a finished job's outcome gets: the one place that decides (docs/api.md
// "Job outcomes"). A job succeeds only when every file arrived and every available check
// passed; a job some of whose files failed is `completed_with_errors` when anything else
// arrived, `failed` when nothing did. A report with no failed file is a success whatever
// else it says; a report is never read as a success when a file is missing from it.
// A check (report.check) writes nothing: its findings decide instead (endingOfCheck).

export type EndedStatus = Extract<JobStatus, 'succeeded' | 'completed_with_errors' | 'failed'>;

export interface Ending {
  status: EndedStatus;
  /** null for succeeded; otherwise the sentence the job's `error` carries */
  error: string | null;
}

const NAMED_IN_SENTENCE = 3;

/** The status and sentence for a job whose executor returned `report`. */
export function endingOf(report: JobReport): Ending {
  if (report.check) return endingOfCheck(report.check);
  const failed = report.failed_files ?? [];
  if (failed.length === 0) return { status: 'succeeded', error: null };
  const arrived = arrivedFiles(report, failed).length;
  const named = failed
    .slice(0, NAMED_IN_SENTENCE)
    .map((file) => `'${file.path}' (${STAGE_WORDS[file.stage]})`)
    .join(', ');
  const others = failed.length > NAMED_IN_SENTENCE ? ` and ${failed.length - NAMED_IN_SENTENCE} more` : '';
  const count = failed.length === 1 ? '1 file' : `${failed.length} files`;
  if (arrived === 0) {
    return {
      status: 'failed',
      // the first file's own sentence (the service not answering, a refused name …) says what to do
      error: `Nothing arrived: ${count} failed: ${named}${others}. ${sentence(failed[0]!.error)}${failed.length > 1 ? ' The report lists each file with its reason.' : ''}`,
    };
  }
  return {
    status: 'completed_with_errors',
    error: `${count} failed: ${named}${others}; ${arrived === 1 ? 'the other file arrived and passed its checks' : `the other ${arrived} files arrived and passed their checks`}. Retry the failed files, or see the report for each reason.`,
  };
}

/**
 * A check succeeds only when every path is on both sides and every file compared equal (by
 * hash, or by size where the report says so). One that ran to the end and found anything
 * missing, extra or different, or a file it could not compare, is `completed_with_errors`:
 * the check itself is complete, the resources are not shown to be the same. `failed` stays
 * for a check that could not be made (a side could not be read): its executor throws.
 */
function endingOfCheck(check: CheckReport): Ending {
  const parts = [
    group(check.missing.length, 'missing', check.missing),
    group(check.extra.length, 'extra', check.extra),
    group(check.different.length, 'different', check.different.map((difference) => difference.path)),
    group(check.not_comparable.length, 'not comparable', check.not_comparable.map((file) => file.path)),
  ].filter((part): part is string => part !== null);
  if (parts.length === 0) return { status: 'succeeded', error: null };
  const matched = check.matched === 1 ? '1 file matched' : `${check.matched} files matched`;
  return { status: 'completed_with_errors', error: `The resources differ: ${parts.join(', ')}; ${matched}. The report lists each path.` };
}

function group(count: number, word: string, paths: readonly string[]): string | null {
  if (count === 0) return null;
  const named = paths.slice(0, NAMED_IN_SENTENCE).map((path) => `'${path}'`).join(', ');
  const others = count > NAMED_IN_SENTENCE ? ` and ${count - NAMED_IN_SENTENCE} more` : '';
  return `${count} ${word} (${named}${others})`;
}

const STAGE_WORDS: Record<FailedFile['stage'], string> = {
  read: 'could not be read',
  write: 'could not be written',
  fixity: 'the source copy failed its checksum',
  verify: 'does not match its checksum',
};

/**
 * Paths the report says arrived (created, updated, left as identical, verified), leaving out
 * folders that only hold other reported paths: a job whose one file failed did not succeed
 * because its folder was made.
 */
function arrivedFiles(report: JobReport, failed: readonly FailedFile[]): string[] {
  const listed = [
    ...report.resources_created,
    ...report.resources_updated,
    ...report.resources_ignored,
    ...(report.verified ?? []),
    ...(report.unverified ?? []),
    ...(report.already_done ?? []),
  ];
  const all = [...listed, ...failed.map((file) => file.path), ...(report.file_errors ?? []).map((file) => file.path)];
  // every folder above a reported path, gathered once: a search of all the paths for each
  // one grew with the square of the files
  const holding = new Set<string>();
  for (const path of all) for (let at = path.indexOf('/'); at >= 0; at = path.indexOf('/', at + 1)) holding.add(path.slice(0, at));
  return listed.filter((candidate) => !holding.has(candidate));
}

/**
 * One FailedFile per file, from a write's two lists: the source's fixity failures (such a file
 * was never handed over whole, see source-check.ts) and the destination's per-file errors. A
 * writer that reports a refused file under its own error is not counted twice. `topRenamed`:
 * a top-level write whose top folder got a distinct name (`Data` → `Data (2)`): the writer's
 * paths are mapped back to the source's, which a retry reads.
 */
export function failedFilesOfWrite(
  fixity: readonly FixityFailure[],
  fileErrors: readonly FileError[],
  topRenamed: { from: string; to: string } | null,
  /** files written whose check against the destination's record failed (jobs/verify-written.ts) */
  verifyFailures: readonly FailedFile[] = [],
): FailedFile[] {
  const byPath = new Map<string, FailedFile>();
  for (const failure of verifyFailures) {
    const path = sourcePathOf(failure.path, topRenamed);
    byPath.set(path, { ...failure, path });
  }
  for (const [path, failures] of groupByPath(fixity)) {
    const first = failures[0]!;
    byPath.set(
      path,
      first.algorithm === 'read'
        ? { path, stage: 'read', error: first.actual }
        : { path, stage: 'fixity', error: describeMismatch(path, failures), algorithm: first.algorithm, expected: first.expected, actual: first.actual },
    );
  }
  for (const fileError of fileErrors) {
    const path = sourcePathOf(fileError.path, topRenamed);
    if (!byPath.has(path)) byPath.set(path, { path, stage: 'write', error: fileError.error });
  }
  return [...byPath.values()];
}

/** A verification's failures: one FailedFile per file (`read` when its bytes could not be read). */
export function failedFilesOfVerify(failed: readonly FixityFailure[]): FailedFile[] {
  return [...groupByPath(failed)].map(([path, failures]) => {
    const first = failures[0]!;
    if (first.algorithm === 'read') return { path, stage: 'read', error: first.actual };
    const more = failures.length > 1 ? ` and ${failures.length - 1} more check${failures.length > 2 ? 's' : ''}` : '';
    return {
      path,
      stage: 'verify',
      error: `The stored bytes of '${path}' do not match its ${first.algorithm} checksum (expected ${first.expected}, got ${first.actual})${more}.`,
      algorithm: first.algorithm,
      expected: first.expected,
      actual: first.actual,
    };
  });
}

function groupByPath(failures: readonly FixityFailure[]): Map<string, FixityFailure[]> {
  const groups = new Map<string, FixityFailure[]>();
  for (const failure of failures) {
    const group = groups.get(failure.path);
    if (group) group.push(failure);
    else groups.set(failure.path, [failure]);
  }
  return groups;
}

function sourcePathOf(written: string, topRenamed: { from: string; to: string } | null): string {
  if (!topRenamed || topRenamed.from === topRenamed.to) return written;
  if (written === topRenamed.to) return topRenamed.from;
  return written.startsWith(`${topRenamed.to}/`) ? topRenamed.from + written.slice(topRenamed.to.length) : written;
}

/**
 * Thrown by an executor that stopped (an error, a cancel) after it began changing the
 * destination: `cause` is why, `report` what changed before it stopped. The job service
 * records both, so a failed or cancelled job never says nothing changed when something did.
 */
export class StoppedWithReport extends Error {
  constructor(
    override readonly cause: unknown,
    readonly report: JobReport,
  ) {
    super(cause instanceof Error ? cause.message : String(cause));
    this.name = 'StoppedWithReport';
  }
}

/** `text` as a sentence: ends in a full stop. */
function sentence(text: string): string {
  const trimmed = text.trim();
  return /[.!?]$/.test(trimmed) ? trimmed : `${trimmed}.`;
}
