import { badRequest, notFound } from '../../errors.js';
import { normalizeTimestamp } from '../../time.js';
import { fullActions, singleEntry, type DescriptiveMetadata, type Entry, type ListScope, type ReadResult, type ResourceInfo, type ResourceNode, type Target, type TargetContext, type WriteOptions, type WriteOutcome } from '../../target.js';
import { decodeForgeId } from '../forge/ids.js';
import { basename, folderEntry, repositoryNode, treeItemNode } from '../forge/nodes.js';
import { GitlabApi, NOT_FOUND_HINT, type GitlabApiOptions } from './gitlab-api.js';
import { allProjects, branchOf, headFile, isFolder, openBlob, projectById, walkTree, type Project } from './project-tree.js';
import { gitUrl, writeToGitlab } from './gitlab-write.js';
import { createHash } from 'node:crypto';
import { GIT_NAMING_RULES } from '../forge/entries.js';
import { cloneEntries } from '../forge/clone-entries.js';
import { GIT_SHA1 } from '../forge/git-hash.js';
import { GitHttp } from '../forge/git-http.js';
import { ShallowClone } from '../forge/shallow-clone.js';
import { removedOnFailure, type NewRecord } from '../../remote/new-record.js';
import { detachedSignal } from '../../remote/retry-notice.js';
import { CITATION_CFF, readCitationCff } from '../../metadata/citation-cff.js';
import { METADATA_FILE_MAX_BYTES } from '../../metadata/found-at-top.js';
import { repositoryMetadata } from '../../metadata/forge.js';

const PREFIX = 'p';

/**
 * isomorphic-git's fetch holds the packfile in memory while it stores it: above this size a
 * project is read file by file through the REST API instead (streamed, two requests each).
 */
const SHALLOW_READ_MAX_BYTES = 100 * 1024 * 1024;

/**
 * GitLab (gitlab.com or self-managed) as a Ferry target: projects the user is a member of are
 * the top-level containers; folders and files of each default branch sit below them. Files
 * report `sha256` (GitLab's content_sha256, read cheaply with HEAD on the files API).
 */
export class GitlabTarget implements Target {
  readonly namingRules = GIT_NAMING_RULES;
  readonly info = {
    name: 'gitlab',
    readable_name: 'GitLab',
    supported_actions: fullActions(true),
    supported_hash_algorithms: ['sha256'],
    credential: 'remote' as const,
    // metadata/forge.ts: a new project takes a transfer's description and keywords (topics), and names the rest
    keepsMetadata: true,
  };

  /** shallow clones of whole projects read, by token digest and project id */
  private readonly clones = new Map<string, ShallowClone>();

  constructor(private readonly options: GitlabApiOptions) {}

  private api(ctx: TargetContext): GitlabApi {
    return new GitlabApi(this.options, ctx.token, ctx.signal);
  }

  async *list(ctx: TargetContext, scope?: ListScope): AsyncIterable<ResourceNode> {
    const api = this.api(ctx);
    if (scope?.container === undefined || scope.container === null) {
      for await (const project of allProjects(api)) {
        yield repositoryNode(PREFIX, project.id, project.name);
        if (scope?.container === null) continue;
        for await (const item of walkTree(api, project)) if (item.type !== 'commit') yield treeItemNode(PREFIX, project.id, item);
      }
      return;
    }
    const { repoId, path } = decodeForgeId(PREFIX, scope.container, 'GitLab');
    const project = await projectById(api, repoId);
    if (path && !(await isFolder(api, project, path))) {
      if (await headFile(api, project, path)) return;
      throw notFound(NOT_FOUND_HINT);
    }
    for await (const item of walkTree(api, project, path, false)) if (item.type !== 'commit') yield treeItemNode(PREFIX, project.id, item);
  }

