// Everything known about the item under the active pane's cursor: dates, size, each hash
// with a copy button, the target-specific `extra` fields, and fixity for offline archives.
import { useEffect, useState } from 'react';
import { useStore } from 'zustand';
import { useServices } from '../services.js';
import type { DetailEntry } from '../stores/details.js';
import { sizeOf } from '../stores/arrange.js';
import { formatBytes, formatDate } from '../format.js';

function CopyButton({ value, label }: { value: string; label: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      className="copy"
      aria-label={`Copy ${label}`}
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(value);
          setCopied(true);
          setTimeout(() => setCopied(false), 1500);
        } catch {
          setCopied(false);
        }
      }}
    >
      {copied ? 'Copied' : 'Copy'}
    </button>
  );
}

function renderValue(value: unknown): string {
  if (value === null || value === undefined) return '—';
  if (typeof value === 'string') return value || '—';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value) && value.length === 0) return '—';
  return JSON.stringify(value);
}

interface Fixity {
  state?: string;
  checked?: string;
  failures?: unknown[];
  message?: string;
}

function FixityState({ fixity }: { fixity: unknown }) {
  if (fixity === undefined) return null;
  const f: Fixity = typeof fixity === 'object' && fixity !== null ? (fixity as Fixity) : { state: String(fixity) };
  const state = f.state ?? 'unknown';
  const text =
    state === 'ok' || state === 'valid' || state === 'passed'
      ? 'Every file matches its recorded checksum.'
      : state === 'failed' || state === 'invalid'
        ? 'Some files do not match their recorded checksums.'
        : state === 'unchecked' || state === 'pending'
          ? 'Not checked yet.'
          : `State: ${state}.`;
  return (
    <div className={`fixity fixity-${state}`}>
      <h3>Fixity</h3>
      <p>
        {text}
        {f.checked ? ` Last checked ${formatDate(f.checked)}.` : ''}
      </p>
      {f.message ? <p>{f.message}</p> : null}
      {Array.isArray(f.failures) && f.failures.length > 0 ? (
        <ul>
          {f.failures.map((failure, i) => (
            <li key={i}>{renderValue(failure)}</li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

/**
 * Electron only: drag this handle onto the desktop to get the selection as ZIP files. Main
 * stages them through the API first (a native drag needs files on disk), then starts it.
 */
function DragOutHandle() {
  const { bridge, actions, ui, panes } = useServices();
  const [state, setState] = useState<string | null>(null);
  if (!bridge) return null;
  return (
    <div className="drag-out">
      <div
        className="drag-handle"
        draggable
        role="button"
        tabIndex={0}
        aria-label="Drag the selection out to the desktop"
        onDragStart={(event) => {
          event.preventDefault();
          const side = ui.getState().active;
          const target = panes[side].getState().target;
          const items = actions.selectedItems(side);
          if (!target || items.length === 0) return;
          setState('Preparing files…');
          void bridge
            .dragOut({ items: items.map((item) => ({ target, id: item.id, title: item.title })) })
            .then((result) => setState(result.status === 'failed' ? result.error : null));
        }}
      >
        ⇲ Drag to desktop
      </div>
      {state ? <span className="hint">{state}</span> : null}
    </div>
  );
}

export function DetailPanel() {
  const { ui, panes, details } = useServices();
  const side = useStore(ui, (s) => s.active);
  const pane = panes[side];
  const target = useStore(pane, (s) => s.target);
  const cursor = useStore(pane, (s) => s.cursor);
  const title = useStore(pane, (s) => s.items.find((i) => i.id === s.cursor)?.title ?? null);
  useStore(details.store, (s) => s.version);
  const [entry, setEntry] = useState<DetailEntry | null>(null);

  useEffect(() => {
    let alive = true;
    setEntry(null);
    if (!target || !cursor) return;
    setEntry(details.get(target, cursor) ?? { state: 'loading' });
    void details.load(target, cursor).then((loaded) => alive && setEntry(loaded));
    return () => {
      alive = false;
    };
  }, [target, cursor, details]);

  let body;
  if (!target || !cursor) body = <p className="hint">Select a file or folder to see its details.</p>;
  else if (!entry || entry.state === 'loading') body = <p className="hint">Loading details of {title}…</p>;
  else if (entry.state === 'error')
    body = (
      <div className="message error" role="alert">
        <span>
          The details of {title} could not be loaded: {entry.error}
        </span>
        <button type="button" onClick={() => void details.load(target, cursor, true).then(setEntry)}>
          Try again
        </button>
      </div>
    );
  else {
    const d = entry.detail;
    const { fixity, ...extra } = d.extra ?? {};
    const hashes = Object.entries(d.hashes ?? {});
    body = (
      <>
        <h2 className="detail-title">{d.title}</h2>
        <dl className="facts">
          <dt>Kind</dt>
          <dd>{d.kind_name}</dd>
          {d.kind === 'item' ? (
            <>
              <dt>Size</dt>
              <dd>
                {formatBytes(sizeOf(d))}
                {sizeOf(d) !== null && sizeOf(d)! >= 1024 ? ` (${sizeOf(d)!.toLocaleString()} bytes)` : ''}
              </dd>
            </>
          ) : null}
          <dt>Created</dt>
          <dd>{formatDate(d.date_created)}</dd>
          <dt>Modified</dt>
          <dd>{formatDate(d.date_modified)}</dd>
        </dl>
        <h3>Hashes</h3>
        {hashes.length === 0 ? (
          <p className="hint">{d.kind === 'container' ? 'Folders have no hashes.' : 'This target reports no hashes for it.'}</p>
        ) : (
          <dl className="hashes">
            {hashes.map(([algorithm, value]) => (
              <div key={algorithm} className="hash-row">
                <dt>{algorithm}</dt>
                <dd>
                  <code data-hash={algorithm}>{value}</code>
                  <CopyButton value={value} label={algorithm} />
                </dd>
              </div>
            ))}
          </dl>
        )}
        <FixityState fixity={fixity} />
        {Object.keys(extra).length > 0 ? (
          <>
            <h3>More</h3>
            <dl className="extra">
              {Object.entries(extra).map(([key, value]) => (
                <div key={key} className="extra-row">
                  <dt>{key.replace(/_/g, ' ')}</dt>
                  <dd>{renderValue(value)}</dd>
                </div>
              ))}
            </dl>
          </>
        ) : null}
      </>
    );
  }

  return (
    <aside className="detail-panel" aria-label="Details">
      <div className="panel-head">
        <h2>Details</h2>
        <button type="button" aria-label="Close details" onClick={() => ui.setState({ detailOpen: false })}>
          ×
        </button>
      </div>
      <DragOutHandle />
      {body}
    </aside>
  );
}
