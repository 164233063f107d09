// The queue's own controls, as transfer windows (FileZilla, Cyberduck) offer them: clear the
// finished jobs, and the settings — how many jobs run at once, a limit per service, one
// bandwidth limit for all, and a desktop notification when a long job ends.
import { useState, type FormEvent } from 'react';
import { useStore } from 'zustand';
import type { QueueSettings } from '../../../shared/api.js';
import { formatSpeed } from '../format.js';
import { useServices } from '../services.js';
import { isFinished } from '../stores/jobs.js';

const MIB = 1024 * 1024;

export function ClearFinished() {
  const { jobs, queue } = useServices();
  const finished = useStore(jobs.store, (s) => s.order.filter((t) => s.jobs[t] && isFinished(s.jobs[t]!.job.status)).length);
  const [problem, setProblem] = useState<string | null>(null);
  if (finished === 0 && !problem) return null;
  return (
    <>
      {finished > 0 ? (
        <button type="button" title="Remove every finished job from the list" onClick={async () => setProblem(await queue.clearFinished())}>
          Clear finished ({finished})
        </button>
      ) : null}
      {problem ? (
        <span className="hint bad" role="alert">
          {problem}
        </span>
      ) : null}
    </>
  );
}

/** The settings as a person reads them: "no limit", or megabytes a second. */
export function describeQueue(settings: QueueSettings, readableName: (target: string) => string): string {
  const limits = Object.entries(settings.per_target).map(([target, n]) => `${readableName(target)} ${n}`);
  return [
    `${settings.concurrency} at once`,
    settings.bandwidth_limit === null ? 'no bandwidth limit' : `limited to ${formatSpeed(settings.bandwidth_limit)}`,
    ...(limits.length ? [`per service: ${limits.join(', ')}`] : []),
  ].join(' · ');
}

export function QueueSettingsForm({ onClose }: { onClose: () => void }) {
  const { queue, session } = useServices();
  const state = useStore(queue.store, (s) => s.queue);
  const targets = useStore(session.store, (s) => s.targets);
  const settings = state?.settings;
  const [concurrency, setConcurrency] = useState(String(settings?.concurrency ?? 2));
  const [bandwidth, setBandwidth] = useState(settings?.bandwidth_limit ? String(+(settings.bandwidth_limit / MIB).toFixed(2)) : '');
  const [perTarget, setPerTarget] = useState<Record<string, number>>(settings?.per_target ?? {});
  const [adding, setAdding] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const [notify, setNotify] = useState(typeof Notification !== 'undefined' && Notification.permission === 'granted');

  async function save(event: FormEvent) {
    event.preventDefault();
    const megabytes = bandwidth.trim() === '' ? null : Number(bandwidth);
    if (megabytes !== null && !(megabytes > 0)) return setProblem('The bandwidth limit is a number of megabytes a second, or empty for no limit.');
    const answer = await queue.configure({
      concurrency: Number(concurrency),
      per_target: perTarget,
      bandwidth_limit: megabytes === null ? null : Math.max(1024, Math.round(megabytes * MIB)),
    });
    setProblem(answer);
    if (answer === null) onClose();
  }

  return (
    <form className="queue-settings" aria-label="Queue settings" onSubmit={save}>
      <label>
        Jobs at once
        <input type="number" min={1} max={16} required value={concurrency} onChange={(e) => setConcurrency(e.target.value)} />
      </label>
      <label>
        Bandwidth limit (MB/s)
        <input type="number" min={0.001} step="any" placeholder="no limit" value={bandwidth} onChange={(e) => setBandwidth(e.target.value)} />
      </label>
      <fieldset>
        <legend>Jobs at once per service</legend>
        {Object.entries(perTarget).map(([target, limit]) => (
          <label key={target}>
            {session.readableName(target)}
            <input
              type="number"
              min={1}
              max={16}
              value={limit}
              onChange={(e) => setPerTarget({ ...perTarget, [target]: Number(e.target.value) })}
            />
            <button
              type="button"
              aria-label={`Remove the limit for ${session.readableName(target)}`}
              onClick={() => setPerTarget(Object.fromEntries(Object.entries(perTarget).filter(([t]) => t !== target)))}
            >
              Remove
            </button>
          </label>
        ))}
        <label>
          Add a limit for
          <select value={adding} onChange={(e) => setAdding(e.target.value)}>
            <option value="">a service…</option>
            {targets
              .filter((t) => !(t.name in perTarget))
              .map((t) => (
                <option key={t.name} value={t.name}>
                  {t.readable_name}
                </option>
              ))}
          </select>
        </label>
        <button type="button" disabled={!adding} onClick={() => (setPerTarget({ ...perTarget, [adding]: 1 }), setAdding(''))}>
          Add
        </button>
      </fieldset>
      {typeof Notification !== 'undefined' ? (
        <label className="check">
          <input
            type="checkbox"
            checked={notify}
            disabled={Notification.permission === 'denied'}
            onChange={async (e) => setNotify(e.target.checked && (await Notification.requestPermission()) === 'granted')}
          />
          Notify me when a long job ends{Notification.permission === 'denied' ? ' (blocked in this browser’s settings)' : ''}
        </label>
      ) : null}
      {problem ? (
        <p className="message error" role="alert">
          {problem}
        </p>
      ) : null}
      <div className="job-actions">
        <button type="submit">Save</button>
        <button type="button" onClick={onClose}>
          Cancel
        </button>
      </div>
    </form>
  );
}
