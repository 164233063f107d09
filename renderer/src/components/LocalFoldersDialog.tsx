// Local folders of the person's choosing: add one (a path field; in Electron also the
// native folder picker), name it, remove it, each with its real path shown. The core
// validates and keeps the list (PUT/DELETE /app/local-roots); this dialog shows its answer
// or its sentence, and reads the list again after every change instead of guessing.
import { useEffect, useState } from 'react';
import { useStore } from 'zustand';
import { messageOf } from '../api/client.js';
import type { LocalRoot } from '../api/app-types.js';
import { WORKSPACE_TARGET } from '../places.js';
import { useServices } from '../services.js';
import { Dialog } from './Dialog.js';

type Status = { kind: 'ok' | 'error'; text: string } | null;

export function LocalFoldersDialog() {
  const { ui } = useServices();
  const open = useStore(ui, (s) => s.localFoldersOpen);
  if (!open) return null;
  return <LocalFoldersManager close={() => ui.setState({ localFoldersOpen: false })} />;
}

function LocalFoldersManager({ close }: { close(): void }) {
  const { api, bridge, session, localRoots, panes } = useServices();
  const answer = useStore(localRoots.store, (s) => s.answer);
  const [folder, setFolder] = useState('');
  const [label, setLabel] = useState('');
  const [status, setStatus] = useState<Status>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    void localRoots.load();
  }, [localRoots]);

  async function run(work: () => Promise<string>) {
    setBusy(true);
    try {
      const text = await work();
      await Promise.all([localRoots.load(), session.load()]);
      setStatus({ kind: 'ok', text });
    } catch (error) {
      setStatus({ kind: 'error', text: messageOf(error) });
    } finally {
      setBusy(false);
    }
  }

  async function choose() {
    const [picked] = await bridge!.openDialog({ mode: 'folder' });
    if (picked) setFolder(picked);
  }

  const add = () =>
    run(async () => {
      const root = await api.putLocalRoot(folder.trim(), label.trim() || undefined);
      setFolder('');
      setLabel('');
      return `Added “${root.label}”: it is in Places under This computer.`;
    });

  const remove = (root: LocalRoot) =>
    run(async () => {
      await api.removeLocalRoot(root.name);
      // a pane showing the folder goes back to the workspace rather than to a place that is gone
      for (const pane of Object.values(panes)) if (pane.getState().target === root.name) void pane.getState().setTarget(WORKSPACE_TARGET);
      return `“${root.label}” is no longer in Places. Its files are untouched.`;
    });

  return (
    <Dialog title="Local folders" className="local-folders" onCancel={close}>
      <ul className="root-list" aria-label="Chosen folders">
        {answer ? (
          <li>
            <span className="root-label">Local folders</span>
            <code className="root-path">{answer.workspace}</code>
            <span className="hint">the workspace, always shown</span>
          </li>
        ) : null}
        {answer?.roots.map((root) => <RootRow key={root.name} root={root} busy={busy} rename={(name) => run(async () => `Renamed to “${(await api.putLocalRoot(root.path, name)).label}”.`)} remove={() => void remove(root)} />)}
      </ul>
      <form
        className="add-root"
        aria-label="Add a folder"
        onSubmit={(event) => {
          event.preventDefault();
          void add();
        }}
      >
        <h3>Add a folder</h3>
        <label className="field">
          <span>Folder path</span>
          <div className="with-button">
            <input type="text" spellCheck={false} autoComplete="off" value={folder} placeholder="/home/you/Data" onChange={(event) => setFolder(event.target.value)} />
            {bridge ? (
              <button type="button" onClick={() => void choose()}>
                Choose…
              </button>
            ) : null}
          </div>
        </label>
        <label className="field">
          <span>Name (optional)</span>
          <input type="text" value={label} placeholder="the folder's own name" onChange={(event) => setLabel(event.target.value)} />
        </label>
        <div className="dialog-buttons">
          <button type="submit" disabled={busy || folder.trim() === ''}>
            Add folder
          </button>
        </div>
      </form>
      {status ? (
        <p className={`message ${status.kind}`} role={status.kind === 'error' ? 'alert' : 'status'}>
          {status.text}
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

function RootRow({ root, busy, rename, remove }: { root: LocalRoot; busy: boolean; rename(label: string): void; remove(): void }) {
  const [name, setName] = useState(root.label);
  useEffect(() => setName(root.label), [root.label]);
  return (
    <li>
      <input className="root-label" type="text" aria-label={`Name of ${root.label}`} value={name} onChange={(event) => setName(event.target.value)} />
      <code className="root-path">{root.path}</code>
      <button type="button" disabled={busy || name.trim() === '' || name.trim() === root.label} onClick={() => rename(name.trim())}>
        Rename
      </button>
      <button type="button" aria-label={`Remove ${root.label}`} disabled={busy} onClick={remove}>
        Remove
      </button>
    </li>
  );
}
