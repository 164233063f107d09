// One service's account: its fields (accounts/account-kinds.ts), Test, Save, Forget.
// Invariants: Test never saves; Save is offered only for exactly the values that last
// passed a test (any edit takes the offer back); after Save the fields are emptied, so no
// secret stays in the DOM. The token goes to the core only (PUT /app/tokens/<t>), which
// keeps it in the keychain; it is never written to web storage and never logged.
import { useId, useState } from 'react';
import { messageOf } from '../api/client.js';
import type { SessionTarget } from '../api/app-types.js';
import { accountKind, composeToken, isEmpty } from '../accounts/account-kinds.js';
import { useServices } from '../services.js';

type Status = { kind: 'ok' | 'error' | 'info'; text: string } | null;

export function AccountForm({ target }: { target: SessionTarget }) {
  const { api, session } = useServices();
  const kind = accountKind(target.name);
  const id = useId();
  const [values, setValues] = useState<Record<string, string>>({});
  /** the token that passed the last test, held only until saved or edited */
  const [passed, setPassed] = useState<string | null>(null);
  const [status, setStatus] = useState<Status>(null);
  const [busy, setBusy] = useState(false);
  const empty = isEmpty(values);
  const name = target.readable_name;

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

  function edit(key: string, value: string) {
    setValues((v) => ({ ...v, [key]: value }));
    if (passed !== null) {
      setPassed(null);
      setStatus(null);
    }
  }

  async function test(): Promise<Status> {
    setPassed(null);
    if (empty) {
      await api.testToken(target.name);
      return { kind: 'ok', text: `The stored account works: ${name} accepted it.` };
    }
    const composed = composeToken(kind, values, name);
    if ('problem' in composed) return { kind: 'error', text: composed.problem };
    await api.testToken(target.name, composed.token);
    setPassed(composed.token);
    return { kind: 'ok', text: `${name} accepted these details. Nothing is saved yet: Save keeps them in the keychain.` };
  }

  async function save(): Promise<Status> {
    if (passed === null) return null;
    await api.saveToken(target.name, passed);
    setPassed(null);
    setValues({});
    await session.load();
    return { kind: 'ok', text: `Saved: ${name} is ready to browse.` };
  }

  return (
    <form
      className="account-form"
      aria-label={`${name} account`}
      onSubmit={(event) => {
        event.preventDefault();
        void run(passed !== null ? save : test);
      }}
    >
      <h3>{name}</h3>
      <p className="hint">{target.has_stored_token ? 'An account is stored in the keychain.' : 'No account stored yet.'}</p>
      <p className="hint account-help">
        {kind.help.text}{' '}
        {kind.help.href ? (
          <a href={kind.help.href} target="_blank" rel="noreferrer noopener">
            Make a token
          </a>
        ) : null}
        {kind.help.scopes ? (
          <>
            <br />
            Scopes: {kind.help.scopes}
          </>
        ) : null}
      </p>
      {kind.fields.map((field) => (
        <label className="field" key={field.key} htmlFor={`${id}-${field.key}`}>
          <span>
            {field.label}
            {field.required ? '' : ' (optional)'}
          </span>
          <input
            id={`${id}-${field.key}`}
            type={field.kind === 'secret' ? 'password' : field.kind === 'url' ? 'url' : 'text'}
            autoComplete="off"
            spellCheck={false}
            value={values[field.key] ?? ''}
            placeholder={field.kind === 'secret' && target.has_stored_token ? 'Enter a new one to replace the stored account' : field.placeholder}
            onChange={(event) => edit(field.key, event.target.value)}
          />
        </label>
      ))}
      <div className="dialog-buttons">
        <button type="button" disabled={busy || (empty && !target.has_stored_token)} onClick={() => void run(test)}>
          Test
        </button>
        <button type="button" disabled={busy || passed === null} onClick={() => void run(save)} title={passed === null ? 'Test first: only details that pass are saved' : undefined}>
          Save
        </button>
        <button
          type="button"
          disabled={busy || !target.has_stored_token}
          onClick={() =>
            void run(async () => {
              await api.forgetToken(target.name);
              await session.load();
              return { kind: 'info', text: `The ${name} account is forgotten.` };
            })
          }
        >
          Forget
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
