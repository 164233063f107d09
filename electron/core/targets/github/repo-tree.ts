import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { gh, statusOf, type GithubOctokit } from './client.js';
import { GitBlobVerifier } from '../forge/git-hash.js';

/** The slice of a GitHub repository Ferry keeps. */
export interface Repo {
  id: number;
  owner: string;
  name: string;
  fullName: string;
  defaultBranch: string;
  private: boolean;
  createdAt: string | null;
  pushedAt: string | null;
  updatedAt: string | null;
  htmlUrl: string;
  /** the repository's git URL over HTTPS (https://github.com/owner/name.git) */
  cloneUrl: string;
  description: string | null;
  sizeKb: number;
  topics: string[];
  /** GitHub's `license.spdx_id` ("NOASSERTION" for a licence it could not name), or null */
  license: string | null;
}

export interface TreeItem {
  /** relative to the repository root */
  path: string;
  mode: string;
  type: 'blob' | 'tree' | 'commit';
  sha: string;
  size?: number;
}

interface RawRepo {
  id: number;
  name: string;
  full_name: string;
  owner: { login: string } | null;
  default_branch?: string;
  private: boolean;
  created_at?: string | null;
  pushed_at?: string | null;
  updated_at?: string | null;
  html_url: string;
  clone_url?: string;
  description: string | null;
  size?: number;
  topics?: string[];
  license?: { spdx_id?: string | null } | null;
}

export function toRepo(raw: RawRepo): Repo {
  return {
    id: raw.id,
    owner: raw.owner?.login ?? raw.full_name.split('/')[0]!,
    name: raw.name,
    fullName: raw.full_name,
    defaultBranch: raw.default_branch || 'main',
    private: raw.private,
    createdAt: raw.created_at ?? null,
    pushedAt: raw.pushed_at ?? null,
    updatedAt: raw.updated_at ?? null,
    htmlUrl: raw.html_url,
    cloneUrl: raw.clone_url ?? `${raw.html_url}.git`,
    description: raw.description,
    sizeKb: raw.size ?? 0,
    topics: raw.topics ?? [],
    license: raw.license?.spdx_id ?? null,
  };
}

export async function repoById(octokit: GithubOctokit, id: number): Promise<Repo> {
  const { data } = await gh(() => octokit.request('GET /repositories/{repository_id}', { repository_id: id }));
  return toRepo(data as RawRepo);
}

export async function* allRepos(octokit: GithubOctokit): AsyncGenerator<Repo> {
  // follows the Link header's rel="next" until there is none
  const pages = octokit.paginate.iterator(octokit.rest.repos.listForAuthenticatedUser, { per_page: 100, sort: 'full_name' });
  const iterator = pages[Symbol.asyncIterator]();
  while (true) {
    const next = await gh(() => iterator.next());
    if (next.done) return;
    for (const raw of next.value.data) yield toRepo(raw as RawRepo);
  }
}

/** One tree, or null when the repository is empty (GitHub's 409 "Git Repository is empty."). */
async function getTree(octokit: GithubOctokit, repo: Repo, treeSha: string, recursive: boolean) {
  try {
    const { data } = await octokit.rest.git.getTree({ owner: repo.owner, repo: repo.name, tree_sha: treeSha, ...(recursive ? { recursive: '1' } : {}) });
    return data;
  } catch (error) {
    if (statusOf(error) === 409) return null;
    return gh(() => Promise.reject(error));
  }
}

const toItem = (prefix: string, e: { path?: string; mode?: string; type?: string; sha?: string; size?: number }): TreeItem => ({
  path: prefix + (e.path ?? ''),
  mode: e.mode ?? '100644',
  type: (e.type ?? 'blob') as TreeItem['type'],
  sha: e.sha ?? '',
  ...(e.size !== undefined ? { size: e.size } : {}),
});

/**
 * Everything below a tree (the default branch's root by default), in one call when it fits in
 * GitHub's recursive limit (100,000 entries / 7 MB); when the answer is `truncated`, each
 * sub-tree is walked on its own, as GitHub's docs advise.
 */
export async function* walkTree(octokit: GithubOctokit, repo: Repo, treeSha = repo.defaultBranch, prefix = ''): AsyncGenerator<TreeItem> {
  const whole = await getTree(octokit, repo, treeSha, true);
  if (!whole) return;
  if (!whole.truncated) {
    for (const e of whole.tree) yield toItem(prefix, e);
    return;
  }
  const level = await getTree(octokit, repo, treeSha, false);
  for (const e of level?.tree ?? []) {
    const item = toItem(prefix, e);
    yield item;
    if (item.type === 'tree') yield* walkTree(octokit, repo, item.sha, `${item.path}/`);
  }
}

/** Direct children of a tree. */
export async function listTree(octokit: GithubOctokit, repo: Repo, treeSha: string, prefix: string): Promise<TreeItem[]> {
  const level = await getTree(octokit, repo, treeSha, false);
  return (level?.tree ?? []).map((e) => toItem(prefix, e));
}

/** The entry at `path` on the default branch, walking one level per segment; null if absent. */
export async function findItem(octokit: GithubOctokit, repo: Repo, path: string): Promise<TreeItem | null> {
  const parts = path.split('/');
  let tree = repo.defaultBranch;
  let prefix = '';
  for (let i = 0; i < parts.length; i++) {
    const items = await listTree(octokit, repo, tree, prefix);
    const hit = items.find((e) => e.path === prefix + parts[i]);
    if (!hit) return null;
    if (i === parts.length - 1) return hit;
    if (hit.type !== 'tree') return null;
    tree = hit.sha;
    prefix = `${hit.path}/`;
  }
  return null;
}

/**
 * A blob's raw bytes, streamed (the git blobs API with the raw media type serves files of any
 * size up to GitHub's 100 MB, unlike the JSON contents API's 1 MB), checked against its git id
 * while they pass.
 */
export async function openBlob(octokit: GithubOctokit, repo: Repo, item: TreeItem, displayPath: string): Promise<Readable> {
  const response = await gh(() =>
    octokit.request('GET /repos/{owner}/{repo}/git/blobs/{file_sha}', {
      owner: repo.owner,
      repo: repo.name,
      file_sha: item.sha,
      headers: { accept: 'application/vnd.github.raw' },
      request: { parseSuccessResponseBody: false },
    }),
  );
  const body = response.data as unknown as WebReadableStream | null;
  const source = body ? Readable.fromWeb(body) : Readable.from([]);
  const verifier = new GitBlobVerifier(item.sha, item.size ?? 0, { service: 'GitHub', path: displayPath });
  source.on('error', (error) => verifier.destroy(error));
  return source.pipe(verifier);
}

export async function readSmallBlob(octokit: GithubOctokit, repo: Repo, item: TreeItem): Promise<Buffer> {
  const stream = await openBlob(octokit, repo, item, item.path);
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
