// "Add rclone remote" in Accounts (#20): a typed form per remote type (accounts/rclone-kinds.ts),
// never JSON. "Test and add" sends PUT /app/rclone-remotes/<name>; the server opens the remote
// and lists its top level before it keeps anything, so a remote that fails is not added and its
// sentence is shown. After a success the fields are emptied (no secret stays in the page) and
// the places list is loaded again, where the remote now is. The remotes added are listed by name
// and type only: their options, secrets included, are never sent back.
import { useEffect, useId, useState } from 'react';
import { messageOf } from '../api/client.js';
import type { RcloneRemotesAnswer } from '../api/app-types.js';
import { RCLONE_KINDS, rcloneKind, rcloneOptions, remoteNameProblem, type RcloneField, type RcloneType } from '../accounts/rclone-kinds.js';
import { useServices } from '../services.js';

type Status = { kind: 'ok' | 'error' | 'info'; text: string } | null;

function FieldInput(props: { id: string; field: RcloneField; value: string; onChange(value: string): void }) {
  const { field, id } = props;
  const common = { id, value: props.value, required: field.required, 'aria-describedby': field.help ? `${id}-help` : undefined };
  if (field.kind === 'choice') {
    return (
      <select {...common} onChange={(event) => props.onChange(event.target.value)}>
        <option value="">Choose…</option>
        {field.choices!.map((choice) => (
          <option key={choice.value} value={choice.value}>
            {choice.label}
          </option>
        ))}
      </select>
    );
  }
  if (field.kind === 'pem') {
    return <textarea {...common} rows={4} spellCheck={false} autoComplete="off" onChange={(event) => props.onChange(event.target.value)} />;
  }
  return (
    <input
      {...common}
      type={field.kind === 'secret' ? 'password' : field.kind === 'url' ? 'url' : 'text'}
      inputMode={field.kind === 'number' ? 'numeric' : undefined}
      autoComplete={field.kind === 'secret' ? 'new-password' : 'off'}
      spellCheck={false}
      onChange={(event) => props.onChange(event.target.value)}
    />
  );
}

export function RcloneRemoteForm() {
  const { api, session } = useServices();
  const id = useId();
  const [answer, setAnswer] = useState<RcloneRemotesAnswer | null>(null);
  const [type, setType] = useState<RcloneType>('s3');
  const [name, setName] = useState('');
  const [values, setValues] = useState<Record<string, string>>({});
  const [status, setStatus] = useState<Status>(null);
  const [busy, setBusy] = useState(false);
  const kind = rcloneKind(type);

  const reload = async () => {
    try {
      setAnswer(await api.rcloneRemotes());
    } catch (error) {
      setStatus({ kind: 'error', text: `The rclone remotes could not be listed: ${messageOf(error)}` });
    }
  };
  useEffect(() => void reload(), []); // eslint-disable-line react-hooks/exhaustive-deps

  async function add(): Promise<void> {
    const nameProblem = remoteNameProblem(name);
    const built = rcloneOptions(type, values);
    if (nameProblem || 'problem' in built) {
      setStatus({ kind: 'error', text: nameProblem ?? (built as { problem: string }).problem });
      return;
    }
    setBusy(true);
    setStatus({ kind: 'info', text: `Opening the ${type} remote “${name}”…` });
    try {
      const remote = await api.putRcloneRemote(name, type, built.options);
      setValues({}); // no secret stays in the page
      setName('');
      setStatus({ kind: 'ok', text: `Added: “${remote.name}” opened, and is in the places list now.` });
      await Promise.all([reload(), session.load()]);
    } catch (error) {
      setStatus({ kind: 'error', text: `Not added (nothing was kept): ${messageOf(error)}` });
    } finally {
      setBusy(false);
    }
  }

  async function remove(remote: string): Promise<void> {
    try {
      await api.removeRcloneRemote(remote);
      setStatus({ kind: 'info', text: `“${remote}” was removed, with its settings; its files stay where they are.` });
      await Promise.all([reload(), session.load()]);
    } catch (error) {
      setStatus({ kind: 'error', text: messageOf(error) });
    }
  }

  if (answer && !answer.available) {
    return (
      <div className="account-form">
        <h3>rclone remotes</h3>
        <p className="hint">rclone is not available to Ferry (not installed, or turned off), so no rclone remote can be added here.</p>
      </div>
    );
  }
  return (
    <form
      className="account-form"
      aria-label="Add rclone remote"
      onSubmit={(event) => {
        event.preventDefault();
        void add();
      }}
    >
      <h3>Add rclone remote</h3>
      {answer && answer.remotes.length > 0 ? (
        <ul className="remote-list" aria-label="rclone remotes added in Ferry">
          {answer.remotes.map((remote) => (
            <li key={remote.name}>
              <span>
                {remote.name} <span className="hint">({remote.type})</span>
              </span>
              <button type="button" aria-label={`Remove ${remote.name}`} onClick={() => void remove(remote.name)}>
                Remove
              </button>
            </li>
          ))}
        </ul>
      ) : null}
      <div className="field">
        <label htmlFor={`${id}-type`}>Type</label>
        <select
          id={`${id}-type`}
          value={type}
          onChange={(event) => {
            setType(event.target.value as RcloneType);
            setValues({});
            setStatus(null);
          }}
        >
          {RCLONE_KINDS.map((k) => (
            <option key={k.type} value={k.type}>
              {k.label}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor={`${id}-name`}>Name</label>
        <input id={`${id}-name`} value={name} required spellCheck={false} autoComplete="off" aria-describedby={`${id}-name-help`} onChange={(event) => setName(event.target.value)} />
        <span className="hint" id={`${id}-name-help`}>
          Lowercase letters, digits, - and _; it appears as a place named after it.
        </span>
      </div>
      {kind.fields.map((field) => (
        <div className="field" key={`${type}-${field.key}`}>
          <label htmlFor={`${id}-${field.key}`}>
            {field.label}
            {field.required ? '' : ' (optional)'}
          </label>
          <FieldInput id={`${id}-${field.key}`} field={field} value={values[field.key] ?? ''} onChange={(value) => setValues((v) => ({ ...v, [field.key]: value }))} />
          {field.help ? (
            <span className="hint" id={`${id}-${field.key}-help`}>
              {field.help}
            </span>
          ) : null}
        </div>
      ))}
      {status ? (
        <p className={`message ${status.kind}`} role={status.kind === 'error' ? 'alert' : 'status'}>
          {status.text}
        </p>
      ) : null}
      <div className="dialog-buttons">
        <button type="submit" className="primary" disabled={busy}>
          Test and add
        </button>
      </div>
    </form>
  );
}
