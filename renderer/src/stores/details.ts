// Resource details (dates, sizes, hashes) fetched lazily: list rows carry only title and
// kind, so the grid asks for the rows it shows. Requests run with bounded concurrency,
// newest wishes first, and a wish is dropped if its row scrolled away before its turn.
// Results are cached per target; `version` ticks (batched) so views re-render. After an
// invalidation a known detail stays on show (marked stale) until its fresh copy arrives,
// so panels and rows do not flicker back to "Loading…".
import { createStore } from 'zustand/vanilla';
import type { ResourceDetail } from '../../../shared/api.js';
import { messageOf, type ApiClient } from '../api/client.js';

export type DetailEntry =
  | { state: 'loading' }
  | { state: 'ready'; detail: ResourceDetail }
  | { state: 'error'; error: string };

const keyOf = (target: string, id: string) => `${target}\u0000${id}`;

export function createDetailCache(api: Pick<ApiClient, 'detail'>, concurrency = 4) {
  const entries = new Map<string, DetailEntry>();
  /** keys whose ready entry is out of date: shown until refetched */
  const stale = new Set<string>();
  const inFlight = new Set<string>();
  const wanted = new Map<string, number>();
  const queue: { target: string; id: string }[] = [];
  let running = 0;
  let bumpScheduled = false;

  const store = createStore<{ version: number }>()(() => ({ version: 0 }));

  function bump(): void {
    if (bumpScheduled) return;
    bumpScheduled = true;
    queueMicrotask(() => {
      bumpScheduled = false;
      store.setState((s) => ({ version: s.version + 1 }));
    });
  }

  async function fetchOne(target: string, id: string): Promise<DetailEntry> {
    const key = keyOf(target, id);
    if (entries.get(key)?.state !== 'ready') entries.set(key, { state: 'loading' });
    stale.delete(key);
    inFlight.add(key);
    let entry: DetailEntry;
    try {
      entry = { state: 'ready', detail: await api.detail(target, id) };
    } catch (error) {
      entry = { state: 'error', error: messageOf(error) };
    }
    // a refresh may have cleared the cache meanwhile; the answer is still the newest we have
    inFlight.delete(key);
    entries.set(key, entry);
    if (stale.has(key) && wanted.get(key)) queue.push({ target, id }); // invalidated while in flight
    bump();
    return entry;
  }

  function pump(): void {
    while (running < concurrency && queue.length > 0) {
      const next = queue.pop()!; // newest wish first: what the user looks at now
      const key = keyOf(next.target, next.id);
      if (!wanted.get(key) || !needsFetch(key)) continue;
      running++;
      void fetchOne(next.target, next.id).finally(() => {
        running--;
        pump();
      });
    }
  }

  function needsFetch(key: string): boolean {
    return !inFlight.has(key) && (!entries.has(key) || stale.has(key));
  }

  return {
    store,
    get(target: string, id: string): DetailEntry | undefined {
      return entries.get(keyOf(target, id));
    },
    /** the row became visible: fetch its detail unless cached (refcounted) */
    want(target: string, id: string): void {
      const key = keyOf(target, id);
      wanted.set(key, (wanted.get(key) ?? 0) + 1);
      if (needsFetch(key)) {
        queue.push({ target, id });
        pump();
      }
    },
    release(target: string, id: string): void {
      const key = keyOf(target, id);
      const count = (wanted.get(key) ?? 0) - 1;
      if (count <= 0) wanted.delete(key);
      else wanted.set(key, count);
    },
    /** fetch now (the detail panel), sharing the cache */
    async load(target: string, id: string, force = false): Promise<DetailEntry> {
      const key = keyOf(target, id);
      const cached = entries.get(key);
      if (cached && cached.state === 'ready' && !force && !stale.has(key)) return cached;
      return fetchOne(target, id);
    },
    /** drop a target's cached details (after a refresh or a finished job) */
    invalidate(target: string): void {
      const prefix = `${target}\u0000`;
      for (const [key, entry] of [...entries]) {
        if (!key.startsWith(prefix)) continue;
        // an answer on its way may predate the change: fetch once more after it lands
        if (entry.state === 'ready' || inFlight.has(key)) stale.add(key);
        else entries.delete(key);
      }
      // rows still on screen fetch again
      for (const key of wanted.keys())
        if (key.startsWith(prefix)) queue.push({ target, id: key.slice(prefix.length) });
      pump();
      bump();
    },
    /** true when the shown entry is missing or out of date (a view should ask `load`) */
    isStale(target: string, id: string): boolean {
      return needsFetch(keyOf(target, id));
    },
    get inFlight(): number {
      return running;
    },
  };
}

export type DetailCache = ReturnType<typeof createDetailCache>;
