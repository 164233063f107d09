// Where the local API is and the key that opens it. Electron hands both over through the
// preload bridge; in browser mode the page was opened as `http://127.0.0.1:<port>/#key=<key>`.
// The key sits in the fragment (never sent to a server, never in a query string); we read
// it, drop it from the address bar, and keep it in sessionStorage so a reload still works.
import type { Connection, FerryBridge } from '../../../shared/ipc.js';

const SESSION_KEY = 'ferry.accessKey';

export interface LocationLike {
  hash: string;
  origin: string;
  pathname: string;
  search: string;
}

export interface ConnectionEnv {
  location: LocationLike;
  history: Pick<History, 'replaceState'>;
  sessionStorage: Pick<Storage, 'getItem' | 'setItem'>;
  bridge?: FerryBridge;
}

export class MissingAccessKeyError extends Error {
  constructor() {
    super(
      'This page needs the access key Ferry printed when it started. Open the full address it printed (the part after # included).',
    );
  }
}

/** Reads `key` from a fragment like `#key=abc&x=y`. */
export function keyFromFragment(hash: string): string | null {
  const fragment = hash.startsWith('#') ? hash.slice(1) : hash;
  const value = new URLSearchParams(fragment).get('key');
  return value && value.length > 0 ? value : null;
}

export async function resolveConnection(env: ConnectionEnv): Promise<Connection> {
  if (env.bridge) return env.bridge.connection();
  const base = `${env.location.origin}/`;
  const fromFragment = keyFromFragment(env.location.hash);
  if (fromFragment) {
    env.sessionStorage.setItem(SESSION_KEY, fromFragment);
    // drop the key from the address bar (and from history) right away
    env.history.replaceState(null, '', env.location.pathname + env.location.search);
    return { url: base, accessKey: fromFragment };
  }
  const remembered = env.sessionStorage.getItem(SESSION_KEY);
  if (remembered) return { url: base, accessKey: remembered };
  throw new MissingAccessKeyError();
}

export function browserBridge(): FerryBridge | undefined {
  const candidate = (globalThis as { ferry?: FerryBridge }).ferry;
  return candidate && candidate.isElectron ? candidate : undefined;
}
