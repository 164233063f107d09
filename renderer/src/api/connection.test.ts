import { describe, expect, it, vi } from 'vitest';
import { keyFromFragment, MissingAccessKeyError, resolveConnection } from './connection.js';

function env(hash: string, stored: string | null = null) {
  const storage = new Map<string, string>();
  if (stored) storage.set('ferry.accessKey', stored);
  return {
    location: { hash, origin: 'http://127.0.0.1:4000', pathname: '/', search: '' },
    history: { replaceState: vi.fn() },
    sessionStorage: {
      getItem: (k: string) => storage.get(k) ?? null,
      setItem: (k: string, v: string) => void storage.set(k, v),
    },
    storage,
  };
}

describe('connection', () => {
  it('reads the key from the fragment, drops it from the address bar, keeps it for reloads', async () => {
    const e = env('#key=abc123');
    const connection = await resolveConnection(e);
    expect(connection).toEqual({ url: 'http://127.0.0.1:4000/', accessKey: 'abc123' });
    expect(e.history.replaceState).toHaveBeenCalledWith(null, '', '/');
    expect(e.storage.get('ferry.accessKey')).toBe('abc123');
  });

  it('uses the remembered key after a reload', async () => {
    const e = env('', 'kept');
    expect((await resolveConnection(e)).accessKey).toBe('kept');
    expect(e.history.replaceState).not.toHaveBeenCalled();
  });

  it('explains what to do without a key', async () => {
    await expect(resolveConnection(env(''))).rejects.toBeInstanceOf(MissingAccessKeyError);
  });

  it('prefers the Electron bridge', async () => {
    const e = env('#key=ignored');
    const bridge = { isElectron: true, connection: async () => ({ url: 'http://127.0.0.1:9/', accessKey: 'b' }) };
    expect(await resolveConnection({ ...e, bridge: bridge as never })).toEqual({ url: 'http://127.0.0.1:9/', accessKey: 'b' });
  });

  it('parses fragments with other parameters', () => {
    expect(keyFromFragment('#x=1&key=k%2B1')).toBe('k+1');
    expect(keyFromFragment('#key=')).toBeNull();
  });
});
