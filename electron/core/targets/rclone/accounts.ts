import { badRequest, conflict, FerryError } from '../../errors.js';
import type { SecretStore } from '../../keychain/port.js';
import type { TargetRegistry } from '../../registry.js';
import { RcError, scrubPaths, type RcClient } from './rc-client.js';
import { RcloneTarget } from './rclone-target.js';

// rclone remotes the user adds in Ferry (a type and its options), with no rclone config file:
// each one is kept whole in the keychain (its options hold passwords and keys), and lives in
// rclone only in the memory of an engine of its own, started with `--config ""` (rclone reads
// and writes no config file then), where `config/create` makes it a named remote with its
// passwords obscured. Nothing of it is written to disk by Ferry or by rclone.
//
// Not connection strings (`:webdav,url=…:`): rcd's object server takes the remote from the
// URL path, which Go's router cleans, so a value holding `//` (every URL option) cannot be
// read from (tested: 301 to `http:/host`).
//
// Keychain accounts: `rclone-remotes` (the names and types, JSON) and `rclone-remote:<name>`
// ({type, options}, JSON). With a keychain that lasts this run only, so do the remotes.

const INDEX_ACCOUNT = 'rclone-remotes';
const remoteAccount = (name: string) => `rclone-remote:${name}`;
/** the name becomes the target `rclone-<name>` as it is: lowercase, URL-safe */
const NAME = /^[a-z0-9][a-z0-9_-]{0,39}$/;

export interface RcloneAccountInfo {
  name: string;
  /** rclone's backend type ("sftp", "s3" …) */
  type: string;
  /** the Ferry target it appears as */
  target: string;
}

interface Saved {
  type: string;
  options: Record<string, string>;
}

interface ProviderOption {
  Name: string;
}

/** The remotes added in Ferry: listed, added or replaced, and removed; each is a target at once. */
export interface RcloneAccounts {
  list(): Promise<RcloneAccountInfo[]>;
  put(name: string, type: string, options: Record<string, string>): Promise<RcloneAccountInfo>;
  /** false when there was no such remote */
  remove(name: string): Promise<boolean>;
}

export interface AccountsDeps {
  secrets: SecretStore;
  targets: TargetRegistry;
  /** the engine's client, started on first need */
  client(): Promise<RcClient>;
  /** "this computer" or the remote engine's host */
  where: string;
}

export function rcloneAccounts(deps: AccountsDeps): RcloneAccounts & { restore(): Promise<void> } {
  let providers: Map<string, ProviderOption[]> | null = null;

  async function index(): Promise<{ name: string; type: string }[]> {
    const text = await deps.secrets.get(INDEX_ACCOUNT);
    if (!text) return [];
    try {
      const parsed = JSON.parse(text) as unknown;
      return Array.isArray(parsed) ? parsed.filter((row): row is { name: string; type: string } => typeof row?.name === 'string' && typeof row?.type === 'string' && NAME.test(row.name)) : [];
    } catch {
      return [];
    }
  }

  async function optionsOf(client: RcClient, type: string): Promise<ProviderOption[]> {
    if (!providers) {
      const answer = await client.call<{ providers: { Name: string; Options: ProviderOption[] | null }[] }>('config/providers', {});
      providers = new Map(answer.providers.map((provider) => [provider.Name, provider.Options ?? []]));
    }
    const options = providers.get(type);
    if (!options) throw badRequest(`rclone has no remote type '${type.slice(0, 40)}'; the types are rclone's backend names, such as sftp, s3, webdav, drive.`);
    return options;
  }

  /** The target for a saved remote: options checked against rclone's, the remote made in the engine's memory, fsinfo asked. */
  async function targetOf(name: string, saved: Saved): Promise<RcloneTarget> {
    const client = await deps.client();
    const known = new Set((await optionsOf(client, saved.type)).map((option) => option.Name));
    for (const [key, value] of Object.entries(saved.options)) {
      if (!known.has(key)) throw badRequest(`rclone's ${saved.type} remotes have no option '${key.slice(0, 40)}'.`);
      if (/[\r\n\0]/.test(value)) throw badRequest(`The option '${key}' holds a line break; rclone options are one line.`);
    }
    let info: { Hashes: string[] | null; Features: Record<string, boolean>; Root: string };
    try {
      // `obscure`: the password options are given plain and obscured by rclone, as its config holds them
      await client.call('config/create', { name, type: saved.type, parameters: saved.options, opt: { obscure: true, nonInteractive: true } });
      info = await client.call('operations/fsinfo', { fs: `${name}:` });
      // fsinfo alone connects to nothing on some backends (WebDAV): the top level is listed
      // once, so wrong settings are said now rather than at the first listing
      await client.call('operations/list', { fs: `${name}:`, remote: '' });
    } catch (error) {
      await client.call('config/delete', { name }).catch(() => undefined);
      if (!(error instanceof RcError)) throw error;
      throw new FerryError(502, 'upstream_error', `rclone could not open the ${saved.type} remote '${name}' with these settings: ${scrubPaths(error.rcloneMessage, [])}`);
    }
    return new RcloneTarget(`rclone-${name}`, client, {
      remote: name,
      type: saved.type,
      engine: deps.where,
      hashes: (info.Hashes ?? []).map((hash) => hash.toLowerCase()),
      slowHash: info.Features.SlowHash === true,
      root: info.Root || null,
    });
  }

  return {
    async list() {
      return (await index()).map(({ name, type }) => ({ name, type, target: `rclone-${name}` }));
    },

    async put(name, type, options) {
      if (!NAME.test(name)) throw badRequest('A remote\'s name is 1 to 40 lowercase letters, digits, - and _, starting with a letter or digit.');
      const targetName = `rclone-${name}`;
      const rows = await index();
      const existing = deps.targets.find(targetName);
      if (existing && !rows.some((row) => row.name === name)) throw conflict(`There is already a target '${targetName}' (a remote of the rclone config); choose another name.`);
      const saved: Saved = { type, options };
      // checked before anything is kept: a remote that does not open is not added
      const target = await targetOf(name, saved);
      await deps.secrets.set(remoteAccount(name), JSON.stringify(saved));
      await deps.secrets.set(INDEX_ACCOUNT, JSON.stringify([...rows.filter((row) => row.name !== name), { name, type }].sort((a, b) => (a.name < b.name ? -1 : 1))));
      if (existing) deps.targets.unregister(targetName);
      deps.targets.register(target);
      return { name, type, target: targetName };
    },

    async remove(name) {
      const rows = await index();
      if (!rows.some((row) => row.name === name)) return false;
      await deps.secrets.set(INDEX_ACCOUNT, JSON.stringify(rows.filter((row) => row.name !== name)));
      await deps.secrets.delete(remoteAccount(name));
      deps.targets.unregister(`rclone-${name}`);
      await (await deps.client()).call('config/delete', { name }).catch(() => undefined);
      return true;
    },

    /** At start: a target for every saved remote; one that does not open is said once and skipped. */
    async restore() {
      for (const { name } of await index()) {
        const text = await deps.secrets.get(remoteAccount(name));
        if (!text || deps.targets.find(`rclone-${name}`)) continue;
        try {
          deps.targets.register(await targetOf(name, JSON.parse(text) as Saved));
        } catch (error) {
          console.warn(`The rclone remote '${name}' added in Ferry is not shown: ${(error as Error).message}`);
        }
      }
    },
  };
}
