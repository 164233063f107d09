import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { FerryError, badRequest, conflict, isFerryError, throwIfAborted } from '../../errors.js';
import type { Entry, WriteOptions, WriteOutcome } from '../../target.js';
import { collectEntries, splitTopFolder, validateRelativePath } from '../github/entries.js';
import type { GitlabApi } from './gitlab-api.js';
import { branchOf, walkTree, type Project, type TreeItem } from './project-tree.js';

interface Action {
  action: 'create' | 'update';
  path: string;
  /** entry path, for the report */
  display: string;
  entry: Entry;
  executable: boolean;
}

/**
 * Writes entries into a project (or a new private one) as ONE commit:
 * `POST /projects/:id/repository/commits` with one create/update action per changed file. The
 * JSON body is streamed — each file is opened only while its base64 passes — so a large job is
 * never held in memory whole. `update` decides "identical" by git blob id (computed from the
 * incoming bytes, compared with the tree's ids), so identical files are never sent. After the
 * commit, the new tree's blob ids are compared with what was sent (fixity of the upload).
 * Works on empty projects too: the commit creates the branch.
 */
export async function writeToGitlab(
  api: GitlabApi,
  dest: { project: Project; prefix: string } | null,
  source: AsyncIterable<Entry>,
  options: WriteOptions,
): Promise<WriteOutcome> {
  let entries = await collectEntries(source, options.signal);
  const outcome: WriteOutcome = { created: [], updated: [], ignored: [], fileErrors: [] };
  let target = dest;
  if (target === null) {
    const { top, rest } = splitTopFolder(entries);
    const project = await createProject(api, top, options.jobLabel);
    outcome.newResource = { id: `p${project.id}`, title: project.name };
    target = { project, prefix: '' };
    entries = rest;
  }
  for (const entry of entries) validateRelativePath(entry.path);
  const { project, prefix } = target;
  const toRepoPath = (path: string) => (prefix ? `${prefix}/${path}` : path);

  const existing = new Map<string, TreeItem>();
  for await (const item of walkTree(api, project)) existing.set(item.path, item);

  const actions: Action[] = [];
  const filePaths = new Set<string>();
  for (const entry of entries) {
    throwIfAborted(options.signal);
    if (entry.kind !== 'file') continue;
    filePaths.add(entry.path);
    const path = toRepoPath(entry.path);
    const current = existing.get(path);
    if (current && current.type !== 'blob') {
      outcome.fileErrors.push({ path: entry.path, error: `A folder named "${entry.path}" already exists in ${project.path_with_namespace}; the file was not written.` });
      continue;
    }
    const blocked = ancestors(path).find((p) => existing.get(p)?.type === 'blob');
    if (blocked) {
      outcome.fileErrors.push({ path: entry.path, error: `"${blocked}" is a file in ${project.path_with_namespace}, so nothing can be written below it.` });
      continue;
    }
    if (current && options.duplicateAction === 'ignore') {
      outcome.ignored.push(entry.path);
      continue;
    }
    if (current && (await gitBlobShaOf(entry)) === current.id) {
      outcome.ignored.push(entry.path);
      continue;
    }
    actions.push({ action: current ? 'update' : 'create', path, display: entry.path, entry, executable: current?.mode === '100755' });
  }
  for (const entry of entries) {
    if (entry.kind === 'folder' && ![...filePaths].some((p) => p.startsWith(`${entry.path}/`)) && !existing.has(toRepoPath(entry.path))) {
      outcome.fileErrors.push({ path: entry.path, error: `Git repositories cannot hold empty folders, so "${entry.path}" was not created on GitLab.` });
    }
  }
  if (actions.length === 0) return outcome;
  throwIfAborted(options.signal);

  const sent = new Map<string, string>();
  const branch = branchOf(project);
  const body = Readable.from(commitBody(branch, `Ferry: ${options.jobLabel}`, actions, sent));
  let commitId: string;
  try {
    const commit = await api.json<{ id: string }>(`projects/${project.id}/repository/commits`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json' },
    });
    commitId = commit.id;
  } catch (error) {
    if (isFerryError(error) && error.status === 502 && /already exists|doesn't exist/i.test(error.message)) {
      throw conflict(`${project.path_with_namespace} changed while Ferry was uploading; nothing was committed. Start the upload again.`);
    }
    throw error;
  }

  // fixity of the upload: the committed blobs must be exactly the bytes that were sent
  const committed = new Map<string, string>();
  for await (const item of walkTree(api, { ...project, default_branch: commitId, empty_repo: false })) committed.set(item.path, item.id);
  for (const action of actions) {
    if (committed.get(action.path) !== sent.get(action.path)) {
      throw new FerryError(502, 'upstream_error', `GitLab stored "${action.display}" with git blob id ${committed.get(action.path) ?? 'none'}, but Ferry sent ${sent.get(action.path)}; check the commit.`);
    }
    (action.action === 'update' ? outcome.updated : outcome.created).push(action.display);
  }
  return outcome;
}

