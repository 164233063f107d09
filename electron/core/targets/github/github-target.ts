import { badRequest, notFound } from '../../errors.js';
import { normalizeTimestamp } from '../../time.js';
import { fullActions, singleEntry, type DescriptiveMetadata, type Entry, type ListScope, type ReadResult, type ResourceInfo, type ResourceNode, type Target, type TargetContext, type WriteOptions, type WriteOutcome } from '../../target.js';
import { removedOnFailure, type NewRecord } from '../../remote/new-record.js';
import { createOctokit, gh, NOT_FOUND_HINT, type GithubClientOptions, type GithubOctokit } from './client.js';
import { GIT_SHA1 } from '../forge/git-hash.js';
import { decodeForgeId } from '../forge/ids.js';
import { LFS_POINTER_MAX_BYTES, parseLfsPointer } from '../forge/lfs-pointer.js';
import { basename, folderEntry, repositoryNode, treeItemNode } from '../forge/nodes.js';
import { allRepos, findItem, listTree, openBlob, readSmallBlob, repoById, walkTree, type Repo, type TreeItem } from './repo-tree.js';
import { GITHUB_MAX_FILE_BYTES, GITHUB_WARN_FILE_BYTES, gitUrl, writeToGithub, type WriteLimits } from './github-write.js';
import { GIT_NAMING_RULES } from '../forge/entries.js';
import { cloneEntries } from '../forge/clone-entries.js';
import { GitHttp } from '../forge/git-http.js';
import { ShallowClone } from '../forge/shallow-clone.js';
import { createHash } from 'node:crypto';
import { CITATION_CFF, readCitationCff } from '../../metadata/citation-cff.js';
import { METADATA_FILE_MAX_BYTES } from '../../metadata/found-at-top.js';
import { repositoryMetadata } from '../../metadata/forge.js';

export interface GithubTargetOptions extends GithubClientOptions {
  /** per-file limits (GitHub's own by default) */
  limits?: WriteLimits;
  /** whole repositories up to this size (GitHub's `size`) are read with one shallow fetch */
  shallowReadMaxBytes?: number;
}

/**
 * isomorphic-git's fetch holds the packfile in memory while it stores it: above this size a
 * repository is read file by file through the REST API instead (streamed, one request each).
 */
const SHALLOW_READ_MAX_BYTES = 100 * 1024 * 1024;

const PREFIX = 'r';

/**
 * GitHub as a Ferry target: repositories the token can see are the top-level containers; the
 * folders and files of each repository's default branch sit below them. Files report GitHub's
 * only hash, the git blob id, honestly named `git-sha1`.
 */
export class GithubTarget implements Target {
  readonly namingRules = GIT_NAMING_RULES;
  readonly info = {
    name: 'github',
    readable_name: 'GitHub',
    supported_actions: fullActions(true),
    supported_hash_algorithms: [GIT_SHA1],
    credential: 'remote' as const,
    // metadata/forge.ts: a new repository takes a transfer's description, homepage and keywords (topics), and names the rest
    keepsMetadata: true,
  };

  /** shallow clones of whole repositories read, by token digest and repository id */
  private readonly clones = new Map<string, ShallowClone>();

  constructor(private readonly options: GithubTargetOptions) {}

  private get limits(): WriteLimits {
    return this.options.limits ?? { maxFileBytes: GITHUB_MAX_FILE_BYTES, warnFileBytes: GITHUB_WARN_FILE_BYTES };
  }

  private client(ctx: TargetContext): GithubOctokit {
    return createOctokit(ctx.token, this.options, ctx.signal);
  }

  async *list(ctx: TargetContext, scope?: ListScope): AsyncIterable<ResourceNode> {
    const octokit = this.client(ctx);
    if (scope?.container === undefined || scope.container === null) {
      for await (const repo of allRepos(octokit)) {
        yield repositoryNode(PREFIX, repo.id, repo.name);
        if (scope?.container === null) continue;
        for await (const item of walkTree(octokit, repo)) {
          if (item.type !== 'commit') yield treeItemNode(PREFIX, repo.id, item);
        }
      }
      return;
    }
    const { repoId, path } = decodeForgeId(PREFIX, scope.container, 'GitHub');
    const repo = await repoById(octokit, repoId);
    let treeSha = repo.defaultBranch;
    if (path) {
      const folder = await findItem(octokit, repo, path);
      if (!folder) throw notFound(NOT_FOUND_HINT);
      if (folder.type !== 'tree') return;
      treeSha = folder.sha;
    }
    for (const item of await listTree(octokit, repo, treeSha, path ? `${path}/` : '')) {
      if (item.type !== 'commit') yield treeItemNode(PREFIX, repo.id, item);
    }
  }

