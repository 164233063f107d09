import { createHash } from 'node:crypto';
import { badRequest, notFound } from '../../errors.js';
import { fullActions, singleEntry, type Entry, type ListScope, type ReadResult, type ResourceInfo, type ResourceNode, type Target, type TargetContext, type WriteOptions, type WriteOutcome } from '../../target.js';
import { GIT_NAMING_RULES } from '../forge/entries.js';
import { belowTop, plannedEntries } from '../../plan/write-plan.js';
import { GIT_SHA1 } from '../forge/git-hash.js';
import { GitHttp } from '../forge/git-http.js';
import { pushEntries } from '../forge/git-push-write.js';
import { cloneEntries, cloneFileEntry } from '../forge/clone-entries.js';
import { basename } from '../forge/nodes.js';
import { ShallowClone } from '../forge/shallow-clone.js';
import type { FlatItem } from '../forge/tree-builder.js';
import { parseGitToken, type GitCredentials } from './credentials.js';
import { gitId, parseGitId } from './ids.js';

export interface GitTargetOptions {
  /** per request without progress, ms (default 60 s) */
  timeoutMs?: number;
}

const SERVICE = 'The git server';

/**
 * Any git repository reachable over smart HTTP (Gitea, Forgejo, Bitbucket, self-managed
 * GitLab, `git http-backend`), one repository per token (see credentials.ts). The repository's
 * root entries are the top level. Reads are a shallow fetch of the branch head (two or three
 * requests for the whole repository, see forge/shallow-clone.ts); writes are one commit in
 * one push (forge/git-push-write.ts). Files report their git blob id as `git-sha1`.
 */
export class GitTarget implements Target {
  readonly namingRules = GIT_NAMING_RULES;
  readonly info = {
    name: 'git',
    readable_name: 'Git repository (HTTPS)',
    supported_actions: fullActions(true),
    supported_hash_algorithms: [GIT_SHA1],
    credential: 'remote' as const,
    plainIds: true,
  };

  /** one private object store per account, kept while Ferry runs so later reads fetch only what is new */
  private readonly clones = new Map<string, ShallowClone>();

  constructor(private readonly options: GitTargetOptions = {}) {}

  private account(ctx: TargetContext): { creds: GitCredentials; http: GitHttp; clone: ShallowClone } {
    const creds = parseGitToken(ctx.token);
    const http = new GitHttp({ url: creds.url, username: creds.username, password: creds.password, service: SERVICE }, ctx.signal, this.options.timeoutMs);
    // keyed by a digest, so no token sits in a map key
    const key = createHash('sha256').update(ctx.token).digest('hex');
    let clone = this.clones.get(key);
    if (!clone) {
      clone = new ShallowClone();
      this.clones.set(key, clone);
    }
    return { creds, http, clone };
  }

  /** The branch head's flat tree, fetched now. */
  private async snapshot(ctx: TargetContext): Promise<Snapshot> {
    const { creds, http, clone } = this.account(ctx);
    const head = await clone.fetchHead(http, creds.branch);
    const items = head ? await clone.flat(head.oid) : [];
    return { creds, http, clone, branch: head?.branch ?? creds.branch ?? 'main', items: new Map(items.map((i) => [i.path, i])) };
  }

  async *list(ctx: TargetContext, scope?: ListScope): AsyncIterable<ResourceNode> {
    const snap = await this.snapshot(ctx);
    if (scope?.container === undefined) {
      for (const item of snap.items.values()) if (item.type !== 'commit') yield node(item);
      return;
    }
    const parent = scope.container === null ? '' : parseGitId(scope.container);
    if (parent && snap.items.get(parent)?.type !== 'tree') {
      if (snap.items.has(parent)) return;
      throw notFound(`There is no folder "${parent}" in ${snap.creds.url}.`);
    }
    for (const item of snap.items.values()) if (item.type !== 'commit' && parentOf(item.path) === parent) yield node(item);
  }