/** The commits-API JSON, produced piece by piece; `sent` collects each file's git blob id. */
async function* commitBody(branch: string, message: string, actions: Action[], sent: Map<string, string>): AsyncGenerator<Buffer> {
  yield Buffer.from(`{"branch":${JSON.stringify(branch)},"commit_message":${JSON.stringify(message)},"actions":[`);
  for (let i = 0; i < actions.length; i++) {
    const a = actions[i]!;
    yield Buffer.from(`${i ? ',' : ''}{"action":"${a.action}","file_path":${JSON.stringify(a.path)},"encoding":"base64",${a.executable ? '"execute_filemode":true,' : ''}"content":"`);
    const hasher = new GitBlobHasher(a.entry.size);
    let carry: Buffer = Buffer.alloc(0);
    for await (const chunk of await a.entry.open()) {
      const buf = chunk as Buffer;
      hasher.update(buf);
      const joined = carry.length ? Buffer.concat([carry, buf]) : buf;
      const whole = joined.length - (joined.length % 3);
      if (whole) yield Buffer.from(joined.subarray(0, whole).toString('base64'));
      carry = joined.subarray(whole);
    }
    if (carry.length) yield Buffer.from(carry.toString('base64'));
    sent.set(a.path, hasher.digest(a.display));
    yield Buffer.from('"}');
  }
  yield Buffer.from(']}');
}

async function gitBlobShaOf(entry: Entry): Promise<string> {
  const hasher = new GitBlobHasher(entry.size);
  for await (const chunk of await entry.open()) hasher.update(chunk as Buffer);
  return hasher.digest(entry.path);
}

/**
 * A git blob id over streamed bytes. Git hashes the size first ("blob <size>\0"), so with a
 * known size the bytes are hashed as they pass; with an unknown one they are kept until the end.
 */
class GitBlobHasher {
  private readonly hash;
  private readonly kept: Buffer[] = [];
  private size = 0;

  constructor(private readonly expectedSize: number | null) {
    this.hash = createHash('sha1');
    if (expectedSize !== null) this.hash.update(`blob ${expectedSize}\0`);
  }

  update(chunk: Buffer): void {
    this.size += chunk.length;
    if (this.expectedSize === null) this.kept.push(chunk);
    else this.hash.update(chunk);
  }

  digest(path: string): string {
    if (this.expectedSize === null) {
      this.hash.update(`blob ${this.size}\0`);
      for (const c of this.kept) this.hash.update(c);
    } else if (this.size !== this.expectedSize) {
      throw badRequest(`"${path}" was announced as ${this.expectedSize} bytes but has ${this.size}; nothing was committed.`);
    }
    return this.hash.digest('hex');
  }
}

/** GitLab project names: letters, digits, emoji, '_', '.', '+', '-', spaces; start with a letter/digit/'_'. */
export function sanitizeProjectName(title: string): { name: string; path: string } {
  const name = title.replace(/[^\p{L}\p{N}\p{Extended_Pictographic}_.+\- ]+/gu, '-').replace(/^[^\p{L}\p{N}_]+/u, '').trim().slice(0, 255) || 'ferry-upload';
  const path = name.replace(/[^A-Za-z0-9_.-]+/g, '-').replace(/-{2,}/g, '-').replace(/^[-.]+|[-.]+$/g, '').replace(/\.(git|atom)$/i, '').toLowerCase().slice(0, 255) || 'ferry-upload';
  return { name, path };
}

async function createProject(api: GitlabApi, title: string, jobLabel: string): Promise<Project> {
  const base = sanitizeProjectName(title);
  for (let n = 1; n <= 100; n++) {
    const name = n === 1 ? base.name : `${base.name}-${n}`;
    const path = n === 1 ? base.path : `${base.path}-${n}`;
    const response = await api.request('projects', {
      method: 'POST',
      json: { name, path, visibility: 'private', initialize_with_readme: false, description: `Created by Ferry from "${title}" (${jobLabel})` },
      allow: [400],
    });
    if (response.status !== 400) return (await response.json()) as Project;
    const body = (await response.json().catch(() => ({}))) as { message?: unknown };
    if (JSON.stringify(body.message ?? '').includes('has already been taken')) continue;
    throw badRequest(`GitLab refused to create the project "${name}" (GitLab said: ${JSON.stringify(body.message ?? body)}).`);
  }
  throw badRequest(`Every name from "${base.name}" to "${base.name}-100" is taken on this GitLab account; rename the top folder and upload again.`);
}

function ancestors(path: string): string[] {
  const parts = path.split('/');
  return parts.slice(0, -1).map((_, i) => parts.slice(0, i + 1).join('/'));
}