  async detail(ctx: TargetContext, id: string): Promise<ResourceInfo> {
    const octokit = this.client(ctx);
    const { repoId, path } = decodeForgeId(PREFIX, id, 'GitHub');
    const repo = await repoById(octokit, repoId);
    if (!path) {
      return {
        ...repositoryNode(PREFIX, repo.id, repo.name),
        date_created: normalizeTimestamp(repo.createdAt),
        date_modified: normalizeTimestamp(repo.pushedAt ?? repo.updatedAt),
        hashes: {},
        extra: {
          full_name: repo.fullName,
          private: repo.private,
          default_branch: repo.defaultBranch,
          html_url: repo.htmlUrl,
          description: repo.description,
          size_kb: repo.sizeKb,
          provider: 'github',
        },
      };
    }
    const item = await findItem(octokit, repo, path);
    if (!item || item.type === 'commit') throw notFound(NOT_FOUND_HINT);
    const extra: Record<string, unknown> = {
      repository: repo.fullName,
      ref: repo.defaultBranch,
      path,
      materialized_path: `/${path}${item.type === 'tree' ? '/' : ''}`,
      provider: 'github',
      git_sha: item.sha,
      mode: item.mode,
    };
    let lastChange: string | null = null;
    const commits = await gh(() => octokit.rest.repos.listCommits({ owner: repo.owner, repo: repo.name, sha: repo.defaultBranch, path, per_page: 1 }));
    lastChange = commits.data[0]?.commit.committer?.date ?? null;
    if (item.type === 'blob') {
      extra.size = item.size ?? 0;
      if (item.mode === '120000') extra.symlink = true;
      if ((item.size ?? 0) <= LFS_POINTER_MAX_BYTES) {
        const pointer = parseLfsPointer(await readSmallBlob(octokit, repo, item));
        if (pointer) {
          extra.lfs_pointer = true;
          extra.lfs_oid_sha256 = pointer.oid;
          extra.lfs_size = pointer.size;
          extra.lfs_note = 'This file is stored with Git LFS; Ferry downloads the small pointer file, not the large content it points to.';
        }
      }
    }
    return {
      ...treeItemNode(PREFIX, repo.id, item),
      date_created: null,
      date_modified: normalizeTimestamp(lastChange),
      hashes: item.type === 'blob' ? { [GIT_SHA1]: item.sha } : {},
      extra,
    };
  }

  /**
   * A repository's description, topics and licence, under its own CITATION.cff when the
   * default branch has one at the top (metadata/forge.ts); null for folders and files.
   */
  async describe(ctx: TargetContext, id: string): Promise<DescriptiveMetadata | null> {
    const octokit = this.client(ctx);
    const { repoId, path } = decodeForgeId(PREFIX, id, 'GitHub');
    if (path) return null;
    const repo = await repoById(octokit, repoId);
    const cff = (await listTree(octokit, repo, repo.defaultBranch, '')).find((item) => item.path === CITATION_CFF && item.type === 'blob');
    const citation = cff && (cff.size ?? 0) <= METADATA_FILE_MAX_BYTES ? readCitationCff((await readSmallBlob(octokit, repo, cff)).toString('utf8')) : null;
    return repositoryMetadata({ name: repo.name, description: repo.description, topics: repo.topics, license: repo.license }, citation);
  }

  async read(ctx: TargetContext, id: string): Promise<ReadResult> {
    const octokit = this.client(ctx);
    const { repoId, path } = decodeForgeId(PREFIX, id, 'GitHub');
    const repo = await repoById(octokit, repoId);
    if (!path) {
      const shallow = repo.sizeKb * 1024 <= (this.options.shallowReadMaxBytes ?? SHALLOW_READ_MAX_BYTES);
      const entries = shallow ? this.cloneEntries(ctx, repo) : this.treeEntries(octokit, repo, repo.defaultBranch, '', repo.name);
      return { title: repo.name, root: repositoryNode(PREFIX, repo.id, repo.name), entries };
    }
    const item = await findItem(octokit, repo, path);
    if (!item || item.type === 'commit') throw notFound(NOT_FOUND_HINT);
    const title = basename(path);
    const root = treeItemNode(PREFIX, repo.id, item);
    if (item.type === 'blob') {
      return { title, root, entries: singleEntry(fileEntry(octokit, repo, item, title)) };
    }
    return { title, root, entries: this.treeEntries(octokit, repo, item.sha, `${path}/`, title) };
  }

