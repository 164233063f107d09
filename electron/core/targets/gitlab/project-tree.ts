import type { Readable } from 'node:stream';
import { encodePath, type GitlabApi } from './gitlab-api.js';
import { GitBlobVerifier } from '../forge/git-hash.js';
import { notFound } from '../../errors.js';

/** The slice of a GitLab project Ferry keeps. */
export interface Project {
  id: number;
  name: string;
  path_with_namespace: string;
  /** null (or absent) while the repository is empty */
  default_branch?: string | null;
  empty_repo?: boolean;
  created_at?: string | null;
  last_activity_at?: string | null;
  web_url?: string;
  /** the repository's git URL over HTTPS */
  http_url_to_repo?: string;
  /** with `statistics=true`, for members with Reporter access or more */
  statistics?: { repository_size?: number };
  visibility?: string;
  description?: string | null;
  /**
   * The date a project was deleted on where GitLab removes it only later (delayed deletion):
   * until then it stays, renamed `<path>-deletion_scheduled-<id>` (gitlab-org/gitlab#526081;
   * `-deleted-<id>` before, !76675). `…_on` since GitLab 12.10 (!28754), `…_at` the older name
   * with the same value, still sent. See scheduledForDeletion.
   */
  marked_for_deletion_at?: string | null;
  marked_for_deletion_on?: string | null;
}

export interface TreeItem {
  id: string;
  name: string;
  type: 'tree' | 'blob' | 'commit';
  path: string;
  mode: string;
}

export interface FileHead {
  size: number;
  sha256: string;
  blobId: string;
  lastCommitId: string | null;
  executable: boolean;
}

export const hasCommits = (p: Project) => Boolean(p.default_branch) && p.empty_repo !== true;
export const branchOf = (p: Project) => p.default_branch || 'main';

/**
 * A project deleted by its owner but kept by GitLab until a later date (delayed deletion,
 * `DELETE /projects/:id` on GitLab with it on: docs/targets/gitlab.md) is gone to Ferry: it is
 * read-only there and will vanish with whatever went into it, so Ferry neither lists it nor
 * writes into it, and a resumed job whose project the owner deleted makes a new one
 * (jobs/executors.ts `madeByEarlierRun` takes the 404 as "gone").
 */
export const scheduledForDeletion = (p: Project) => Boolean(p.marked_for_deletion_on || p.marked_for_deletion_at);

export async function projectById(api: GitlabApi, id: number): Promise<Project> {
  // statistics=true: the repository's size, where the token's role may see it (Reporter or more)
  const project = await api.json<Project>(`projects/${id}`, { searchParams: { statistics: true } });
  if (scheduledForDeletion(project)) {
    const on = project.marked_for_deletion_on ?? project.marked_for_deletion_at;
    throw notFound(`The GitLab project ${project.path_with_namespace} was deleted on ${on} and is only waiting for GitLab to remove it; restore it in GitLab to use it again.`);
  }
  return project;
}

export async function* allProjects(api: GitlabApi): AsyncGenerator<Project> {
  // membership=true: every project the user belongs to, group projects included
  for await (const project of api.paginate<Project>('projects', { membership: true, order_by: 'id', sort: 'asc' })) if (!scheduledForDeletion(project)) yield project;
}

/** The tree of the default branch below `path` (keyset paging, GitLab ≥ 15.0's only way). */
export async function* walkTree(api: GitlabApi, project: Project, path = '', recursive = true): AsyncGenerator<TreeItem> {
  if (!hasCommits(project)) return;
  yield* api.paginate<TreeItem>(`projects/${project.id}/repository/tree`, {
    ref: branchOf(project),
    recursive,
    pagination: 'keyset',
    ...(path ? { path } : {}),
  });
}

/** HEAD on the files API: size and SHA-256 without downloading; null when no such file. */
export async function headFile(api: GitlabApi, project: Project, path: string): Promise<FileHead | null> {
  if (!hasCommits(project)) return null;
  const response = await api.request(`projects/${project.id}/repository/files/${encodePath(path)}`, {
    method: 'HEAD',
    searchParams: { ref: branchOf(project) },
    allow: [404],
  });
  if (response.status === 404) return null;
  const h = response.headers;
  return {
    size: Number(h.get('x-gitlab-size') ?? 0),
    sha256: (h.get('x-gitlab-content-sha256') ?? '').toLowerCase(),
    blobId: h.get('x-gitlab-blob-id') ?? '',
    lastCommitId: h.get('x-gitlab-last-commit-id'),
    executable: h.get('x-gitlab-execute-filemode') === 'true',
  };
}

/** Whether `path` is a folder on the default branch. */
export async function isFolder(api: GitlabApi, project: Project, path: string): Promise<boolean> {
  if (!hasCommits(project)) return false;
  const response = await api.request(`projects/${project.id}/repository/tree`, {
    searchParams: { ref: branchOf(project), path, per_page: 1 },
    allow: [404],
  });
  if (response.status === 404) return false;
  const items = (await response.json()) as unknown[];
  return items.length > 0;
}

/** A blob's bytes by id (the tree's snapshot), checked against its git blob id as they pass. */
export async function openBlob(api: GitlabApi, project: Project, blobId: string, size: number, displayPath: string): Promise<Readable> {
  const source = await api.stream(`projects/${project.id}/repository/blobs/${blobId}/raw`);
  const verifier = new GitBlobVerifier(blobId, size, { service: 'GitLab', path: displayPath });
  source.on('error', (error) => verifier.destroy(error));
  return source.pipe(verifier);
}
