// The Details panel's look inside a file: its first bytes as plain text, a small table, or an
// image. Text is a React text node (never parsed as HTML); an image is an <img> whose type
// Ferry chose from the name, so SVG markup is never part of the page.
import { useEffect, useState } from 'react';
import { messageOf } from '../api/client.js';
import { formatBytes } from '../format.js';
import {
  IMAGE_PREVIEW_BYTES,
  imageUrlOf,
  previewKindOf,
  tableOf,
  TEXT_PREVIEW_BYTES,
  textOf,
  type PreviewKind,
  type TablePreview,
} from '../preview.js';
import { useServices } from '../services.js';

type Shown =
  | { state: 'loading' }
  | { state: 'error'; message: string }
  | { state: 'note'; message: string }
  | { state: 'text'; text: string; truncated: boolean }
  | { state: 'table'; table: TablePreview }
  | { state: 'image'; url: string };

function shownOf(kind: PreviewKind, bytes: Uint8Array, truncated: boolean): Shown {
  if (kind.kind === 'image') {
    if (truncated) return { state: 'note', message: `Images larger than ${formatBytes(IMAGE_PREVIEW_BYTES)} are not previewed.` };
    return { state: 'image', url: imageUrlOf(bytes, kind.mime) };
  }
  const text = textOf(bytes, truncated);
  if (text === null) return { state: 'note', message: 'This file holds binary data; there is no text to preview.' };
  if (text === '') return { state: 'note', message: 'This file is empty.' };
  if (kind.kind === 'table') return { state: 'table', table: tableOf(text, kind.delimiter, truncated) };
  return { state: 'text', text, truncated };
}

export function FilePreview({ target, id, title }: { target: string; id: string; title: string }) {
  const { api } = useServices();
  const [shown, setShown] = useState<Shown>({ state: 'loading' });
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    const kind = previewKindOf(title);
    if (!kind) return;
    const controller = new AbortController();
    setShown({ state: 'loading' });
    const maxBytes = kind.kind === 'image' ? IMAGE_PREVIEW_BYTES : TEXT_PREVIEW_BYTES;
    api.fileHead(target, id, maxBytes, controller.signal).then(
      ({ bytes, truncated }) => setShown(shownOf(kind, bytes, truncated)),
      (error: unknown) => {
        if (!controller.signal.aborted) setShown({ state: 'error', message: messageOf(error) });
      },
    );
    return () => controller.abort();
  }, [api, target, id, title, attempt]);

  if (!previewKindOf(title)) return null;
  let body;
  if (shown.state === 'loading') body = <p className="hint">Loading the preview…</p>;
  else if (shown.state === 'error')
    body = (
      <div className="message error" role="alert">
        <span>The preview could not be loaded: {shown.message}</span>
        <button type="button" onClick={() => setAttempt((n) => n + 1)}>
          Try again
        </button>
      </div>
    );
  else if (shown.state === 'note') body = <p className="hint">{shown.message}</p>;
  else if (shown.state === 'image') body = <img className="preview-image" src={shown.url} alt={`Preview of ${title}`} />;
  else if (shown.state === 'text')
    body = (
      <>
        <pre className="preview-text" tabIndex={0} aria-label={`First lines of ${title}`}>
          {shown.text}
        </pre>
        {shown.truncated ? <p className="hint">The first {formatBytes(TEXT_PREVIEW_BYTES)} of the file.</p> : null}
      </>
    );
  else body = <PreviewTable table={shown.table} title={title} />;

  return (
    <section className="preview" aria-label="Preview">
      <h3>Preview</h3>
      {body}
    </section>
  );
}

function PreviewTable({ table, title }: { table: TablePreview; title: string }) {
  const [head, ...rows] = table.rows;
  if (!head) return <p className="hint">No rows to preview.</p>;
  const columns = Math.max(head.length, ...rows.map((row) => row.length));
  const cells = (row: string[]) => Array.from({ length: columns }, (_, i) => row[i] ?? '');
  return (
    <>
      <div className="preview-table" tabIndex={0} role="region" aria-label={`First rows of ${title}`}>
        <table>
          <thead>
            <tr>
              {cells(head).map((cell, i) => (
                <th key={i} scope="col">
                  {cell}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((row, r) => (
              <tr key={r}>
                {cells(row).map((cell, i) => (
                  <td key={i}>{cell}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {table.more ? <p className="hint">The first {table.rows.length} rows of the file.</p> : null}
    </>
  );
}
