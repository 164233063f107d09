// Every upload, transfer and verification, live: progress, bytes, speed, ETA, state;
// cancel, retry, open the destination; the report when done. Only a job in which every file
// arrived and checked looks done (green); some failed files: amber, listed, with "Retry failed
// files"; nothing arrived or stopped on an error: red; cancelled: incomplete.
import { useState } from 'react';
import { useStore } from 'zustand';
import type { Job } from '../../../shared/api.js';
import { useServices } from '../services.js';
import { CancelAll } from './CancelAll.js';
import { JobLog } from './JobLog.js';
import { ClearFinished, describeQueue, QueueSettingsForm } from './QueueControls.js';
import { canResume, canRetryFailedFiles, etaSeconds, isFinished, outcomeOf, retryLabel, type JobView, type Submission } from '../stores/jobs.js';
import { formatBytes, formatDuration, formatSpeed } from '../format.js';
import { CheckSummary } from './CheckFindings.js';

const STATUS_TEXT: Record<Job['status'], string> = {
  queued: 'Waiting',
  running: 'Running',
  paused: 'Paused',
  succeeded: 'Done',
  completed_with_errors: 'Done with errors',
  failed: 'Failed',
  cancelled: 'Cancelled — incomplete',
};

/** What a job is called in the list: the submission's label when this window started it. */
export function jobLabel(
  job: Job,
  submission: Submission | undefined,
  readableName: (target: string) => string,
  titleOf: (target: string, id: string) => string | null,
): string {
  if (submission) return submission.label;
  if (job.retry_of) return retryLabel(jobLabel({ ...job, retry_of: null }, undefined, readableName, titleOf));
  if (job.kind === 'verify') {
    const title = job.resource_id ? titleOf(job.target, job.resource_id) : null;
    return `Verify ${title ?? `an archive in ${readableName(job.target)}`}`;
  }
  if (job.source) return `${readableName(job.source.target)} → ${readableName(job.target)}`;
  return `${job.kind} → ${readableName(job.target)}`;
}

/** The outcome of a verification: counts, then every failure with what was expected and found. */
export function VerifyReport({ job }: { job: Job }) {
  const r = job.report;
  if (!r) return null;
  const verified = r.verified?.length ?? 0;
  const unverified = r.unverified?.length ?? 0;
  const failedFiles = new Set(r.failed_fixity.map((f) => f.path)).size;
  const summary =
    `${verified} verified, ${failedFiles} failed fixity` +
    (unverified ? `, ${unverified} with no recorded checksum to compare` : '') +
    '.';
  return (
    <div className="job-report">
      <span className={failedFiles ? 'bad' : 'good'}>
        {failedFiles ? '✗ ' : '✓ '}
        {summary}
      </span>
      {failedFiles > 0 ? (
        <details open>
          <summary className="bad">Files that do not match their checksums</summary>
          <ul className="fixity-failures">
            {r.failed_fixity.map((f, i) =>
              f.algorithm === 'read' ? (
                <li key={i}>
                  <span className="path">{f.path}</span>: could not be read ({f.actual})
                </li>
              ) : (
                <li key={i}>
                  <span className="path">{f.path}</span>: {f.algorithm} expected <code>{f.expected}</code>, got{' '}
                  <code>{f.actual}</code>
                </li>
              ),
            )}
          </ul>
        </details>
      ) : null}
    </div>
  );
}

/** Every file that did not arrive or did not pass a check: its path and the sentence saying why. */
export function FailedFiles({ job }: { job: Job }) {
  const failed = job.report?.failed_files ?? [];
  if (failed.length === 0) return null;
  return (
    <details open className="failed-files">
      <summary className="bad">{failed.length === 1 ? '1 file failed' : `${failed.length} files failed`}</summary>
      <ul aria-label="Failed files">
        {failed.map((file) =>
          // a sentence that names the file already is shown as it is
          file.error.startsWith(`'${file.path}'`) ? (
            <li key={file.path}>{file.error}</li>
          ) : (
            <li key={file.path}>
              <span className="path">{file.path}</span>: {file.error}
            </li>
          ),
        )}
      </ul>
    </details>
  );
}

