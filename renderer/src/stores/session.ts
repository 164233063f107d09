// What the core offers: its version, the keychain's nature, and the targets (with whether
// a token is stored for each). Loaded once, reloaded after the Accounts form changes.
import { createStore } from 'zustand/vanilla';
import type { FileOperation, FolderMode, TargetDescription } from '../../../shared/api.js';
import { ApiRequestError, messageOf, type ApiClient } from '../api/client.js';
import type { Session } from '../api/app-types.js';

export interface SessionState {
  status: 'loading' | 'ready' | 'error';
  session: Session | null;
  targets: TargetDescription[];
  error: string | null;
  /** HTTP status of the last failure (401: the access key no longer opens the core) */
  errorStatus: number | null;
}

export function createSessionStore(api: Pick<ApiClient, 'session' | 'targets'>) {
  const store = createStore<SessionState>()(() => ({
    status: 'loading',
    session: null,
    targets: [],
    error: null,
    errorStatus: null,
  }));
  return {
    store,
    async load(): Promise<void> {
      try {
        const [session, targets] = await Promise.all([api.session(), api.targets()]);
        store.setState({ status: 'ready', session, targets, error: null, errorStatus: null });
      } catch (error) {
        store.setState({ status: 'error', error: messageOf(error), errorStatus: error instanceof ApiRequestError ? error.status : null });
      }
    },
    /** whether a target offers a file operation (its `supported_operations`; absent: none) */
    offers(target: string | null, operation: FileOperation): boolean {
      return store.getState().targets.find((t) => t.name === target)?.supported_operations?.[operation] === true;
    },
    /** whether `GET resources/?q=` works there (`capabilities.search`) */
    searches(target: string | null): boolean {
      return store.getState().targets.find((t) => t.name === target)?.capabilities?.search === true;
    },
    /** whether a new top-level record there keeps descriptive metadata (`keeps_metadata`): only then is it reviewed */
    keepsMetadata(target: string | null): boolean {
      return store.getState().targets.find((t) => t.name === target)?.keeps_metadata === true;
    },
    /** the folder modes a write there chooses among (`capabilities.folder_modes`, the first the default); none where folders are kept */
    folderModes(target: string | null): FolderMode[] {
      return store.getState().targets.find((t) => t.name === target)?.capabilities?.folder_modes ?? [];
    },
    /** whether its files' bytes can be read (`supported_actions.resource_download`): a preview needs them */
    downloads(target: string | null): boolean {
      return store.getState().targets.find((t) => t.name === target)?.supported_actions.resource_download === true;
    },
    /**
     * A target on this machine (the access key opens it): a delete there goes to a trash and
     * can be undone. Anything else is a remote service, where a delete is final.
     */
    isOnThisMachine(target: string | null): boolean {
      return store.getState().session?.targets.find((t) => t.name === target)?.credential === 'access-key';
    },
    readableName(target: string | null): string {
      if (!target) return '';
      const { targets, session } = store.getState();
      return (
        targets.find((t) => t.name === target)?.readable_name ??
        session?.targets.find((t) => t.name === target)?.readable_name ??
        target
      );
    },
  };
}

export type SessionStore = ReturnType<typeof createSessionStore>;
