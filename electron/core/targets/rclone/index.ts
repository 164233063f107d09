import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { SecretStore } from '../../keychain/port.js';
import type { TargetRegistry } from '../../registry.js';
import type { Target } from '../../target.js';
import { rcloneAccounts, type RcloneAccounts } from './accounts.js';
import { RcClient, type RcEndpoint } from './rc-client.js';
import { findRclone, RCLONE_MISSING, startRcd } from './rcd-process.js';
import { RcloneTarget } from './rclone-target.js';

export { RCLONE_MISSING, findRclone } from './rcd-process.js';
export { RcloneTarget, idOf as rcloneId } from './rclone-target.js';
export type { RcloneAccounts, RcloneAccountInfo } from './accounts.js';

/**
 * Where Ferry's rclone engine runs. `local`: Ferry starts `rclone rcd` itself, on loopback,
 * reading the user's rclone config (or `configPath`). `remote`: an `rclone rcd` the user runs
 * elsewhere (a data-transfer node beside the cluster or the object store, reached through an
 * SSH tunnel or TLS), so copies between its remotes never pass through this computer.
 */
export type RcloneSettings =
  | { engine: 'local'; binary: string; configPath?: string; env?: NodeJS.ProcessEnv }
  | { engine: 'remote'; endpoint: RcEndpoint };

/**
 * The settings from the environment, or why there are none:
 * FERRY_RCLONE=off turns rclone off; FERRY_RCLONE_URL (+ FERRY_RCLONE_USER, FERRY_RCLONE_PASSWORD)
 * names a remote engine; otherwise the rclone program (FERRY_RCLONE or PATH) with
 * FERRY_RCLONE_CONFIG or rclone's own default config (none: only the remotes added in Ferry).
 */
export function rcloneSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): { settings: RcloneSettings | null; note: string | null } {
  if (env.FERRY_RCLONE === 'off') return { settings: null, note: null };
  if (env.FERRY_RCLONE_URL) {
    let url: URL;
    try {
      url = new URL(env.FERRY_RCLONE_URL);
    } catch {
      return { settings: null, note: 'FERRY_RCLONE_URL is not a URL; rclone remotes are not shown.' };
    }
    const href = url.href.endsWith('/') ? url.href : `${url.href}/`;
    return { settings: { engine: 'remote', endpoint: { url: href, user: env.FERRY_RCLONE_USER ?? '', password: env.FERRY_RCLONE_PASSWORD ?? '' } }, note: null };
  }
  const binary = findRclone(env);
  if (!binary) return { settings: null, note: RCLONE_MISSING };
  // no config file: no remotes of its own, and no engine started until one is added in Ferry
  const configPath = rcloneConfigFile(env) ?? undefined;
  return { settings: { engine: 'local', binary, configPath }, note: null };
}

/**
 * The rclone config file rclone itself would read (rclone.org/docs/#config-config-file):
 * FERRY_RCLONE_CONFIG or RCLONE_CONFIG, else `rclone/rclone.conf` in the XDG config folder,
 * else the old `~/.rclone.conf`; null when none exists (then no engine is started at all).
 */
export function rcloneConfigFile(env: NodeJS.ProcessEnv = process.env): string | null {
  const named = env.FERRY_RCLONE_CONFIG || env.RCLONE_CONFIG;
  if (named) return existsSync(named) ? named : null;
  const home = env.HOME || os.homedir();
  const candidates = [
    path.join(env.XDG_CONFIG_HOME || path.join(home, '.config'), 'rclone', 'rclone.conf'),
    path.join(env.APPDATA || path.join(home, 'AppData', 'Roaming'), 'rclone', 'rclone.conf'),
    path.join(home, '.rclone.conf'),
  ];
  return candidates.find((candidate) => existsSync(candidate)) ?? null;
}