/** A job going on where an earlier run stopped (a crash, a restart, a resume): what that run had done. */
export function resumedText(job: Job): string | null {
  if (!job.resumed) return null;
  const count = job.resumed.files_already_done;
  return `Resumed, ${count === 1 ? '1 file' : `${count} files`} already done.`;
}

/** Cancelled, or failed before it had been through every file: its work is incomplete, and says so. */
function stoppedEarly(job: Job): boolean {
  if (job.status === 'cancelled') return true;
  const { files_done, files_total } = job.progress;
  return job.status === 'failed' && (job.report?.failed_files?.length ?? 0) === 0 && (files_total === null || files_done < files_total);
}

/** What a finished transfer or upload changed; for one that did not succeed, also what it may have. */
export function Report({ job }: { job: Job }) {
  const r = job.report;
  if (!r) return null;
  if (job.kind === 'verify') return <VerifyReport job={job} />;
  if (job.kind === 'check') return <CheckSummary job={job} />;
  const parts = [
    r.resources_created.length ? `${r.resources_created.length} created` : '',
    r.resources_updated.length ? `${r.resources_updated.length} updated` : '',
    r.resources_ignored.length ? `${r.resources_ignored.length} skipped (already there)` : '',
  ].filter(Boolean);
  const unconfirmed = r.unconfirmed ?? [];
  const nothing = job.status === 'succeeded' ? 'Nothing needed to change.' : unconfirmed.length ? 'No file was confirmed written.' : 'Nothing was written.';
  // jobs finished before failed_files existed: their per-file lists
  const older = (r.failed_files ?? []).length === 0;
  return (
    <div className="job-report">
      <span>{parts.length ? parts.join(', ') + '.' : nothing}</span>
      {r.new_resource ? <span> New: {r.new_resource.title}.</span> : null}
      {unconfirmed.length > 0 ? (
        <details>
          <summary>
            {unconfirmed.length === 1 ? '1 file' : `${unconfirmed.length} files`} may have been written before the job stopped
          </summary>
          <ul>
            {unconfirmed.map((path) => (
              <li key={path}>{path}</li>
            ))}
          </ul>
        </details>
      ) : null}
      {older && r.failed_fixity.length > 0 ? (
        <details open>
          <summary className="bad">{r.failed_fixity.length} file(s) failed the fixity check</summary>
          <ul>
            {r.failed_fixity.map((f, i) => (
              <li key={i}>
                {f.path}: {f.algorithm} expected {f.expected}, got {f.actual}
              </li>
            ))}
          </ul>
        </details>
      ) : null}
      {older && r.file_errors?.length ? (
        <details>
          <summary className="bad">{r.file_errors.length} file(s) had errors</summary>
          <ul>
            {r.file_errors.map((f, i) => (
              <li key={i}>
                {f.path}: {f.error}
              </li>
            ))}
          </ul>
        </details>
      ) : null}
    </div>
  );
}

/** The job's share of its bytes done; a running job whose total is not known yet gets a moving stripe, no share. */
export function JobProgressBar({ job, label }: { job: Job; label: string }) {
  const { bytes_done, bytes_total } = job.progress;
  const percent = bytes_total ? Math.min(100, Math.round((bytes_done / bytes_total) * 100)) : null;
  const unknownTotal = job.status === 'running' && percent === null;
  return (
    <div
      className={`progress${unknownTotal ? ' indeterminate' : ''}`}
      role="progressbar"
      aria-label={`Progress of ${label}`}
      aria-valuemin={0}
      aria-valuemax={100}
      aria-valuenow={job.status === 'succeeded' ? 100 : (percent ?? undefined)}
    >
      <div
        className="progress-fill"
        // an unknown total is shown as motion, never as a made-up share of the work
        style={unknownTotal ? undefined : { width: `${job.status === 'succeeded' ? 100 : (percent ?? 0)}%` }}
      />
    </div>
  );
}

