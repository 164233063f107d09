// One pane's state: which target, where in it (the breadcrumb trail), the listing of that
// one level, sort, filter, selection and the keyboard cursor. Each pane gets its own store.
import { createStore } from 'zustand/vanilla';
import type { ResourceSummary } from '../../../shared/api.js';
import type { PaneLocation } from '../../../shared/ipc.js';
import { messageOf, type ApiClient } from '../api/client.js';
import type { SortKey, SortOrder } from './arrange.js';

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
  filter: string;
  selection: ReadonlySet<string>;
  cursor: string | null;
  /** the selection anchor for shift-click ranges */
  anchor: string | null;
}

export interface PaneActions {
  setTarget(target: string | null, trail?: Crumb[]): Promise<void>;
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

export function locationOf(state: Pick<PaneState, 'target' | 'trail'>): PaneLocation {
  return { target: state.target, trail: state.trail.map(({ id, title }) => ({ id, title })) };
}

export function createPaneStore(side: PaneSide, api: Pick<ApiClient, 'children'>) {
  let controller: AbortController | null = null;

  const store = createStore<PaneState & PaneActions>()((set, get) => {
    async function load(target: string | null, trail: Crumb[], keepSelection = false): Promise<void> {
      controller?.abort();
      const mine = new AbortController();
      controller = mine;
      set({
        target,
        trail,
        status: target ? 'loading' : 'idle',
        error: null,
        errorCode: null,
        ...(keepSelection ? {} : { items: [], selection: new Set<string>(), cursor: null, anchor: null, filter: '' }),
      });
      if (!target) return;
      try {
        const items = await api.children(target, trail.at(-1)?.id ?? null, mine.signal);
        if (controller !== mine) return;
        const ids = new Set(items.map((item) => item.id));
        const previous = get();
        set({
          items,
          status: 'ready',
          selection: new Set([...previous.selection].filter((id) => ids.has(id))),
          cursor: previous.cursor && ids.has(previous.cursor) ? previous.cursor : (items[0]?.id ?? null),
        });
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

    return {
      side,
      target: null,
      trail: [],
      items: [],
      status: 'idle',
      error: null,
      errorCode: null,
      sort: { key: 'title', dir: 'asc' },
      filter: '',
      selection: new Set<string>(),
      cursor: null,
      anchor: null,

      setTarget: (target, trail = []) => load(target, trail),
      open: (crumb) => load(get().target, [...get().trail, crumb]),
      up: async () => {
        const { trail, target } = get();
        if (trail.length === 0) return;
        const left = trail.at(-1)!;
        await load(target, trail.slice(0, -1));
        // land on the folder we came from, as file managers do
        if (get().items.some((item) => item.id === left.id)) set({ cursor: left.id, selection: new Set([left.id]) });
      },
      goToCrumb: (index) => load(get().target, get().trail.slice(0, index + 1)),
      refresh: () => load(get().target, get().trail, true),
      setSort: (key) => {
        const { sort } = get();
        set({ sort: { key, dir: sort.key === key && sort.dir === 'asc' ? 'desc' : 'asc' } });
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
