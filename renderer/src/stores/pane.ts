// One pane's state: which target, where in it (the breadcrumb trail), the listing of that
// one level, sort, filter, selection and the keyboard cursor. Each pane gets its own store.
// Sorting by size or date sorts the whole level: the listing is then asked for with every
// row's size and date (`sized`), and until it is here the rows keep their name order.
import { createStore } from 'zustand/vanilla';
import type { ResourceSummary } from '../../../shared/api.js';
import type { PaneLocation } from '../../../shared/ipc.js';
import { messageOf, type ApiClient } from '../api/client.js';
import { needsSizes, type SortKey, type SortOrder } from './arrange.js';

export interface Crumb {
  id: string;
  title: string;
}

export type PaneSide = 'left' | 'right';

export interface PaneState {
  side: PaneSide;
  target: string | null;
  trail: Crumb[];
  items: ResourceSummary[];
  status: 'idle' | 'loading' | 'ready' | 'error';
  error: string | null;
  /** error code of the last failure, so the UI can offer the right fix (e.g. Accounts on 401) */
  errorCode: string | null;
  sort: SortOrder;
  /** the rows carry size and date_modified for the whole level (a sort by them is complete) */
  sized: boolean;
  /** a listing with sizes is on its way (for a sort by size or date) */
  sizing: boolean;
  /** what went wrong reading the sizes, if it did */
  sizingError: string | null;
  /**
   * Ticks each time the pane arrives at a location (not on a refresh): the grid then shows
   * the top of the list with the cursor on its first row, whatever the old scroll was.
   */
  visit: number;
  /** where Back and Forward go: earlier locations, nearest last (as in a browser) */
  back: PaneLocation[];
  forward: PaneLocation[];
  filter: string;
  selection: ReadonlySet<string>;
  cursor: string | null;
  /** the selection anchor for shift-click ranges */
  anchor: string | null;
}

export interface PaneActions {
  setTarget(target: string | null, trail?: Crumb[]): Promise<void>;
  /** the location before the last move (Alt+Left), and back again (Alt+Right) */
  goBack(): Promise<void>;
  goForward(): Promise<void>;
  open(crumb: Crumb): Promise<void>;
  up(): Promise<void>;
  /** -1 = the target's top level */
  goToCrumb(index: number): Promise<void>;
  refresh(): Promise<void>;
  setSort(key: SortKey): void;
  setFilter(filter: string): void;
  /** `ordered` = the ids in display order, needed for ranges */
  select(id: string, mode: 'replace' | 'toggle' | 'range', ordered: readonly string[]): void;
  selectAll(ordered: readonly string[]): void;
  clearSelection(): void;
  setCursor(id: string | null): void;
}

export type PaneStore = ReturnType<typeof createPaneStore>;

export function containerOf(state: Pick<PaneState, 'trail'>): string | null {
  return state.trail.at(-1)?.id ?? null;
}

const MAX_HISTORY = 50;

function sameLocation(a: PaneLocation, b: PaneLocation): boolean {
  return a.target === b.target && a.trail.length === b.trail.length && a.trail.every((crumb, i) => crumb.id === b.trail[i]!.id);
}

export function locationOf(state: Pick<PaneState, 'target' | 'trail'>): PaneLocation {
  return { target: state.target, trail: state.trail.map(({ id, title }) => ({ id, title })) };
}