const ordinal = (n: number) => `${n}${n % 10 === 1 && n % 100 !== 11 ? 'st' : n % 10 === 2 && n % 100 !== 12 ? 'nd' : n % 10 === 3 && n % 100 !== 13 ? 'rd' : 'th'}`;

/** Pause, resume, and a waiting job's place in the queue with the buttons that move it. */
function QueueButtons({ job, label, report }: { job: Job; label: string; report: (problem: string | null) => void }) {
  const { queue } = useServices();
  const waiting = useStore(queue.store, (s) => s.queue?.waiting ?? []);
  const place = waiting.indexOf(job.ticket_number);
  if (job.status === 'paused') {
    return (
      <button type="button" title="Continue from where it stopped" onClick={async () => report(await queue.resume(job.ticket_number))}>
        Resume
      </button>
    );
  }
  if (job.status !== 'running' && job.status !== 'queued') return null;
  return (
    <>
      <button type="button" title="Hold this job; it keeps what it did" onClick={async () => report(await queue.pause(job.ticket_number))}>
        Pause
      </button>
      {job.status === 'queued' && place >= 0 ? (
        <span className="queue-place">
          <span className="hint">{ordinal(place + 1)} in the queue</span>
          <button type="button" aria-label={`Run ${label} next`} disabled={place === 0} onClick={async () => report(await queue.move(job.ticket_number, 'first'))}>
            Run next
          </button>
          <button type="button" aria-label={`Move ${label} up`} title="Move up" disabled={place === 0} onClick={async () => report(await queue.move(job.ticket_number, 'up'))}>
            ↑
          </button>
          <button
            type="button"
            aria-label={`Move ${label} down`}
            title="Move down"
            disabled={place === waiting.length - 1}
            onClick={async () => report(await queue.move(job.ticket_number, 'down'))}
          >
            ↓
          </button>
        </span>
      ) : null}
    </>
  );
}

