import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { FerryConfig } from './config.js';
import { TargetRegistry } from './registry.js';
import type { SecretStore } from './keychain/port.js';
import { ACCESS_KEY_ACCOUNT } from './keychain/port.js';
import type { JobService } from './jobs/types.js';
import { createJobService } from './jobs/service.js';
import { idleCollectionFor } from './idle-collection.js';
import { startYoungCollection } from './young-collection.js';
import { registerTransferExecutors } from './jobs/executors.js';
import { registerCheckExecutor } from './jobs/check-job.js';
import type { Target, Trash } from './target.js';
import { FileOperations } from './operations/service.js';
import { FolderTrash } from './operations/folder-trash.js';
import { builtinTargets } from './targets/builtin.js';
import { createLocalRootTarget } from './targets/local/index.js';
import { LocalRoots } from './local-roots.js';
import { startRcloneService, type RcloneAccounts } from './targets/rclone/index.js';
import { Library } from './targets/offline/library.js';
import type { DownloadLibrary } from './download-library.js';
import { defaultLibraryDir } from './targets/offline/offline-target.js';
import { registerVerifyExecutor } from './verify-job.js';

/** The host-neutral service: targets, jobs, secrets. The CLI and Electron main both start one. */
export interface FerryCore {
  readonly config: FerryConfig;
  readonly targets: TargetRegistry;
  readonly secrets: SecretStore;
  /** the 256-bit key that authorises requests to the local API (hex) */
  readonly accessKey: string;
  readonly jobs: JobService;
  /** where "keep offline" puts a copy of a download (the offline target lists it) */
  readonly library: DownloadLibrary;
  /** rclone remotes added in Ferry; null without rclone */
  readonly rcloneAccounts: RcloneAccounts | null;
  /** delete, rename/move, new folder and the trash, over any target that offers them */
  readonly operations: FileOperations;
  /** folders of the person's choosing, each a `local-<slug>` target (local-roots.ts) */
  readonly localRoots: LocalRoots;
  close(): Promise<void>;
}

export interface CoreOptions {
  secrets: SecretStore;
  /** an access key to reuse when the secret store has none (e.g. from endpoint.json) */
  previousAccessKey?: string | null;
  /** the targets to serve; default: every built-in target (tests pass their own) */
  targets?: (config: FerryConfig, secrets: SecretStore) => Target[];
  /** where local deletes go: the desktop app's system trash; default Ferry's trash folder (<dataDir>/trash) */
  trash?: Trash;
}

export async function createCore(config: FerryConfig, options: CoreOptions): Promise<FerryCore> {
  await mkdir(config.dataDir, { recursive: true, mode: 0o700 });
  await mkdir(config.workspace, { recursive: true });
  const accessKey = await loadAccessKey(options.secrets, options.previousAccessKey ?? null);

  const targets = new TargetRegistry();
  for (const target of (options.targets ?? builtinTargets)(config, options.secrets)) targets.register(target);
  const localRoots = new LocalRoots({
    dataDir: config.dataDir,
    workspace: config.workspace,
    registry: targets,
    createTarget: (root) => createLocalRootTarget(config, root),
  });
  // only with the built-in targets: a test passing its own set gets exactly those
  if (!options.targets) await localRoots.load();
  const rclone = config.rclone ? await startRcloneService(config.rclone, targets, options.secrets) : null;

  startYoungCollection(process.env);
  const jobs = createJobService({
    dir: path.join(config.dataDir, 'jobs'),
    concurrency: config.jobConcurrency,
    retentionMs: config.jobRetentionMs,
    accessKey,
    queueListener: idleCollectionFor(process.env),
  });
  registerTransferExecutors(jobs, { targets, secrets: options.secrets, limits: config.limits, accessKey });
  registerVerifyExecutor(jobs, { targets, accessKey });
  registerCheckExecutor(jobs, { targets, secrets: options.secrets, accessKey });
  await jobs.start();

  return {
    config,
    targets,
    secrets: options.secrets,
    accessKey,
    jobs,
    library: new Library([defaultLibraryDir(config.dataDir), ...config.libraryDirs]),
    rcloneAccounts: rclone?.accounts ?? null,
    operations: new FileOperations(targets, options.trash ?? new FolderTrash(path.join(config.dataDir, 'trash'))),
    localRoots,
    async close() {
      await jobs.close();
      await targets.close();
      await rclone?.stop();
    },
  };
}

async function loadAccessKey(secrets: SecretStore, previous: string | null): Promise<string> {
  const stored = await secrets.get(ACCESS_KEY_ACCOUNT);
  if (stored && /^[0-9a-f]{64}$/.test(stored)) return stored;
  const key = previous && /^[0-9a-f]{64}$/.test(previous) ? previous : randomBytes(32).toString('hex');
  await secrets.set(ACCESS_KEY_ACCOUNT, key);
  return key;
}
