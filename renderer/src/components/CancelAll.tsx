// "Cancel all": stops every job still waiting or running, in one click, as queue windows
// (FileZilla, Cyberduck) offer. Shown only when more than one job is unfinished. It says
// what happened: how many were cancelled, and any that could not be, with why.
import { useState } from 'react';
import { useStore } from 'zustand';
import { useServices } from '../services.js';
import { isFinished } from '../stores/jobs.js';

export function CancelAll() {
  const { jobs, actions } = useServices();
  const active = useStore(jobs.store, (s) => s.order.filter((t) => s.jobs[t] && !isFinished(s.jobs[t]!.job.status)).length);
  const [outcome, setOutcome] = useState<{ kind: 'info' | 'error'; text: string } | null>(null);
  const [busy, setBusy] = useState(false);
  return (
    <>
      {active > 1 ? (
        <button
          type="button"
          disabled={busy}
          onClick={async () => {
            setBusy(true);
            setOutcome(await actions.cancelAll());
            setBusy(false);
          }}
        >
          Cancel all ({active})
        </button>
      ) : null}
      {outcome ? (
        <span className={`hint${outcome.kind === 'error' ? ' bad' : ''}`} role={outcome.kind === 'error' ? 'alert' : 'status'}>
          {outcome.text}
        </span>
      ) : null}
    </>
  );
}
