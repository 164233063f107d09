import { AsyncEntry } from '@napi-rs/keyring';
import type { SecretStore } from './port.js';
import { MemorySecretStore } from './memory.js';

const PROBE_ACCOUNT = 'probe';

/** The OS keychain (Secret Service on Linux, Keychain on macOS, Credential Manager on Windows). */
export class OsSecretStore implements SecretStore {
  readonly persistent = true;
  readonly description = 'the system keychain';

  constructor(private readonly service: string) {}

  async get(account: string): Promise<string | null> {
    return new AsyncEntry(this.service, account).getPassword();
  }

  async set(account: string, secret: string): Promise<void> {
    await new AsyncEntry(this.service, account).setPassword(secret);
  }

  async delete(account: string): Promise<boolean> {
    return new AsyncEntry(this.service, account).deleteCredential();
  }
}

export interface OpenedSecretStore {
  store: SecretStore;
  /** why the OS keychain could not be used, when it could not */
  fallbackReason: string | null;
}

/**
 * The OS keychain if it answers a write/read/delete round trip within the time limit,
 * otherwise memory with the reason (e.g. no Secret Service on the D-Bus session).
 */
export async function openSecretStore(service = 'ferry', timeoutMs = 5000): Promise<OpenedSecretStore> {
  const store = new OsSecretStore(service);
  const probe = async () => {
    const value = `probe-${process.pid}`;
    await store.set(PROBE_ACCOUNT, value);
    const back = await store.get(PROBE_ACCOUNT);
    await store.delete(PROBE_ACCOUNT);
    if (back !== value) throw new Error('the keychain did not return what was stored');
  };
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      probe(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('the keychain did not answer in time')), timeoutMs);
      }),
    ]);
    return { store, fallbackReason: null };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { store: new MemorySecretStore(), fallbackReason: `No usable system keychain (${reason}); tokens are kept for this run only.` };
  } finally {
    clearTimeout(timer);
  }
}
