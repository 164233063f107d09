// What a check job (docs/api.md "Check") found: a line in the job list, and a dialog with the
// four lists — missing, extra, different, not comparable — each path with why. A check that
// compared files by size only says so: equal sizes are not proof of equal bytes.
import { useStore } from 'zustand';
import type { CheckDifference, CheckReport, Job } from '../../../shared/api.js';
import { formatBytes } from '../format.js';
import { useServices } from '../services.js';
import { Dialog } from './Dialog.js';
import { jobLabel } from './JobsPanel.js';

function countsOf(check: CheckReport): string {
  const parts = [
    `${check.matched} matched`,
    check.missing.length ? `${check.missing.length} missing` : '',
    check.extra.length ? `${check.extra.length} extra` : '',
    check.different.length ? `${check.different.length} different` : '',
    check.not_comparable.length ? `${check.not_comparable.length} not comparable` : '',
  ].filter(Boolean);
  return parts.join(', ') + '.';
}

function howCompared(check: CheckReport): string {
  const algorithms = Object.entries(check.algorithms).map(([name, n]) => `${n} by ${name}`);
  const byHash = check.compared_by.hash ? `${check.compared_by.hash} compared by hash${algorithms.length ? ` (${algorithms.join(', ')})` : ''}` : '';
  const bySize = check.compared_by.size ? `${check.compared_by.size} by size only (no hash in common; equal sizes do not prove equal bytes)` : '';
  return [byHash, bySize].filter(Boolean).join('; ');
}

export function CheckSummary({ job }: { job: Job }) {
  const { ui } = useServices();
  const check = job.report?.check;
  if (!check) return null;
  return (
    <div className="job-report">
      <span>{countsOf(check)}</span>{' '}
      <button type="button" className="link-button" onClick={() => ui.setState({ checkShown: job.ticket_number })}>
        Show findings
      </button>
    </div>
  );
}

function different(entry: CheckDifference): string {
  if (entry.by === 'size') return `sizes differ: ${formatBytes(entry.source)} here, ${formatBytes(entry.destination)} in the copy`;
  if (entry.by === 'kind') return `a ${entry.source} here, a ${entry.destination} in the copy`;
  return `${entry.algorithm} differs: ${entry.source.slice(0, 12)}… here, ${entry.destination.slice(0, 12)}… in the copy`;
}

function Section(props: { title: string; explain: string; rows: { path: string; why?: string }[] }) {
  if (props.rows.length === 0) return null;
  return (
    <section className="check-section" aria-label={props.title}>
      <h3>
        {props.title} ({props.rows.length})
      </h3>
      <p className="hint">{props.explain}</p>
      <ul>
        {props.rows.map((row) => (
          <li key={row.path}>
            <code>{row.path}</code>
            {row.why ? <span> — {row.why}</span> : null}
          </li>
        ))}
      </ul>
    </section>
  );
}

export function CheckDialog() {
  const { ui, jobs, actions, session } = useServices();
  const ticket = useStore(ui, (s) => s.checkShown);
  const view = useStore(jobs.store, (s) => (ticket ? s.jobs[ticket] : undefined));
  const submission = useStore(jobs.store, (s) => (ticket ? s.submissions[ticket] : undefined));
  if (!ticket || !view) return null;
  const { job } = view;
  const label = jobLabel(job, submission, (t) => session.readableName(t), () => null);
  const check = job.report?.check;
  const close = () => ui.setState({ checkShown: null });
  const clean = check && !check.missing.length && !check.extra.length && !check.different.length && !check.not_comparable.length;
  return (
    <Dialog title="Comparison" onCancel={close} className="check-dialog">
      <p className="check-label">{label}</p>
      {!check ? (
        <p className="bad">{job.error ?? 'The comparison did not finish, so there are no findings.'}</p>
      ) : (
        <>
          <p className={clean ? 'good' : 'bad'}>
            {clean ? 'Both sides hold the same files. ' : 'The two sides differ. '}
            {countsOf(check)}
          </p>
          <p className="hint">{howCompared(check)}</p>
          <Section title="Missing" explain="Here, and not in the copy." rows={check.missing.map((path) => ({ path }))} />
          <Section title="Extra" explain="In the copy, and not here." rows={check.extra.map((path) => ({ path }))} />
          <Section title="Different" explain="On both sides, with different contents." rows={check.different.map((d) => ({ path: d.path, why: different(d) }))} />
          <Section
            title="Not comparable"
            explain="On both sides, but with no hash in common and a size unknown on one side, or unreadable."
            rows={check.not_comparable.map((n) => ({ path: n.path, why: n.reason }))}
          />
        </>
      )}
      <div className="dialog-buttons">
        {check && check.not_comparable.length > 0 && !check.read_bytes ? (
          <button
            type="button"
            title="Reads the files' bytes to compare them: may be slow, or cost traffic on a remote"
            onClick={() => {
              close();
              void actions.compareReadingBytes(job);
            }}
          >
            Compare by reading the bytes
          </button>
        ) : null}
        <button type="button" onClick={close}>
          Close
        </button>
      </div>
    </Dialog>
  );
}