  async detail(ctx: TargetContext, id: string): Promise<ResourceInfo> {
    const path = parseGitId(id);
    const snap = await this.snapshot(ctx);
    const item = snap.items.get(path);
    if (!item || item.type === 'commit') throw notFound(`There is no "${path}" in ${snap.creds.url}.`);
    const extra: Record<string, unknown> = { repository: snap.creds.url, branch: snap.branch, path, git_sha: item.oid, mode: item.mode, provider: 'git' };
    if (item.type === 'blob') extra.size = (await snap.clone.blob(item.oid)).length;
    return { ...node(item), date_created: null, date_modified: null, hashes: item.type === 'blob' ? { [GIT_SHA1]: item.oid } : {}, extra };
  }

  async read(ctx: TargetContext, id: string): Promise<ReadResult> {
    const path = parseGitId(id);
    const snap = await this.snapshot(ctx);
    const item = snap.items.get(path);
    if (!item || item.type === 'commit') throw notFound(`There is no "${path}" in ${snap.creds.url}.`);
    const title = basename(path);
    if (item.type === 'blob') return { title, root: node(item), entries: singleEntry(cloneFileEntry(snap.clone, item, title)) };
    return { title, root: node(item), entries: cloneEntries(snap.clone, snap.items.values(), path, title) };
  }

  async write(ctx: TargetContext, containerId: string | null, source: AsyncIterable<Entry>, options: WriteOptions): Promise<WriteOutcome> {
    const planned = await plannedEntries(this, containerId, source, options);
    const entries = planned.top === null ? planned.entries : belowTop(planned.top, planned.entries);
    const snap = await this.snapshot(ctx);
    const outcome: WriteOutcome = { created: [], updated: [], ignored: [], fileErrors: [] };
    let prefix: string;
    if (containerId === null) {
      // a repository cannot be created over git's protocol: a new top-level resource is a new root folder
      prefix = distinctName(planned.top!, snap.items);
      outcome.newResource = { id: gitId(prefix), title: prefix };
    } else {
      prefix = parseGitId(containerId);
      const folder = snap.items.get(prefix);
      if (!folder) throw notFound(`There is no folder "${prefix}" in ${snap.creds.url}.`);
      if (folder.type !== 'tree') throw badRequest(`"${prefix}" is a file in ${snap.creds.url}; upload into a folder.`);
    }
    return pushEntries(
      {
        http: snap.http,
        branch: snap.branch,
        where: snap.creds.url,
        // the head being pushed onto is normally the one just fetched; if someone pushed since, fetch theirs
        listTree: (commit) => snap.clone.flat(commit).catch(async () => [...(await this.snapshot(ctx)).items.values()]),
        maxFileBytes: null,
        warnFileBytes: null,
        author: { name: 'Ferry', email: 'ferry@invalid' },
        refused: (reason) => badRequest(`The git server refused to update branch "${snap.branch}" of ${snap.creds.url} (it said: ${reason}); nothing was committed. The branch may be protected, or the account may not push to it.`),
      },
      entries,
      (path) => `${prefix}/${path}`,
      options,
      outcome,
      // the new folder exists only with the commit: told to the job once it landed, so a job
      // stopped after the push resumes in it rather than making "Name-2"
      containerId === null ? { top: planned.top, createdByPush: outcome.newResource! } : { top: null },
    );
  }

  async close(): Promise<void> {
    const clones = [...this.clones.values()];
    this.clones.clear();
    await Promise.all(clones.map((c) => c.dispose()));
  }
}

interface Snapshot {
  creds: GitCredentials;
  http: GitHttp;
  clone: ShallowClone;
  branch: string;
  items: Map<string, FlatItem>;
}

const parentOf = (path: string) => (path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '');

function node(item: FlatItem): ResourceNode {
  const parent = parentOf(item.path);
  const folder = item.type === 'tree';
  return { kind: folder ? 'container' : 'item', kind_name: folder ? 'folder' : 'file', id: gitId(item.path), container: parent ? gitId(parent) : null, title: basename(item.path) };
}

/** `top`, or `top-2`, `top-3`, … when the root already has an entry of that name. */
function distinctName(top: string, items: Map<string, FlatItem>): string {
  for (let n = 1; n <= 1000; n++) {
    const name = n === 1 ? top : `${top}-${n}`;
    if (!items.has(name)) return name;
  }
  throw badRequest(`Every name from "${top}" to "${top}-1000" is taken at the root of the repository; rename the top folder and upload again.`);
}
