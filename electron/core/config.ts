import os from 'node:os';
import path from 'node:path';
import { DEFAULT_LIMITS, type Limits } from './limits.js';
import type { RcloneSettings } from './targets/rclone/index.js';

/** Everything a core needs to start; the CLI and the Electron main both build one. */
export interface FerryConfig {
  dataDir: string;
  /** the `local` target's root */
  workspace: string;
  /** extra folders of ZIPs for the `offline` target (the data dir's own library is always there) */
  libraryDirs: string[];
  limits: Limits;
  /** base URLs of remote services (real ones by default; tests point them at emulators) */
  remotes: RemoteUrls;
  /** jobs running at once */
  jobConcurrency: number;
  /** finished jobs and their spools are removed after this long */
  jobRetentionMs: number;
  /** where rclone runs, for the rclone remotes; null: no rclone targets */
  rclone: RcloneSettings | null;
}

export interface RemoteUrls {
  osfApiUrl: string;
  githubApiUrl: string;
  gitlabUrl: string;
  zenodoUrl: string;
  figshareApiUrl: string;
  /** the Dataverse installation a bare API token is for; a JSON token names its own (targets/dataverse/credentials.ts) */
  dataverseUrl?: string;
  /** the InvenioRDM instance a bare token is for (none by default); a JSON token names its own (targets/invenio/credentials.ts) */
  invenioUrl?: string;
}

export const DEFAULT_REMOTES: RemoteUrls = {
  osfApiUrl: 'https://api.osf.io/v2/',
  githubApiUrl: 'https://api.github.com',
  gitlabUrl: 'https://gitlab.com',
  zenodoUrl: 'https://zenodo.org',
  figshareApiUrl: 'https://api.figshare.com/v2',
  dataverseUrl: 'https://dataverse.harvard.edu',
};

/** Remote URLs from the environment (FERRY_OSF_API_URL, ...), over the defaults. */
export function remotesFromEnv(env: NodeJS.ProcessEnv = process.env): RemoteUrls {
  return {
    osfApiUrl: env.FERRY_OSF_API_URL || DEFAULT_REMOTES.osfApiUrl,
    githubApiUrl: env.FERRY_GITHUB_API_URL || DEFAULT_REMOTES.githubApiUrl,
    gitlabUrl: env.FERRY_GITLAB_URL || DEFAULT_REMOTES.gitlabUrl,
    zenodoUrl: env.FERRY_ZENODO_URL || DEFAULT_REMOTES.zenodoUrl,
    figshareApiUrl: env.FERRY_FIGSHARE_API_URL || DEFAULT_REMOTES.figshareApiUrl,
    dataverseUrl: env.FERRY_DATAVERSE_URL || DEFAULT_REMOTES.dataverseUrl,
    invenioUrl: env.FERRY_INVENIO_URL || '',
  };
}

export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME || path.join(os.homedir(), '.config');
  return path.join(base, 'ferry');
}

export function defaultWorkspace(): string {
  return path.join(os.homedir(), 'Ferry');
}

export function makeConfig(overrides: Partial<FerryConfig> = {}): FerryConfig {
  return {
    dataDir: overrides.dataDir ?? defaultDataDir(),
    workspace: overrides.workspace ?? defaultWorkspace(),
    libraryDirs: overrides.libraryDirs ?? [],
    limits: { ...DEFAULT_LIMITS, ...overrides.limits },
    remotes: overrides.remotes ?? remotesFromEnv(),
    jobConcurrency: overrides.jobConcurrency ?? 2,
    jobRetentionMs: overrides.jobRetentionMs ?? 7 * 24 * 3600 * 1000,
    rclone: overrides.rclone ?? null,
  };
}