  /**
   * A whole repository through one shallow fetch (two git requests) instead of one REST request
   * per file, which spends the 5,000-an-hour budget on a repository of a few thousand files. The
   * object store stays until close(): entries may be opened after the listing has ended, and a
   * later read of the same repository fetches only what is new.
   */
  private async *cloneEntries(ctx: TargetContext, repo: Repo): AsyncGenerator<Entry> {
    const http = new GitHttp({ url: gitUrl(repo, this.options.baseUrl), username: 'x-access-token', password: ctx.token, service: 'GitHub', notFoundHint: NOT_FOUND_HINT }, ctx.signal, this.options.timeoutMs);
    const key = `${createHash('sha256').update(ctx.token).digest('hex')}:${repo.id}`;
    let clone = this.clones.get(key);
    if (!clone) {
      clone = new ShallowClone();
      this.clones.set(key, clone);
    }
    const head = await clone.fetchHead(http, repo.defaultBranch);
    yield* cloneEntries(clone, head ? await clone.flat(head.oid) : [], '', repo.name);
  }

  async close(): Promise<void> {
    const clones = [...this.clones.values()];
    this.clones.clear();
    await Promise.all(clones.map((c) => c.dispose()));
  }

  /** The folder entry itself, then everything below it, paths starting with `title`. */
  private async *treeEntries(octokit: GithubOctokit, repo: Repo, treeSha: string, repoPrefix: string, title: string): AsyncGenerator<Entry> {
    yield folderEntry(title);
    for await (const item of walkTree(octokit, repo, treeSha, repoPrefix)) {
      const relative = `${title}/${item.path.slice(repoPrefix.length)}`;
      if (item.type === 'tree') yield folderEntry(relative);
      else if (item.type === 'blob') yield fileEntry(octokit, repo, item, relative);
      // submodules (type "commit") point into other repositories: nothing to copy here
    }
  }

  /**
   * How a repository a failed upload made is removed: `DELETE /repos/{owner}/{repo}` (docs:
   * "Delete a repository" — admin rights, and a classic token needs the `delete_repo` scope,
   * else 403 "Must have admin rights to Repository."), on a client of its own: the job's
   * signal may have fired (a cancel).
   */
  private newRepositoryRecord(token: string, repo: Repo): NewRecord {
    return {
      label: `the new GitHub repository ${repo.fullName}`,
      howToRemove: `delete it on GitHub at ${repo.htmlUrl}/settings (Danger Zone → Delete this repository)`,
      remove: async () => {
        const octokit = createOctokit(token, this.options, AbortSignal.timeout(30_000));
        await gh(() => octokit.rest.repos.delete({ owner: repo.owner, repo: repo.name }));
      },
    };
  }

  async write(ctx: TargetContext, containerId: string | null, entries: AsyncIterable<Entry>, options: WriteOptions): Promise<WriteOutcome> {
    const octokit = this.client(ctx);
    const github = { destination: this, octokit, token: ctx.token, signal: ctx.signal, apiBaseUrl: this.options.baseUrl, ...(this.options.timeoutMs ? { timeoutMs: this.options.timeoutMs } : {}) };
    if (containerId === null) {
      // a new repository that a failed or cancelled upload made is deleted again; a paused or
      // stopped job keeps it, told to its journal, for the resumed run to push into (remote/new-record.ts)
      return removedOnFailure((made) => writeToGithub(github, null, entries, options, this.limits, (repo) => made(this.newRepositoryRecord(ctx.token, repo))), options.signal);
    }
    const { repoId, path } = decodeForgeId(PREFIX, containerId, 'GitHub');
    const repo = await repoById(octokit, repoId);
    if (path) {
      const folder = await findItem(octokit, repo, path);
      if (!folder) throw notFound(NOT_FOUND_HINT);
      if (folder.type !== 'tree') throw badRequest(`"${path}" is a file in ${repo.fullName}; upload into a repository or a folder.`);
    }
    return writeToGithub(github, { repo, prefix: path }, entries, options, this.limits);
  }
}

function fileEntry(octokit: GithubOctokit, repo: Repo, item: TreeItem, path: string): Entry {
  return {
    path,
    kind: 'file',
    size: item.size ?? null,
    mtime: null,
    hashes: { [GIT_SHA1]: item.sha },
    open: () => openBlob(octokit, repo, item, path),
  };
}
