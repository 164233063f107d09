// The local folders chosen besides the workspace, as the core has them (GET /app/local-roots).
// The core is the truth: after every change the list is read again, never patched here.
import { createStore } from 'zustand/vanilla';
import type { ApiClient } from '../api/client.js';
import type { LocalRootsAnswer } from '../api/app-types.js';

export interface LocalRootsState {
  answer: LocalRootsAnswer | null;
}

export function createLocalRootsStore(api: Pick<ApiClient, 'localRoots'>) {
  const store = createStore<LocalRootsState>()(() => ({ answer: null }));
  return {
    store,
    /** reads the list again; a failure leaves the last one (the places still work without paths) */
    async load(): Promise<void> {
      try {
        store.setState({ answer: await api.localRoots() });
      } catch {
        /* the paths are a convenience here; the manager dialog says what failed */
      }
    },
  };
}

export type LocalRootsStore = ReturnType<typeof createLocalRootsStore>;