function JobRow({ view }: { view: JobView }) {
  const { actions, jobs, session, panes, details } = useServices();
  const submission = useStore(jobs.store, (s) => s.submissions[view.job.ticket_number]);
  const [problem, setProblem] = useState<string | null>(null);
  const job = view.job;
  const { bytes_done, bytes_total, files_done, files_total } = job.progress;
  const finished = isFinished(job.status);
  const outcome = outcomeOf(job);
  const unknownTotal = job.status === 'running' && !bytes_total;
  const label = jobLabel(job, submission, session.readableName, (target, id) => {
    for (const side of ['left', 'right'] as const) {
      const state = panes[side].getState();
      const item = state.target === target ? state.items.find((i) => i.id === id) : undefined;
      if (item) return item.title;
    }
    const known = details.get(target, id);
    return known?.state === 'ready' ? known.detail.title : null;
  });
  const eta = etaSeconds(view);
  return (
    <li className={`job job-${job.status} outcome-${outcome}`} aria-label={`${label}: ${STATUS_TEXT[job.status]}`}>
      <div className="job-line">
        <span className="job-label">{label}</span>
        <span className={`job-status status-${job.status}`}>{STATUS_TEXT[job.status]}</span>
      </div>
      <JobProgressBar job={job} label={label} />
      <div className="job-facts">
        <span>
          {formatBytes(bytes_done)}
          {bytes_total !== null ? ` of ${formatBytes(bytes_total)}` : ''}
          {files_total !== null ? ` · ${files_done}/${files_total} files` : files_done ? ` · ${files_done} files` : ''}
          {unknownTotal ? ' · total not known yet' : ''}
        </span>
        {job.status === 'running' && view.speed !== null ? <span>{formatSpeed(view.speed)}</span> : null}
        {job.status === 'running' && eta !== null ? <span>{formatDuration(eta)} left</span> : null}
      </div>
      {job.resumed ? <p className="job-resumed">{resumedText(job)}</p> : null}
      {job.status === 'running' && job.progress.note ? (
        <p className="job-note" role="status">
          {job.progress.note}
        </p>
      ) : null}
      {job.error ? <p className={outcome === 'partial' ? 'job-warning' : 'job-error'}>{job.error}</p> : null}
      {stoppedEarly(job) ? (
        <p className="job-incomplete">
          Incomplete: stopped after {files_done}
          {files_total !== null ? ` of ${files_total}` : ''} files.
        </p>
      ) : null}
      {finished ? <Report job={job} /> : null}
      {finished ? <FailedFiles job={job} /> : null}
      {finished ? <JobLog job={job} /> : null}
      {problem ? (
        <p className="job-error" role="alert">
          {problem}
        </p>
      ) : null}
      <div className="job-actions">
        <QueueButtons job={job} label={label} report={setProblem} />
        {!finished ? (
          <button type="button" onClick={async () => setProblem(await actions.cancelJob(job.ticket_number))}>
            Cancel
          </button>
        ) : null}
        {canRetryFailedFiles(job) ? (
          <button type="button" onClick={async () => setProblem(await actions.retryFailedFiles(job.ticket_number))}>
            {job.kind === 'verify' ? 'Verify again' : 'Retry failed files'}
          </button>
        ) : null}
        {canResume(job) && !canRetryFailedFiles(job) ? (
          <button type="button" onClick={async () => setProblem(await actions.resumeJob(job.ticket_number))}>
            Resume
          </button>
        ) : null}
        {(job.status === 'failed' || job.status === 'cancelled' || (job.kind === 'upload' && job.status === 'completed_with_errors')) &&
        !canRetryFailedFiles(job) && !canResume(job) ? (
          <button type="button" onClick={async () => setProblem(await actions.retryJob(job.ticket_number))}>
            Retry
          </button>
        ) : null}
        {job.kind === 'transfer' && (job.status === 'succeeded' || job.status === 'completed_with_errors') ? (
          <button type="button" title="Compare the source with what the transfer made, file by file" onClick={async () => setProblem(await actions.compareTransfer(job))}>
            Compare
          </button>
        ) : null}
        <button type="button" onClick={() => void actions.openDestination(job)}>
          {job.kind === 'verify' ? 'Show archive' : 'Open destination'}
        </button>
      </div>
    </li>
  );
}

export function JobsPanel() {
  const { jobs, queue, session } = useServices();
  const queueState = useStore(queue.store, (s) => s.queue);
  const [settingsOpen, setSettingsOpen] = useState(false);
  const order = useStore(jobs.store, (s) => s.order);
  const all = useStore(jobs.store, (s) => s.jobs);
  const stream = useStore(jobs.store, (s) => s.stream);
  const loadError = useStore(jobs.store, (s) => s.loadError);
  const running = order.filter((t) => all[t] && !isFinished(all[t]!.job.status)).length;
  return (
    <section className="jobs" aria-label="Jobs">
      <div className="panel-head">
        <h2>
          Jobs{running ? ` (${running} active)` : ''}
        </h2>
        {stream === 'reconnecting' ? <span className="hint">Reconnecting to live updates…</span> : null}
        <span className="queue-summary hint">{queueState ? describeQueue(queueState.settings, session.readableName) : null}</span>
        <button type="button" aria-expanded={settingsOpen} onClick={() => setSettingsOpen(!settingsOpen)}>
          Queue settings
        </button>
        <ClearFinished />
        <CancelAll />
      </div>
      {settingsOpen ? <QueueSettingsForm onClose={() => setSettingsOpen(false)} /> : null}
      {loadError ? (
        <p className="message error" role="alert">
          {loadError}
        </p>
      ) : null}
      {order.length === 0 ? (
        <p className="hint">No jobs yet. Drag items between the panes, or drop files from your desktop onto a pane.</p>
      ) : (
        <ul className="job-list">
          {order.map((ticket) => (all[ticket] ? <JobRow key={ticket} view={all[ticket]!} /> : null))}
        </ul>
      )}
    </section>
  );
}
