/**
 * Where secrets live: the access key and each remote target's token. Implementations:
 * the OS keychain (os-keychain.ts) and memory (tests, or machines with no keychain, where
 * a token lasts for this run only). Secrets are never logged.
 */
export interface SecretStore {
  /** false when secrets vanish at exit (no OS keychain here) */
  readonly persistent: boolean;
  /** a short phrase for the UI: "the GNOME keyring", "memory (this run only)" */
  readonly description: string;
  get(account: string): Promise<string | null>;
  set(account: string, secret: string): Promise<void>;
  /** true when something was deleted */
  delete(account: string): Promise<boolean>;
}

export const ACCESS_KEY_ACCOUNT = 'access-key';
export const tokenAccount = (targetName: string) => `token:${targetName}`;