export interface RcloneEngine {
  client: RcClient;
  /** "this computer", or the remote engine's host */
  where: string;
  targets(): Promise<Target[]>;
  stop(): Promise<void>;
}

export async function startRcloneEngine(settings: RcloneSettings): Promise<RcloneEngine> {
  const running = settings.engine === 'local' ? await startRcd({ binary: settings.binary, configPath: settings.configPath, env: settings.env }) : null;
  const endpoint = running ? running.endpoint : (settings as { endpoint: RcEndpoint }).endpoint;
  const client = new RcClient(endpoint);
  const where = running ? 'this computer' : new URL(endpoint.url).host;
  return {
    client,
    where,
    targets: () => discoverTargets(client, where),
    stop: async () => {
      await running?.stop();
    },
  };
}

interface FsInfo {
  Name: string;
  Root: string;
  Hashes: string[] | null;
  Features: Record<string, boolean>;
}

/** One target per remote in rclone's config, named `rclone-<remote>` (lowercase, URL-safe, unique). */
async function discoverTargets(client: RcClient, where: string): Promise<Target[]> {
  const { remotes } = await client.call<{ remotes?: string[] }>('config/listremotes', {});
  const dump = await client.call<Record<string, { type?: string }>>('config/dump', {});
  const targets: Target[] = [];
  const names = new Set<string>();
  for (const remote of (remotes ?? []).sort()) {
    const info = await client.call<FsInfo>('operations/fsinfo', { fs: `${remote}:` }).catch(() => null);
    if (!info) continue;
    let name = `rclone-${remote.toLowerCase().replace(/[^a-z0-9_-]+/g, '-').replace(/^-+|-+$/g, '') || 'remote'}`;
    for (let n = 2; names.has(name); n++) name = `${name.replace(/-\d+$/, '')}-${n}`;
    names.add(name);
    targets.push(
      new RcloneTarget(name, client, {
        remote,
        type: dump[remote]?.type ?? info.Name,
        hashes: (info.Hashes ?? []).map((hash) => hash.toLowerCase()),
        slowHash: info.Features.SlowHash === true,
        emptyFolders: info.Features.CanHaveEmptyDirectories === true,
        root: info.Root || null,
        engine: where,
      }),
    );
  }
  return targets;
}

export interface RcloneService {
  /** the remotes added in Ferry (keychain, an engine with its config in memory); null with a remote engine */
  accounts: RcloneAccounts | null;
  stop(): Promise<void>;
}

/**
 * rclone for the core: the config's remotes registered as targets at once (that engine starts
 * when there is a config file or a remote engine); the remotes added in Ferry restored from the
 * keychain into a second local engine whose config lives in memory only (started when there is
 * one). A failure costs the rclone remotes only, never Ferry's start: it is said once (no
 * secret is in rclone's start-up text).
 */
export async function startRcloneService(settings: RcloneSettings, targets: TargetRegistry, secrets: SecretStore): Promise<RcloneService | null> {
  const configured = settings.engine === 'remote' || settings.configPath ? await startRcloneEngine(settings).catch(said) : null;
  if (configured) for (const target of await configured.targets().catch((error: unknown) => (said(error), []))) targets.register(target);
  // the remotes added in Ferry: an engine of their own with its config in memory, started on first need
  let starting: Promise<RcloneEngine> | null = null;
  const memoryEngine = settings.engine === 'local' ? () => (starting ??= startRcloneEngine({ ...settings, configPath: '' })) : null;
  const accounts = memoryEngine ? rcloneAccounts({ secrets, targets, where: 'this computer', client: async () => (await memoryEngine()).client }) : null;
  await accounts?.restore().catch(said);
  if (!configured && !accounts) return null;
  return {
    accounts,
    stop: async () => {
      await configured?.stop();
      if (starting) await (await starting.catch(() => null))?.stop();
    },
  };
}

function said(error: unknown): null {
  console.warn(`rclone remotes are not shown: ${(error as Error).message}`);
  return null;
}