export function createPaneStore(side: PaneSide, api: Pick<ApiClient, 'children'>) {
  let controller: AbortController | null = null;

  const store = createStore<PaneState & PaneActions>()((set, get) => {
    /** A move to another location: the one left goes on the Back list, Forward is forgotten. */
    function visit(target: string | null, trail: Crumb[]): Promise<void> {
      const here = locationOf(get());
      const there = { target, trail };
      if (here.target !== null && !sameLocation(here, there)) {
        set({ back: [...get().back, here].slice(-MAX_HISTORY), forward: [] });
      }
      return load(target, trail);
    }

    async function load(target: string | null, trail: Crumb[], keepSelection = false): Promise<void> {
      controller?.abort();
      const mine = new AbortController();
      controller = mine;
      const withSizes = needsSizes(get().sort);
      set({
        target,
        trail,
        status: target ? 'loading' : 'idle',
        error: null,
        errorCode: null,
        sizing: false,
        sizingError: null,
        ...(keepSelection
          ? {}
          : { items: [], sized: false, selection: new Set<string>(), cursor: null, anchor: null, filter: '', visit: get().visit + 1 }),
      });
      if (!target) return;
      try {
        const items = await api.children(target, trail.at(-1)?.id ?? null, mine.signal, withSizes);
        if (controller !== mine) return;
        keepListed(items, withSizes);
        set({ status: 'ready' });
        // the sort changed to size or date while this listing was on its way without them
        if (!withSizes && needsSizes(get().sort)) void loadSizes();
      } catch (error) {
        if (controller !== mine || mine.signal.aborted) return;
        set({
          status: 'error',
          items: [],
          error: messageOf(error),
          errorCode: (error as { code?: string }).code ?? null,
        });
      }
    }

    /** New rows for the level on show; selection and cursor keep what is still there. */
    function keepListed(items: ResourceSummary[], sized: boolean): void {
      const ids = new Set(items.map((item) => item.id));
      const previous = get();
      set({
        items,
        sized,
        selection: new Set([...previous.selection].filter((id) => ids.has(id))),
        // on arrival the grid puts the cursor on the first row of what it shows (see visit)
        cursor: previous.cursor && ids.has(previous.cursor) ? previous.cursor : null,
      });
    }

    /** The same level again, with every row's size and date, for a sort by them. */
    async function loadSizes(): Promise<void> {
      const { target, trail, status } = get();
      if (!target || status !== 'ready') return;
      controller?.abort();
      const mine = new AbortController();
      controller = mine;
      set({ sizing: true, sizingError: null });
      try {
        const items = await api.children(target, trail.at(-1)?.id ?? null, mine.signal, true);
        if (controller !== mine) return;
        keepListed(items, true);
        set({ sizing: false });
      } catch (error) {
        if (controller !== mine || mine.signal.aborted) return;
        set({ sizing: false, sizingError: `The sizes and dates could not be read, so the rows stay in name order: ${messageOf(error)}` });
      }
    }

    return {
      side,
      target: null,
      trail: [],
      items: [],
      status: 'idle',
      error: null,
      errorCode: null,
      sort: { key: 'title', dir: 'asc' },
      sized: false,
      sizing: false,
      sizingError: null,
      visit: 0,
      back: [],
      forward: [],
      filter: '',
      selection: new Set<string>(),
      cursor: null,
      anchor: null,

      setTarget: (target, trail = []) => visit(target, trail),
      goBack: async () => {
        const { back, forward } = get();
        const to = back.at(-1);
        if (!to) return;
        set({ back: back.slice(0, -1), forward: [...forward, locationOf(get())] });
        await load(to.target, to.trail);
      },
      goForward: async () => {
        const { back, forward } = get();
        const to = forward.at(-1);
        if (!to) return;
        set({ forward: forward.slice(0, -1), back: [...back, locationOf(get())] });
        await load(to.target, to.trail);
      },
      open: (crumb) => visit(get().target, [...get().trail, crumb]),
      up: async () => {
        const { trail, target } = get();
        if (trail.length === 0) return;
        const left = trail.at(-1)!;
        await visit(target, trail.slice(0, -1));
        // land on the folder we came from, as file managers do
        if (get().items.some((item) => item.id === left.id)) set({ cursor: left.id, selection: new Set([left.id]) });
      },
      goToCrumb: (index) => visit(get().target, get().trail.slice(0, index + 1)),
      refresh: () => load(get().target, get().trail, true),
      setSort: (key) => {
        const { sort, sized } = get();
        const next: SortOrder = { key, dir: sort.key === key && sort.dir === 'asc' ? 'desc' : 'asc' };
        set({ sort: next });
        if (needsSizes(next) && !sized) void loadSizes();
      },
      setFilter: (filter) => set({ filter }),
      select: (id, mode, ordered) => {
        const { selection, anchor } = get();
        if (mode === 'toggle') {
          const next = new Set(selection);
          if (next.has(id)) next.delete(id);
          else next.add(id);
          set({ selection: next, cursor: id, anchor: id });
        } else if (mode === 'range' && anchor) {
          const a = ordered.indexOf(anchor);
          const b = ordered.indexOf(id);
          if (a === -1 || b === -1) return set({ selection: new Set([id]), cursor: id, anchor: id });
          const [from, to] = a < b ? [a, b] : [b, a];
          set({ selection: new Set(ordered.slice(from, to + 1)), cursor: id });
        } else {
          set({ selection: new Set([id]), cursor: id, anchor: id });
        }
      },
      selectAll: (ordered) => set({ selection: new Set(ordered) }),
      clearSelection: () => set({ selection: new Set<string>() }),
      setCursor: (id) => set({ cursor: id }),
    };
  });
  return store;
}
