// Accounts, as a site manager: the services on the left (a tab list, arrow keys move),
// the chosen service's form on the right (AccountForm). Which tab is open is the only state
// here; the forms own their fields and the rule that only tested details are saved.
import { useState, type KeyboardEvent } from 'react';
import { useStore } from 'zustand';
import { useServices } from '../services.js';
import { AccountForm } from './AccountForm.js';
import { Dialog } from './Dialog.js';
import { RcloneRemoteForm } from './RcloneRemoteForm.js';
import { ACTION_LABELS } from './DuplicateDialog.js';

/** the tab that adds rclone remotes, after the services */
const RCLONE_TAB = 'rclone-remotes';

export function AccountsDialog() {
  const { ui, session, duplicates } = useServices();
  const open = useStore(ui, (s) => s.accountsOpen);
  const wanted = useStore(ui, (s) => s.accountsTarget);
  const current = useStore(session.store, (s) => s.session);
  const [chosen, setChosen] = useState<string | null>(null);
  const [rememberedCleared, setCleared] = useState(false);
  if (!open) return null;
  const remotes = (current?.targets ?? []).filter((t) => t.credential === 'remote');
  const tabs = [...remotes.map((t) => t.name), RCLONE_TAB];
  const rcloneChosen = chosen === RCLONE_TAB;
  const selected = rcloneChosen ? undefined : (remotes.find((t) => t.name === (chosen ?? wanted)) ?? remotes[0]);
  const currentTab = rcloneChosen ? RCLONE_TAB : (selected?.name ?? RCLONE_TAB);
  const remembered = duplicates.remembered();
  const close = () => {
    setChosen(null);
    ui.setState({ accountsOpen: false, accountsTarget: null });
  };

  function onTabKey(event: KeyboardEvent<HTMLDivElement>) {
    if (!['ArrowDown', 'ArrowUp', 'Home', 'End'].includes(event.key)) return;
    event.preventDefault();
    const at = tabs.indexOf(currentTab);
    const next =
      event.key === 'Home' ? 0 : event.key === 'End' ? tabs.length - 1 : (at + (event.key === 'ArrowDown' ? 1 : -1) + tabs.length) % tabs.length;
    setChosen(tabs[next]!);
    event.currentTarget.querySelectorAll<HTMLElement>('[role=tab]')[next]?.focus();
  }

  return (
    <Dialog title="Accounts" className="accounts" onCancel={close}>
      {current && !current.keychain.persistent ? (
        <p className="message info">
          No system keychain could be used, so accounts are kept for this run only. Ferry asks again after a restart.
        </p>
      ) : current ? (
        <p className="hint">Accounts are stored in {current.keychain.description || 'the system keychain'}.</p>
      ) : null}
      <div className="accounts-body">
        <div role="tablist" aria-orientation="vertical" aria-label="Services" className="account-list" onKeyDown={onTabKey}>
          {remotes.map((t) => (
            <button
              key={t.name}
              type="button"
              role="tab"
              id={`account-tab-${t.name}`}
              aria-selected={t === selected}
              aria-controls="account-panel"
              tabIndex={t === selected ? 0 : -1}
              onClick={() => setChosen(t.name)}
            >
              <span>{t.readable_name}</span>
              {t.has_stored_token ? <span className="stored" aria-label="account stored" title="An account is stored">●</span> : null}
            </button>
          ))}
          <button
            type="button"
            role="tab"
            id={`account-tab-${RCLONE_TAB}`}
            aria-selected={rcloneChosen || !selected}
            aria-controls="account-panel"
            tabIndex={rcloneChosen || !selected ? 0 : -1}
            onClick={() => setChosen(RCLONE_TAB)}
          >
            <span>Add rclone remote</span>
          </button>
        </div>
        <div role="tabpanel" id="account-panel" aria-labelledby={`account-tab-${currentTab}`} className="account-panel">
          {selected ? <AccountForm key={selected.name} target={selected} /> : <RcloneRemoteForm />}
        </div>
      </div>
      {remembered && !rememberedCleared ? (
        <p className="hint">
          For files that already exist, Ferry always chooses “{ACTION_LABELS[remembered]}”.{' '}
          <button
            type="button"
            onClick={() => {
              duplicates.forget();
              setCleared(true);
            }}
          >
            Ask again
          </button>
        </p>
      ) : null}
      <div className="dialog-buttons">
        <button type="button" onClick={close}>
          Close
        </button>
      </div>
    </Dialog>
  );
}
