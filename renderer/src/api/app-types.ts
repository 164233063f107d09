// Shapes of the app-only routes (/app/...) the renderer uses besides /api_v1/.
// The server side owns them; keep in step with docs/api.md.

export interface SessionTarget {
  name: string;
  readable_name: string;
  /** "access-key" for local targets (the app's key opens them), "remote" when a service token is needed */
  credential: 'access-key' | 'remote' | (string & {});
  has_stored_token: boolean;
  /** POST …/resources/<id>/verify/ re-checks the stored bytes (the offline library) */
  can_verify?: boolean;
}

export interface Session {
  version: string;
  keychain: { persistent: boolean; description: string };
  targets: SessionTarget[];
}

/** GET /app/local-roots: folders chosen besides the workspace, each a target `local-<slug>` */
export interface LocalRoot {
  name: string;
  label: string;
  path: string;
}

export interface LocalRootsAnswer {
  workspace: string;
  roots: LocalRoot[];
}

/** GET /app/rclone-remotes: names and types only; a remote's options are never sent back */
export interface RcloneRemote {
  name: string;
  /** rclone's backend type ("s3", "sftp", "webdav") */
  type: string;
  /** the target it appears as: rclone-<name> */
  target: string;
}

export interface RcloneRemotesAnswer {
  /** false: rclone is not available to Ferry, so no remote can be added */
  available: boolean;
  remotes: RcloneRemote[];
}
