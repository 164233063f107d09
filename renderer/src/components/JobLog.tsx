// A job's transfer log, as a queue window keeps one: when it started and ended, how long it
// took, and every file with what happened to it. Read from the job's report, so it says
// nothing the core did not record.
import type { Job } from '../../../shared/api.js';
import { formatDuration } from '../format.js';

export interface LogLine {
  path: string;
  result: 'written' | 'updated' | 'skipped' | 'already' | 'failed' | 'unconfirmed';
  detail?: string;
}

const RESULT_TEXT: Record<LogLine['result'], string> = {
  written: 'written',
  updated: 'replaced',
  skipped: 'skipped (already there)',
  already: 'done by an earlier run, not sent again',
  failed: 'failed',
  unconfirmed: 'not confirmed (the job stopped)',
};

/**
 * Every file the report names, failures first (they are what a person looks for); a written
 * file says how it was checked against the destination's record of it (report.written_checks).
 */
export function logLines(job: Job): LogLine[] {
  const r = job.report;
  if (!r) return [];
  const checks = new Map((r.written_checks ?? []).map((check) => [check.path, check.detail]));
  const written = (result: 'written' | 'updated') => (path: string): LogLine => {
    const detail = checks.get(path);
    return detail === undefined ? { path, result } : { path, result, detail };
  };
  return [
    ...(r.failed_files ?? []).map((f): LogLine => ({ path: f.path, result: 'failed', detail: f.error })),
    ...(r.unconfirmed ?? []).map((path): LogLine => ({ path, result: 'unconfirmed' })),
    ...r.resources_created.map(written('written')),
    ...r.resources_updated.map(written('updated')),
    ...r.resources_ignored.map((path): LogLine => ({ path, result: 'skipped' })),
    ...(r.already_done ?? []).map((path): LogLine => ({ path, result: 'already' })),
  ];
}

const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : '—');

export function JobLog({ job }: { job: Job }) {
  const lines = logLines(job);
  const took = job.started && job.finished ? (Date.parse(job.finished) - Date.parse(job.started)) / 1000 : null;
  return (
    <details className="job-log">
      <summary>Log</summary>
      <dl className="job-log-times">
        <dt>Queued</dt>
        <dd>{when(job.created)}</dd>
        <dt>Started</dt>
        <dd>{when(job.started)}</dd>
        <dt>Ended</dt>
        <dd>
          {when(job.finished)}
          {took !== null ? ` (took ${formatDuration(took)})` : ''}
        </dd>
      </dl>
      {lines.length ? (
        <ul className="job-log-files" aria-label="Files in this job">
          {lines.map((line, i) => (
            <li key={`${line.result}:${line.path}:${i}`} className={`log-${line.result}`}>
              <span className="path">{line.path}</span> — {RESULT_TEXT[line.result]}
              {line.detail ? `: ${line.detail}` : ''}
            </li>
          ))}
        </ul>
      ) : (
        <p className="hint">No file is recorded for this job yet.</p>
      )}
    </details>
  );
}
