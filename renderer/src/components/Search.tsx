// A pane's search: the row with the box (under the toolbar), and the results shown instead of
// the folder's rows, each with the folder it is in, a page at a time. Where the place cannot
// search, the row says so and nothing is sent. Escape in the box, or Close, goes back to the folder.
import { useEffect, useRef } from 'react';
import { useStore } from 'zustand';
import type { ResourceSummary } from '../../../shared/api.js';
import { useServices } from '../services.js';
import type { PaneSide } from '../stores/pane.js';
import { focusPane } from './Pane.js';

export function SearchBar({ side }: { side: PaneSide }) {
  const services = useServices();
  const search = services.searches[side];
  const target = useStore(services.panes[side], (s) => s.target);
  useStore(services.session.store, (s) => s.targets);
  const text = useStore(search.store, (s) => s.text);
  const status = useStore(search.store, (s) => s.status);
  const input = useRef<HTMLInputElement>(null);
  const searches = services.session.searches(target);
  const place = services.session.readableName(target);

  useEffect(() => input.current?.focus(), []);

  const close = () => {
    search.close();
    focusPane(side);
  };

  if (!searches) {
    return (
      <div className="search-bar" role="search" aria-label={`Search ${place}`}>
        <p className="hint search-unsupported">This service can't search: {place} offers no search to Ferry. Use the filter to narrow this folder.</p>
        <button type="button" onClick={close}>
          Close
        </button>
      </div>
    );
  }
  return (
    <form
      className="search-bar"
      role="search"
      aria-label={`Search ${place}`}
      onSubmit={(event) => {
        event.preventDefault();
        if (target && text.trim()) void search.run(target, text);
      }}
    >
      <input
        ref={input}
        type="search"
        aria-label={`Search all of ${place}`}
        placeholder={`Search all of ${place}`}
        value={text}
        maxLength={500}
        onChange={(event) => search.setText(event.target.value)}
        onKeyDown={(event) => {
          if (event.key === 'Escape') {
            event.preventDefault();
            event.stopPropagation();
            close();
          }
        }}
      />
      <button type="submit" disabled={!text.trim() || status === 'searching'}>
        Search
      </button>
      <button type="button" onClick={close}>
        Close
      </button>
    </form>
  );
}

/** The folder a result is in, from its detail's path where the target gives one. */
function useWhere(target: string | null, row: ResourceSummary): string {
  const { details } = useServices();
  useStore(details.store, (s) => s.version);
  useEffect(() => {
    if (!target) return;
    details.want(target, row.id);
    return () => details.release(target, row.id);
  }, [details, target, row.id]);
  const entry = target ? details.get(target, row.id) : undefined;
  const path = entry?.state === 'ready' ? entry.detail.extra.materialized_path : undefined;
  if (typeof path !== 'string') return row.container === 'None' ? 'top level' : '…';
  const parent = path.replace(/\/+$/, '').split('/').slice(0, -1).join('/');
  return parent === '' ? '/' : parent;
}

function ResultRow({ side, row, target }: { side: PaneSide; row: ResourceSummary; target: string | null }) {
  const services = useServices();
  const where = useWhere(target, row);
  /** goes where the result is: into a folder, or to the file's folder with the file selected */
  async function show(): Promise<void> {
    if (!target) return;
    const pane = services.panes[side].getState();
    services.searches[side].close();
    if (row.kind === 'container') {
      await pane.setTarget(target, [{ id: row.id, title: row.title }]);
    } else if (row.container === 'None') {
      await pane.setTarget(target, []);
      services.panes[side].getState().select(row.id, 'replace', []);
    } else {
      const parent = await services.details.load(target, row.container);
      await pane.setTarget(target, [{ id: row.container, title: parent.state === 'ready' ? parent.detail.title : 'Folder' }]);
      services.panes[side].getState().select(row.id, 'replace', []);
    }
    focusPane(side);
  }
  return (
    <li className="search-result">
      <button type="button" className="result-open" onClick={() => void show()} aria-label={`${row.title}, ${row.kind_name} in ${where}`}>
        <span className={`icon ${row.kind === 'container' ? 'icon-folder' : 'icon-file'}`} aria-hidden="true" />
        <span className="title-text">{row.title}</span>
        <span className="result-where">{where}</span>
      </button>
    </li>
  );
}

export function SearchResults({ side }: { side: PaneSide }) {
  const services = useServices();
  const search = services.searches[side];
  const state = useStore(search.store);
  if (state.status === 'idle') {
    return <p className="empty-state search-results">Type what to look for and press Enter.</p>;
  }
  return (
    <section className="search-results" aria-label="Search results" aria-busy={state.status === 'searching'}>
      {state.status === 'error' ? (
        <div className="message error" role="alert">
          <span>The search did not run: {state.error}</span>
        </div>
      ) : null}
      <p className="search-summary" role="status">
        {state.status === 'searching'
          ? `Searching for “${state.text}”…`
          : state.status === 'ready'
            ? `${state.rows.length === 0 ? 'Nothing found' : `${state.rows.length} result${state.rows.length === 1 ? '' : 's'}`} for “${state.text}”, page ${state.page}` +
              (state.method === 'names' ? ' (names only)' : state.method === 'index' ? " (the service's own search)" : '') +
              (state.truncated ? '. The search stopped after 200,000 entries; narrow it to find more.' : '.')
            : ''}
      </p>
      <ul className="result-list">
        {state.rows.map((row) => (
          <ResultRow key={row.id} side={side} row={row} target={state.target} />
        ))}
      </ul>
      <div className="pager">
        <button type="button" disabled={state.page <= 1 || state.status === 'searching'} onClick={search.previous}>
          Previous page
        </button>
        <button type="button" disabled={!state.hasNext || state.status === 'searching'} onClick={search.next}>
          Next page
        </button>
      </div>
    </section>
  );
}
