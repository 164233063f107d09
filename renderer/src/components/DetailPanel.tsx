// Everything known about the item under the active pane's cursor: dates, size, each hash
// with a copy button, a preview of a file's first bytes, the target-specific `extra` fields,
// and fixity for offline archives.
import { useEffect, useState } from 'react';
import { useStore } from 'zustand';
import { useServices } from '../services.js';
import type { DetailEntry } from '../stores/details.js';
import { sizeOf } from '../stores/arrange.js';
import { formatBytes, formatDate } from '../format.js';
import { FilePreview } from './FilePreview.js';

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
  if (Array.isArray(value)) return value.length === 0 ? '—' : value.map(renderValue).join(', ');
  if (typeof value === 'object') {
    const pairs = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== null && v !== undefined);
    return pairs.length === 0 ? '—' : pairs.map(([k, v]) => `${k.replace(/_/g, ' ')}: ${renderValue(v)}`).join('; ');
  }
  return JSON.stringify(value);
}

/**
 * An `extra` value; a web address the service gives for the item (a `…_url` field, such as a
 * Dataverse dataset's or a record's page) is a link, opened outside Ferry (the desktop app
 * hands it to the system browser; only http and https are links).
 */
export function ExtraValue({ name, value }: { name: string; value: unknown }) {
  if (/(^|_)url$/.test(name) && typeof value === 'string' && /^https?:\/\//i.test(value)) {
    return (
      <a href={value} target="_blank" rel="noopener noreferrer">
        {value}
      </a>
    );
  }
  return <>{renderValue(value)}</>;
}

/** "3.7 KB (3,802 bytes)": readable, and exact for anyone comparing. */
function sizeText(bytes: number): string {
  return bytes >= 1024 ? `${formatBytes(bytes)} (${bytes.toLocaleString()} bytes)` : formatBytes(bytes);
}

/** One file's fixity as the offline library reports it (`extra.fixity` of a file). */
export interface FileFixity {
  state?: string;
  checked_at?: string | null;
  algorithm?: string;
  expected?: string;
  actual?: string;
  against?: string;
  failures?: { algorithm?: string; expected?: string; actual?: string; against?: string }[];
}

/** An archive's fixity summary (`extra.fixity` of a top-level archive). */
export interface ArchiveFixity {
  verified_at: string | null;
  verified: number;
  failed: number;
}

const AGAINST: Record<string, string> = {
  manifest: "the bag's manifest",
  provenance: 'the hash the source reported at download',
  recorded: 'the hash Ferry recorded when it first verified this file',
  zip: "the ZIP's own CRC-32",
};

function isArchiveFixity(value: unknown): value is ArchiveFixity {
  return typeof value === 'object' && value !== null && typeof (value as ArchiveFixity).verified === 'number';
}

/** verified ✓ / failed ✗ (with algorithm, expected, actual) / unverified, for one file. */
export function FileFixityState({ fixity }: { fixity: unknown }) {
  if (fixity === undefined || fixity === null) return null;
  const f: FileFixity = typeof fixity === 'object' ? (fixity as FileFixity) : { state: String(fixity) };
  const state = f.state ?? 'unverified';
  const checked = f.checked_at ? <p className="hint">Checked {formatDate(f.checked_at)}.</p> : null;
  if (state === 'verified') {
    return (
      <section className="fixity fixity-verified" aria-label="Fixity">
        <h3>Fixity</h3>
        <p className="fixity-verdict">
          <strong>
            <span aria-hidden="true">✓ </span>Verified
          </strong>{' '}
          — the bytes match every recorded checksum.
        </p>
        {checked}
      </section>
    );
  }
  if (state === 'failed') {
    const failures = f.failures?.length ? f.failures : [f];
    return (
      <section className="fixity fixity-failed" aria-label="Fixity">
        <h3>Fixity</h3>
        <p className="fixity-verdict" role="alert">
          <strong>
            <span aria-hidden="true">✗ </span>Failed fixity
          </strong>{' '}
          — the bytes no longer match what was recorded.
        </p>
        {checked}
        <ul className="fixity-failures">
          {failures.map((failure, i) =>
            failure.algorithm === 'read' ? (
              <li key={i}>
                <strong>Unreadable</strong>: {failure.actual ?? 'the archive could not be read here'}
              </li>
            ) : (
              <li key={i}>
                <div>
                  <strong>{failure.algorithm ?? 'checksum'}</strong>
                  {failure.against && AGAINST[failure.against] ? <span className="hint"> against {AGAINST[failure.against]}</span> : null}
                </div>
                <dl className="fixity-values">
                  <dt>expected</dt>
                  <dd>
                    <code>{failure.expected ?? '—'}</code>
                  </dd>
                  <dt>actual</dt>
                  <dd>
                    <code>{failure.actual ?? '—'}</code>
                  </dd>
                </dl>
              </li>
            ),
          )}
        </ul>
      </section>
    );
  }
  return (
    <section className="fixity fixity-unverified" aria-label="Fixity">
      <h3>Fixity</h3>
      <p className="fixity-verdict">
        Not verified yet. Select the archive at the top of the library and press Verify to check this file.
      </p>
    </section>
  );
}

