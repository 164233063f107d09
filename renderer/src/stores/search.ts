// One pane's search (docs/api.md "Search"): the text, the page shown, its rows and whether a
// next page exists. Only where the target searches (`capabilities.search`); elsewhere the
// pane says so and never sends the request. A newer search aborts the one under way, so
// a slow answer never replaces a newer one.
import { createStore } from 'zustand/vanilla';
import type { ResourceSummary } from '../../../shared/api.js';
import { messageOf, type ApiClient } from '../api/client.js';

export interface SearchState {
  /** the search row is shown in the pane */
  open: boolean;
  /** the place searched (the pane's target when the search ran) */
  target: string | null;
  text: string;
  page: number;
  rows: ResourceSummary[];
  hasNext: boolean;
  status: 'idle' | 'searching' | 'ready' | 'error';
  error: string | null;
  /** what the server said of how it searched */
  method: 'index' | 'names' | null;
  truncated: boolean;
}

const CLOSED: Omit<SearchState, 'open' | 'text'> = {
  target: null,
  page: 1,
  rows: [],
  hasNext: false,
  status: 'idle',
  error: null,
  method: null,
  truncated: false,
};

export function createSearchStore(api: Pick<ApiClient, 'search'>) {
  const store = createStore<SearchState>()(() => ({ open: false, text: '', ...CLOSED }));
  let running: AbortController | null = null;

  async function run(target: string, text: string, page: number): Promise<void> {
    running?.abort();
    const controller = new AbortController();
    running = controller;
    store.setState({ target, text, page, status: 'searching', error: null });
    try {
      const answer = await api.search(target, text, page, controller.signal);
      if (controller.signal.aborted) return;
      store.setState({ rows: answer.rows, hasNext: answer.hasNext, method: answer.method, truncated: answer.truncated, status: 'ready' });
    } catch (error) {
      if (controller.signal.aborted) return;
      store.setState({ rows: [], hasNext: false, status: 'error', error: messageOf(error) });
    }
  }

  return {
    store,
    show: () => store.setState({ open: true }),
    /** closes the row and drops the results: the pane shows its folder again */
    close: () => {
      running?.abort();
      store.setState({ open: false, text: '', ...CLOSED });
    },
    setText: (text: string) => store.setState({ text }),
    run: (target: string, text: string) => run(target, text.trim(), 1),
    next: () => {
      const s = store.getState();
      if (s.target && s.hasNext) void run(s.target, s.text, s.page + 1);
    },
    previous: () => {
      const s = store.getState();
      if (s.target && s.page > 1) void run(s.target, s.text, s.page - 1);
    },
  };
}

export type SearchStore = ReturnType<typeof createSearchStore>;
