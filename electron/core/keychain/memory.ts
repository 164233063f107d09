import type { SecretStore } from './port.js';

export class MemorySecretStore implements SecretStore {
  readonly persistent = false;
  readonly description = 'memory (this run only)';
  private readonly secrets = new Map<string, string>();

  async get(account: string): Promise<string | null> {
    return this.secrets.get(account) ?? null;
  }

  async set(account: string, secret: string): Promise<void> {
    this.secrets.set(account, secret);
  }

  async delete(account: string): Promise<boolean> {
    return this.secrets.delete(account);
  }
}
