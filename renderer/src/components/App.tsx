// The window: two panes side by side, details on demand, the jobs below.
import { useEffect } from 'react';
import { useStore } from 'zustand';
import type { Job } from '../../../shared/api.js';
import type { MenuCommand, UiState } from '../../../shared/ipc.js';
import { otherSide } from '../actions.js';
import { forgetAccessKey } from '../api/connection.js';
import { notifyJobEnds, pageNotifier, showQueueProgress } from '../job-notices.js';
import { useServices, type Services } from '../services.js';
import { locationOf, type PaneSide } from '../stores/pane.js';
import { AccountsDialog } from './AccountsDialog.js';
import { CheckDialog } from './CheckFindings.js';
import { ConfirmDialog } from './ConfirmDialog.js';
import { DetailPanel } from './DetailPanel.js';
import { DuplicateDialog } from './DuplicateDialog.js';
import { FolderModeDialog } from './FolderModeDialog.js';
import { jobLabel, JobsPanel } from './JobsPanel.js';
import { LocalFoldersDialog } from './LocalFoldersDialog.js';
import { MetadataReviewDialog } from './MetadataReviewDialog.js';
import { focusPane, Pane } from './Pane.js';
import { Places } from './Places.js';
import { TextDialog } from './TextDialog.js';

/** Picks sensible first locations: the remembered ones, else local | offline. */
export async function restorePanes(services: Services): Promise<void> {
  const saved = await services.uiState.read();
  const names = services.session.store.getState().targets.map((t) => t.name);
  const defaults: Record<PaneSide, string | null> = {
    left: names.includes('local') ? 'local' : (names[0] ?? null),
    right: names.includes('offline') ? 'offline' : (names[1] ?? names[0] ?? null),
  };
  await Promise.all(
    (['left', 'right'] as const).map((side) => {
      const location = saved?.panes?.[side];
      if (location?.target && names.includes(location.target)) {
        return services.panes[side].getState().setTarget(location.target, location.trail ?? []);
      }
      return services.panes[side].getState().setTarget(defaults[side]);
    }),
  );
}

function persistLocations(services: Services): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const save = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      const state: UiState = {
        panes: {
          left: locationOf(services.panes.left.getState()),
          right: locationOf(services.panes.right.getState()),
        },
      };
      void services.uiState.write(state);
    }, 300);
  };
  const stops = (['left', 'right'] as const).map((side) =>
    services.panes[side].subscribe((next, previous) => {
      if (next.target !== previous.target || next.trail !== previous.trail) save();
    }),
  );
  // a reload or close right after a move must not lose it
  const flush = () => {
    if (timer === undefined) return;
    clearTimeout(timer);
    timer = undefined;
    void services.uiState.write({
      panes: { left: locationOf(services.panes.left.getState()), right: locationOf(services.panes.right.getState()) },
    });
  };
  window.addEventListener('pagehide', flush);
  return () => {
    window.removeEventListener('pagehide', flush);
    clearTimeout(timer);
    stops.forEach((stop) => stop());
  };
}

function runMenuCommand(services: Services, command: MenuCommand): void {
  const side = services.ui.getState().active;
  const { actions, ui } = services;
  switch (command) {
    case 'refresh':
      void actions.refresh(side);
      break;
    case 'new-folder':
      void actions.newFolder(side);
      break;
    case 'transfer':
      void actions.transferSelection(side, otherSide(side));
      break;
    case 'download':
      void actions.download(side, false);
      break;
    case 'verify':
      void actions.verify(side);
      break;
    case 'accounts':
      ui.setState({ accountsOpen: true });
      break;
    case 'toggle-jobs':
      document.querySelector<HTMLElement>('.jobs')?.scrollIntoView();
      break;
    case 'upload':
      document.querySelector<HTMLInputElement>(`[data-testid="${side}-file-input"]`)?.click();
      break;
  }
}

/** Desktop notifications of long jobs' ends, and the taskbar progress in the desktop app. */
function startJobNotices(services: Services): () => void {
  const { jobs, session, bridge } = services;
  const notifier = pageNotifier();
  const label = (job: Job) => jobLabel(job, jobs.store.getState().submissions[job.ticket_number], session.readableName, () => null);
  const stops = [notifier ? notifyJobEnds(jobs, notifier, label) : null, bridge ? showQueueProgress(jobs, bridge) : null];
  return () => {
    for (const stop of stops) stop?.();
  };
}

export function useStartup(services: Services): void {
  useEffect(() => {
    const controller = new AbortController();
    void (async () => {
      await Promise.all([services.session.load(), services.localRoots.load()]);
      await restorePanes(services);
      focusPane('left');
    })();
    services.actions.followJobs(controller.signal);
    void services.queue.load();
    const stopNotices = startJobNotices(services);
    const stopPersist = persistLocations(services);
    const stopMenu = services.bridge?.onMenu((command) => runMenuCommand(services, command));
    return () => {
      controller.abort();
      stopNotices();
      stopPersist();
      stopMenu?.();
    };
  }, [services]);
}

export function App() {
  const services = useServices();
  useStartup(services);
  const { ui, session, duplicates } = services;
  const detailOpen = useStore(ui, (s) => s.detailOpen);
  const sessionError = useStore(session.store, (s) => s.error);
  const keyRejected = useStore(session.store, (s) => s.errorStatus === 401);
  const version = useStore(session.store, (s) => s.session?.version);
  const provenance = useStore(ui, (s) => s.provenance);
  return (
    <div className="app">
      <header className="app-head">
        <h1>Ferry</h1>
        <span className="hint">{version ? `v${version}` : ''}</span>
        <div className="spacer" />
        <label className="provenance-toggle" title="Every upload and transfer writes ferry-provenance.json at the top of what it wrote: where each file came from and whether its hashes matched">
          <input type="checkbox" checked={!provenance} onChange={(event) => ui.setState({ provenance: !event.target.checked })} />
          Don't add a provenance file
        </label>
        <button type="button" aria-pressed={detailOpen} onClick={() => ui.setState({ detailOpen: !detailOpen })}>
          Details
        </button>
        <button type="button" onClick={() => ui.setState({ accountsOpen: true })}>
          Accounts
        </button>
      </header>
      {sessionError ? (
        <div className="message error" role="alert">
          <span>
            {keyRejected
              ? `The access key this page has is not accepted any more (was Ferry restarted with another data directory?). ${sessionError}`
              : `Ferry's core could not be reached: ${sessionError}`}
          </span>
          <button type="button" onClick={() => void session.load().then(() => restorePanes(services))}>
            Try again
          </button>
          {keyRejected && !services.bridge ? (
            <button
              type="button"
              onClick={() => {
                // back to the sign-in screen: forget the key this tab kept, load the page afresh
                forgetAccessKey(window.sessionStorage);
                window.location.reload();
              }}
            >
              Sign in again
            </button>
          ) : null}
        </div>
      ) : null}
      <div className="app-body">
        <Places />
        <main className={`panes${detailOpen ? ' with-detail' : ''}`}>
          <Pane side="left" />
          <Pane side="right" />
          {detailOpen ? <DetailPanel /> : null}
        </main>
      </div>
      <JobsPanel />
      <AccountsDialog />
      <LocalFoldersDialog />
      <DuplicateDialog prompt={duplicates} />
      <TextDialog ui={ui} />
      <ConfirmDialog ui={ui} />
      <CheckDialog />
      <MetadataReviewDialog />
      <FolderModeDialog ui={ui} />
    </div>
  );
}
