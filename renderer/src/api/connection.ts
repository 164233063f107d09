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

/** No key in the address and none remembered: the page shows the sign-in screen. */
export class MissingAccessKeyError extends Error {
  constructor() {
    super('Sign in with the access key of this Ferry: run `ferry open`, or paste the key from endpoint.json.');
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

/** Keeps a key that worked for this tab only (sessionStorage: gone when the tab closes; never localStorage). */
export function rememberAccessKey(storage: Pick<Storage, 'setItem'>, key: string): void {
  try {
    storage.setItem(SESSION_KEY, key);
  } catch {
    /* storage unavailable: the key lasts until a reload */
  }
}

export function forgetAccessKey(storage: Pick<Storage, 'removeItem'>): void {
  try {
    storage.removeItem(SESSION_KEY);
  } catch {
    /* nothing to forget */
  }
}

export type KeyCheck = { ok: true } | { ok: false; reason: 'rejected' | 'unreachable' | 'error'; message: string };

/**
 * Asks the core whether `key` opens it (GET /app/session). The key travels only in the
 * Authorization header, never in a URL.
 */
export async function checkAccessKey(url: string, key: string, fetchImpl: typeof fetch = (...a) => fetch(...a)): Promise<KeyCheck> {
  let response: Response;
  try {
    response = await fetchImpl(`${url.replace(/\/+$/, '')}/app/session`, {
      headers: { Authorization: `Bearer ${key}` },
      cache: 'no-store',
    });
  } catch {
    return {
      ok: false,
      reason: 'unreachable',
      message: "Ferry's local service did not answer. Check that `ferry serve` is still running, then try again.",
    };
  }
  if (response.ok) return { ok: true };
  if (response.status === 401 || response.status === 403) {
    return {
      ok: false,
      reason: 'rejected',
      message:
        "That key was not accepted. Copy the whole access_key value from endpoint.json; if Ferry runs with another data directory (--data-dir), use the endpoint.json there.",
    };
  }
  return { ok: false, reason: 'error', message: `Ferry's local service answered ${response.status}; try again in a moment.` };
}

export function browserBridge(): FerryBridge | undefined {
  const candidate = (globalThis as { ferry?: FerryBridge }).ferry;
  return candidate && candidate.isElectron ? candidate : undefined;
}
