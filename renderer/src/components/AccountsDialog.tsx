// Tokens for remote targets. A token goes straight to the core (PUT /app/tokens/<t>), which
// keeps it in the OS keychain; the renderer forgets it as soon as it is sent. It is never
// written to localStorage and never logged.
import { useState } from 'react';
import { useStore } from 'zustand';
import { messageOf } from '../api/client.js';
import type { SessionTarget } from '../api/app-types.js';
import { useServices } from '../services.js';
import { Dialog } from './Dialog.js';

type Status = { kind: 'ok' | 'error' | 'info'; text: string } | null;

export function TokenForm({ target }: { target: SessionTarget }) {
  const { api, session } = useServices();
  const [token, setToken] = useState('');
  const [status, setStatus] = useState<Status>(null);
  const [busy, setBusy] = useState(false);

  async function run(work: () => Promise<Status>) {
    setBusy(true);
    try {
      setStatus(await work());
    } catch (error) {
      setStatus({ kind: 'error', text: messageOf(error) });
    } finally {
      setBusy(false);
    }
  }

  return (
    <form
      className="token-form"
      aria-label={`${target.readable_name} token`}
      onSubmit={(event) => {
        event.preventDefault();
        void run(async () => {
          await api.saveToken(target.name, token);
          setToken('');
          await session.load();
          return { kind: 'ok', text: 'Token saved.' };
        });
      }}
    >
      <h3>{target.readable_name}</h3>
      <p className="hint">{target.has_stored_token ? 'A token is stored.' : 'No token stored yet.'}</p>
      <label className="field">
        <span>Token</span>
        <input
          type="password"
          autoComplete="off"
          spellCheck={false}
          value={token}
          onChange={(event) => setToken(event.target.value)}
          placeholder={target.has_stored_token ? 'Paste a new token to replace it' : 'Paste a personal access token'}
        />
      </label>
      <div className="dialog-buttons">
        <button type="submit" disabled={busy || token.trim() === ''}>
          Save token
        </button>
        <button
          type="button"
          disabled={busy || (!target.has_stored_token && token.trim() === '')}
          onClick={() =>
            void run(async () => {
              if (token.trim() !== '') {
                await api.saveToken(target.name, token);
                setToken('');
                await session.load();
              }
              await api.testToken(target.name);
              return { kind: 'ok', text: `The token works: ${target.readable_name} accepted it.` };
            })
          }
        >
          Test token
        </button>
        <button
          type="button"
          disabled={busy || !target.has_stored_token}
          onClick={() =>
            void run(async () => {
              await api.forgetToken(target.name);
              await session.load();
              return { kind: 'info', text: 'Token forgotten.' };
            })
          }
        >
          Forget token
        </button>
      </div>
      {status ? (
        <p className={`message ${status.kind}`} role={status.kind === 'error' ? 'alert' : 'status'}>
          {status.text}
        </p>
      ) : null}
    </form>
  );
}

export function AccountsDialog() {
  const { ui, session, duplicates } = useServices();
  const open = useStore(ui, (s) => s.accountsOpen);
  const current = useStore(session.store, (s) => s.session);
  const [rememberedCleared, setCleared] = useState(false);
  if (!open) return null;
  const remotes = (current?.targets ?? []).filter((t) => t.credential === 'remote');
  const remembered = duplicates.remembered();
  return (
    <Dialog title="Accounts" className="accounts" onCancel={() => ui.setState({ accountsOpen: false })}>
      {current && !current.keychain.persistent ? (
        <p className="message info">
          No system keychain could be used, so tokens are kept for this run only. Ferry asks again after a restart.
        </p>
      ) : current ? (
        <p className="hint">Tokens are stored in {current.keychain.description || 'the system keychain'}.</p>
      ) : null}
      {remotes.length === 0 ? <p className="hint">No remote targets need a token.</p> : null}
      {remotes.map((target) => (
        <TokenForm key={target.name} target={target} />
      ))}
      {remembered && !rememberedCleared ? (
        <p className="hint">
          For files that already exist, Ferry always {remembered === 'ignore' ? 'skips them' : 'replaces changed ones'}.{' '}
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
        <button type="button" onClick={() => ui.setState({ accountsOpen: false })}>
          Close
        </button>
      </div>
    </Dialog>
  );
}