/** An archive's health: damaged (with the reason), and what the last verification found. */
export function ArchiveHealth({
  state,
  error,
  fixity,
  files,
  onVerify,
}: {
  state: unknown;
  error: unknown;
  fixity: ArchiveFixity;
  files: number | null;
  onVerify?: () => void;
}) {
  const damaged = state === 'damaged';
  let verdict: string;
  let tone: 'verified' | 'failed' | 'unverified';
  if (damaged) {
    verdict = 'It cannot be verified until it is downloaded again.';
    tone = 'failed';
  } else if (!fixity.verified_at) {
    verdict = 'Not verified yet.';
    tone = 'unverified';
  } else if (fixity.failed > 0) {
    verdict = `${fixity.verified} verified, ${fixity.failed} failed fixity.`;
    tone = 'failed';
  } else if (files !== null && fixity.verified === files) {
    verdict = `All ${files} file${files === 1 ? '' : 's'} verified.`;
    tone = 'verified';
  } else {
    verdict = `${fixity.verified} verified, ${fixity.failed} failed fixity${files !== null ? ` (of ${files} files)` : ''}.`;
    tone = 'verified';
  }
  return (
    <>
      {damaged ? (
        <div className="damaged" role="alert">
          <strong>✗ This archive is damaged</strong>
          <p>{typeof error === 'string' && error ? error : 'Ferry could not read its table of contents.'}</p>
        </div>
      ) : null}
      <section className={`fixity fixity-${tone}`} aria-label="Fixity">
        <h3>Fixity</h3>
        <p className="fixity-verdict">
          {tone === 'verified' ? (
            <span aria-hidden="true">✓ </span>
          ) : tone === 'failed' && !damaged ? (
            <span aria-hidden="true">✗ </span>
          ) : null}
          {verdict}
        </p>
        {fixity.verified_at ? <p className="hint">Last verified {formatDate(fixity.verified_at)}.</p> : null}
        {onVerify && !damaged ? (
          <button type="button" onClick={onVerify}>
            {fixity.verified_at ? 'Verify again' : 'Verify now'}
          </button>
        ) : null}
      </section>
    </>
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
  const { ui, panes, details, actions, session } = useServices();
  const side = useStore(ui, (s) => s.active);
  const pane = panes[side];
  const target = useStore(pane, (s) => s.target);
  const cursor = useStore(pane, (s) => s.cursor);
  const atTop = useStore(pane, (s) => s.trail.length === 0);
  const title = useStore(pane, (s) => s.items.find((i) => i.id === s.cursor)?.title ?? null);
  const version = useStore(details.store, (s) => s.version);

  // the cache keeps a stale detail on show while its fresh copy loads (after a job or refresh)
  useEffect(() => {
    if (target && cursor && details.isStale(target, cursor)) void details.load(target, cursor);
  }, [target, cursor, version, details]);
  const entry: DetailEntry | null = target && cursor ? (details.get(target, cursor) ?? { state: 'loading' }) : null;

  let body;
  if (!target || !cursor) body = <p className="hint">Select a file or folder to see its details.</p>;
  else if (!entry || entry.state === 'loading') body = <p className="hint">Loading details of {title}…</p>;
  else if (entry.state === 'error')
    body = (
      <div className="message error" role="alert">
        <span>
          The details of {title} could not be loaded: {entry.error}
        </span>
        <button type="button" onClick={() => void details.load(target, cursor, true)}>
          Try again
        </button>
      </div>
    );
  else {
    const d = entry.detail;
    const { fixity, ...rest } = d.extra ?? {};
    const archive = isArchiveFixity(fixity);
    // an archive's state and error are shown up front, not among the other fields
    const extra = archive ? Object.fromEntries(Object.entries(rest).filter(([k]) => k !== 'state' && k !== 'error')) : rest;
    const hashes = Object.entries(d.hashes ?? {});
    const verifiable = archive && atTop && actions.canVerify(target);
    body = (
      <>
        <h2 className="detail-title">{d.title}</h2>
        {archive ? (
          <ArchiveHealth
            state={rest.state}
            error={rest.error}
            fixity={fixity}
            files={typeof rest.files === 'number' ? rest.files : null}
            onVerify={verifiable ? () => void actions.verify(side, [d.id]) : undefined}
          />
        ) : null}
        <dl className="facts">
          <dt>Kind</dt>
          <dd>{archive ? 'archive' : d.kind_name}</dd>
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
        {archive ? null : <FileFixityState fixity={fixity} />}
        {d.kind === 'item' && session.downloads(target) ? <FilePreview key={`${target}\n${d.id}`} target={target} id={d.id} title={d.title} /> : null}
        {Object.keys(extra).length > 0 ? (
          <>
            <h3>More</h3>
            <dl className="extra">
              {Object.entries(extra).map(([key, value]) => (
                <div key={key} className="extra-row">
                  <dt>{key.replace(/_/g, ' ')}</dt>
                  <dd>{/(^|_)size$/.test(key) && typeof value === 'number' ? sizeText(value) : <ExtraValue name={key} value={value} />}</dd>
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