  async detail(ctx: TargetContext, id: string): Promise<ResourceInfo> {
    const api = this.api(ctx);
    const { repoId, path } = decodeForgeId(PREFIX, id, 'GitLab');
    const project = await projectById(api, repoId);
    if (!path) {
      return {
        ...repositoryNode(PREFIX, project.id, project.name),
        date_created: normalizeTimestamp(project.created_at),
        date_modified: normalizeTimestamp(project.last_activity_at),
        hashes: {},
        extra: {
          path_with_namespace: project.path_with_namespace,
          visibility: project.visibility,
          default_branch: project.default_branch ?? null,
          empty_repo: project.empty_repo ?? false,
          web_url: project.web_url,
          description: project.description ?? null,
          provider: 'gitlab',
        },
      };
    }
    const file = await headFile(api, project, path);
    const folder = file ? false : await isFolder(api, project, path);
    if (!file && !folder) throw notFound(NOT_FOUND_HINT);
    const commits = await api.json<{ committed_date?: string }[]>(`projects/${project.id}/repository/commits`, {
      searchParams: { ref_name: branchOf(project), path, per_page: 1 },
    });
    const node = treeItemNode(PREFIX, project.id, { path, type: file ? 'blob' : 'tree' });
    return {
      ...node,
      date_created: null,
      date_modified: normalizeTimestamp(commits[0]?.committed_date ?? null),
      hashes: file ? { sha256: file.sha256 } : {},
      extra: {
        project: project.path_with_namespace,
        ref: branchOf(project),
        path,
        materialized_path: `/${path}${file ? '' : '/'}`,
        provider: 'gitlab',
        ...(file ? { size: file.size, blob_id: file.blobId, last_commit_id: file.lastCommitId, execute_filemode: file.executable } : {}),
      },
    };
  }

  /**
   * A project's description, topics and licence (`license=true`: GitLab's licence key,
   * detected from a LICENSE file), under its own CITATION.cff when the default branch has one
   * at the top (metadata/forge.ts, as for GitHub); null for folders and files.
   */
  async describe(ctx: TargetContext, id: string): Promise<DescriptiveMetadata | null> {
    const api = this.api(ctx);
    const { repoId, path } = decodeForgeId(PREFIX, id, 'GitLab');
    if (path) return null;
    const project = await api.json<Project & { topics?: string[]; license?: { key?: string } | null }>(`projects/${repoId}`, { searchParams: { license: true } });
    const cff = await headFile(api, project, CITATION_CFF);
    let citation: DescriptiveMetadata | null = null;
    if (cff && cff.size <= METADATA_FILE_MAX_BYTES) {
      const chunks: Buffer[] = [];
      for await (const chunk of await openBlob(api, project, cff.blobId, cff.size, CITATION_CFF)) chunks.push(chunk as Buffer);
      citation = readCitationCff(Buffer.concat(chunks).toString('utf8'));
    }
    // licensee's pseudo-licences (lib/licensee/license.rb): "other", a licence it could not
    // name (GitHub's NOASSERTION), and "no-license"; neither names a licence
    const key = project.license?.key;
    const license = key && key !== 'other' && key !== 'no-license' ? key : null;
    return repositoryMetadata({ name: project.name, description: project.description ?? null, topics: project.topics ?? [], license }, citation);
  }

  async read(ctx: TargetContext, id: string): Promise<ReadResult> {
    const api = this.api(ctx);
    const { repoId, path } = decodeForgeId(PREFIX, id, 'GitLab');
    const project = await projectById(api, repoId);
    if (!path) {
      const size = project.statistics?.repository_size;
      const shallow = size !== undefined && size <= (this.options.shallowReadMaxBytes ?? SHALLOW_READ_MAX_BYTES);
      const entries = shallow ? this.cloneEntries(ctx, project) : this.treeEntries(api, project, '', project.name);
      return { title: project.name, root: repositoryNode(PREFIX, project.id, project.name), entries };
    }
    const file = await headFile(api, project, path);
    const title = basename(path);
    if (file) {
      const root = treeItemNode(PREFIX, project.id, { path, type: 'blob' });
      const entry = fileEntry(api, project, file.blobId, file.size, file.sha256, title);
      return { title, root, entries: singleEntry(entry) };
    }
    if (!(await isFolder(api, project, path))) throw notFound(NOT_FOUND_HINT);
    const root = treeItemNode(PREFIX, project.id, { path, type: 'tree' });
    return { title, root, entries: this.treeEntries(api, project, path, title) };
  }

