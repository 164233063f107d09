// Everything the views use, built once after the connection is known. Tests build one
// with a fake API client.
import { createContext, useContext } from 'react';
import type { FerryBridge, UiState } from '../../shared/ipc.js';
import type { ApiClient } from './api/client.js';
import { createDetailCache } from './stores/details.js';
import { createDuplicatePrompt } from './stores/duplicates.js';
import { createJobsStore } from './stores/jobs.js';
import { createLocalRootsStore } from './stores/local-roots.js';
import { createQueueStore } from './stores/queue.js';
import { createPaneStore, type PaneSide, type PaneStore } from './stores/pane.js';
import { createSearchStore, type SearchStore } from './stores/search.js';
import { createSessionStore } from './stores/session.js';
import { createUiStore } from './stores/ui.js';
import { createActions } from './actions.js';

export interface ServiceOptions {
  api: ApiClient;
  bridge?: FerryBridge;
  storage?: Storage | null;
}

function createBaseServices({ api, bridge, storage = safeLocalStorage() }: ServiceOptions) {
  const jobs = createJobsStore(storage);
  return {
    api,
    bridge,
    panes: { left: createPaneStore('left', api), right: createPaneStore('right', api) } as Record<
      PaneSide,
      PaneStore
    >,
    searches: { left: createSearchStore(api), right: createSearchStore(api) } as Record<PaneSide, SearchStore>,
    details: createDetailCache(api),
    jobs,
    queue: createQueueStore(api, jobs),
    duplicates: createDuplicatePrompt(storage),
    session: createSessionStore(api),
    localRoots: createLocalRootsStore(api),
    ui: createUiStore(),
    uiState: createUiStatePersistence(bridge, storage),
  };
}

export type BaseServices = ReturnType<typeof createBaseServices>;

export function createServices(options: ServiceOptions) {
  const base = createBaseServices(options);
  return { ...base, actions: createActions(base) };
}

export type Services = BaseServices & { actions: ReturnType<typeof createActions> };

export const ServicesContext = createContext<Services | null>(null);

export function useServices(): Services {
  const services = useContext(ServicesContext);
  if (!services) throw new Error('ServicesContext is missing');
  return services;
}

function safeLocalStorage(): Storage | null {
  try {
    return globalThis.localStorage ?? null;
  } catch {
    return null;
  }
}

const PANES_KEY = 'ferry.panes';

/** The panes' last locations: in userData through the bridge, else in localStorage. */
function createUiStatePersistence(bridge: FerryBridge | undefined, storage: Storage | null) {
  return {
    async read(): Promise<UiState | null> {
      if (bridge) return bridge.getUiState().catch(() => null);
      try {
        return JSON.parse(storage?.getItem(PANES_KEY) ?? 'null') as UiState | null;
      } catch {
        return null;
      }
    },
    async write(state: UiState): Promise<void> {
      if (bridge) return bridge.setUiState(state).catch(() => undefined);
      storage?.setItem(PANES_KEY, JSON.stringify(state));
    },
  };
}
