import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { makeConfig, type FerryConfig, type RemoteUrls } from './core/config.js';
import { createCore, type FerryCore } from './core/ferry-core.js';
import type { SecretStore } from './core/keychain/port.js';
import type { Trash } from './core/target.js';
import { openSecretStore } from './core/keychain/os-keychain.js';
import { removeUnownedFiles } from './core/jobs/owned-files.js';
import { startServer } from './server/server.js';
import { rcloneSettingsFromEnv } from './core/targets/rclone/index.js';
import { spoolDir } from './server/spool.js';

/**
 * Starts core + HTTP listener and publishes `endpoint.json`: what both `ferry serve` and
 * the Electron main do. Plain Node, so it is tested without Electron.
 */
export interface StartOptions {
  dataDir: string;
  workspace: string;
  rendererDir?: string | null;
  host?: string;
  port?: number;
  allowedOrigins?: string[];
  libraryDirs?: string[];
  remotes?: Partial<RemoteUrls>;
  /** default: the OS keychain when it answers, otherwise memory */
  secrets?: SecretStore;
  config?: Partial<FerryConfig>;
  /** where local deletes go (the desktop app: the system's trash); default Ferry's trash folder */
  trash?: Trash;
}

export interface RunningFerry {
  url: string;
  port: number;
  accessKey: string;
  core: FerryCore;
  /** why tokens are not persisted, when the OS keychain could not be used */
  keychainWarning: string | null;
  endpointFile: string;
  close(): Promise<void>;
}

export interface EndpointFile {
  url: string;
  port: number;
  pid: number;
  access_key: string;
}

export async function startFerry(options: StartOptions): Promise<RunningFerry> {
  await mkdir(options.dataDir, { recursive: true, mode: 0o700 });
  const endpointFile = path.join(options.dataDir, 'endpoint.json');
  let keychainWarning: string | null = null;
  let secrets = options.secrets;
  if (!secrets) {
    const opened = await openSecretStore();
    secrets = opened.store;
    keychainWarning = opened.fallbackReason;
  }
  const rclone = options.config && 'rclone' in options.config ? { settings: options.config.rclone ?? null, note: null } : rcloneSettingsFromEnv();
  if (rclone.note) console.info(`rclone: ${rclone.note}`);
  const config = makeConfig({
    ...options.config,
    rclone: rclone.settings,
    dataDir: options.dataDir,
    workspace: options.workspace,
    libraryDirs: options.libraryDirs ?? options.config?.libraryDirs ?? [],
    remotes: { ...makeConfig().remotes, ...options.config?.remotes, ...options.remotes },
  });
  const core = await createCore(config, { secrets, trash: options.trash, previousAccessKey: await readPreviousKey(endpointFile) });
  // What a crash (SIGKILL, power cut) of an earlier run left outside the workspace: a spooled
  // upload no job owns, a half-kept download. Jobs are loaded by now, so theirs are known.
  await removeUnownedFiles(spoolDir(config.dataDir), core.jobs.ownedFiles());
  await core.library.sweep();
  let server: Awaited<ReturnType<typeof startServer>>;
  try {
    server = await startServer(core, {
      host: options.host ?? '127.0.0.1',
      port: options.port ?? 0,
      rendererDir: options.rendererDir ?? null,
      allowedOrigins: options.allowedOrigins,
    });
  } catch (error) {
    await core.close();
    throw error;
  }
  const url = server.url.endsWith('/') ? server.url : `${server.url}/`;
  await writeEndpointFile(endpointFile, { url, port: server.port, pid: process.pid, access_key: core.accessKey });
  return {
    url,
    port: server.port,
    accessKey: core.accessKey,
    core,
    keychainWarning,
    endpointFile,
    async close() {
      await server.app.close();
      await core.close();
    },
  };
}

/**
 * Atomic, owner-only: local tools read the port and key from here. The temporary file is
 * created fresh (`wx`): a file planted under that name with looser permissions is removed,
 * never written into, since its mode would survive the rename.
 */
async function writeEndpointFile(file: string, endpoint: EndpointFile): Promise<void> {
  const temporary = `${file}.${process.pid}.tmp`;
  await rm(temporary, { force: true });
  await writeFile(temporary, `${JSON.stringify(endpoint, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  await rename(temporary, file);
}

/** Without an OS keychain, the key of the last run keeps tools' saved settings valid. */
async function readPreviousKey(file: string): Promise<string | null> {
  try {
    const parsed = JSON.parse(await readFile(file, 'utf8')) as Partial<EndpointFile>;
    return typeof parsed.access_key === 'string' ? parsed.access_key : null;
  } catch {
    return null;
  }
}