  /**
   * A whole project through one shallow fetch (two git requests) instead of a HEAD and a raw
   * request per file (gitlab.com allows 500 files-API and 300 raw requests a minute). Each file's
   * size and SHA-256 are computed from the fetched bytes, so entries carry what the REST path
   * gives. The object store stays until close(): entries may be opened after the listing ends.
   */
  private async *cloneEntries(ctx: TargetContext, project: Project): AsyncGenerator<Entry> {
    const http = new GitHttp({ url: gitUrl(project, this.options.baseUrl), username: 'oauth2', password: ctx.token, service: 'GitLab', notFoundHint: NOT_FOUND_HINT }, ctx.signal, this.options.timeoutMs);
    const key = `${createHash('sha256').update(ctx.token).digest('hex')}:${project.id}`;
    let clone = this.clones.get(key);
    if (!clone) {
      clone = new ShallowClone();
      this.clones.set(key, clone);
    }
    const head = await clone.fetchHead(http, branchOf(project));
    const store = clone;
    for await (const entry of cloneEntries(store, head ? await store.flat(head.oid) : [], '', project.name)) {
      if (entry.kind !== 'file') {
        yield entry;
        continue;
      }
      const oid = entry.hashes[GIT_SHA1]!;
      const bytes = await store.blob(oid);
      yield { ...entry, size: bytes.length, hashes: { sha256: createHash('sha256').update(bytes).digest('hex') } };
    }
  }

  async close(): Promise<void> {
    const clones = [...this.clones.values()];
    this.clones.clear();
    await Promise.all(clones.map((c) => c.dispose()));
  }

  private async *treeEntries(api: GitlabApi, project: Project, path: string, title: string): AsyncGenerator<Entry> {
    yield folderEntry(title);
    const cut = path ? path.length + 1 : 0;
    for await (const item of walkTree(api, project, path)) {
      const relative = `${title}/${item.path.slice(cut)}`;
      if (item.type === 'tree') yield folderEntry(relative);
      else if (item.type === 'blob') {
        // the tree carries no sizes; HEAD gives size + SHA-256 without downloading
        const head = await headFile(api, project, item.path);
        if (head) yield fileEntry(api, project, item.id, head.size, head.sha256, relative);
      }
    }
  }

  /**
   * How a project a failed upload made is removed: `DELETE /projects/:id` (doc/api/projects.md
   * "Delete a project": the Owner role, which its creator has; 202 Accepted, the deletion runs
   * in the background), on a client of its own: the job's signal may have fired (a cancel).
   * `signal` is the job's: the deletion gets a deadline of its own, yet its retries are the job's.
   */
  private newProjectRecord(token: string, signal: AbortSignal, project: Project): NewRecord {
    return {
      label: `the new GitLab project ${project.path_with_namespace}`,
      howToRemove: `delete it in GitLab at ${project.web_url ?? `${this.options.baseUrl}/${project.path_with_namespace}`}/edit (Advanced → Delete project)`,
      remove: async () => {
        const api = new GitlabApi(this.options, token, detachedSignal(signal, 30_000));
        await api.request(`projects/${project.id}`, { method: 'DELETE' });
      },
    };
  }

  async write(ctx: TargetContext, containerId: string | null, entries: AsyncIterable<Entry>, options: WriteOptions): Promise<WriteOutcome> {
    const api = this.api(ctx);
    const gitlab = { destination: this, api, token: ctx.token, signal: ctx.signal, baseUrl: this.options.baseUrl, ...(this.options.timeoutMs ? { timeoutMs: this.options.timeoutMs } : {}) };
    if (containerId === null) {
      // a new project that a failed or cancelled upload made is deleted again; a paused or
      // stopped job keeps it, told to its journal, for the resumed run to push into (remote/new-record.ts)
      return removedOnFailure((made) => writeToGitlab(gitlab, null, entries, options, (project) => made(this.newProjectRecord(ctx.token, ctx.signal, project))), options.signal);
    }
    const { repoId, path } = decodeForgeId(PREFIX, containerId, 'GitLab');
    const project = await projectById(api, repoId);
    if (path && !(await isFolder(api, project, path))) {
      if (await headFile(api, project, path)) throw badRequest(`"${path}" is a file in ${project.path_with_namespace}; upload into a project or a folder.`);
      throw notFound(NOT_FOUND_HINT);
    }
    return writeToGitlab(gitlab, { repo: project, prefix: path }, entries, options);
  }
}

function fileEntry(api: GitlabApi, project: Project, blobId: string, size: number, sha256: string, path: string): Entry {
  return {
    path,
    kind: 'file',
    size,
    mtime: null,
    hashes: sha256 ? { sha256 } : {},
    open: () => openBlob(api, project, blobId, size, path),
  };
}
