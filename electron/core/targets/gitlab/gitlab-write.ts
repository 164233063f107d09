import { Readable } from 'node:stream';
import { FerryError, badRequest, conflict, isFerryError, throwIfAborted } from '../../errors.js';
import type { Entry, WriteOptions, WriteOutcome } from '../../target.js';
import { GitBlobHasher } from '../forge/git-hash.js';
import { filesToWrite, reportEmptyFolders, startForgeWrite } from '../forge/write-plan.js';
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
  dest: { repo: Project; prefix: string } | null,
  source: AsyncIterable<Entry>,
  options: WriteOptions,
): Promise<WriteOutcome> {
  const { entries, outcome, repo: project, toRepoPath } = await startForgeWrite(source, options, dest, async (title) => {
    const created = await createProject(api, title, options.jobLabel);
    return { repo: created, newResource: { id: `p${created.id}`, title: created.name } };
  });

  const existing = new Map<string, TreeItem>();
  for await (const item of walkTree(api, project)) existing.set(item.path, item);
  const context = { existing, toRepoPath, where: project.path_with_namespace, clashNoun: 'folder' };

  const actions: Action[] = [];
  for (const { entry, repoPath, current } of filesToWrite(entries, context, options, outcome)) {
    if (current && (await gitBlobShaOf(entry)) === current.id) {
      outcome.ignored.push(entry.path);
      continue;
    }
    actions.push({ action: current ? 'update' : 'create', path: repoPath, display: entry.path, entry, executable: current?.mode === '100755' });
  }
  reportEmptyFolders(entries, context, 'GitLab', outcome);
  if (actions.length === 0) return outcome;
  throwIfAborted(options.signal);

  const sent = new Map<string, string>();
  const branch = branchOf(project);
  // a factory: a commit refused with 429 is sent again, each file opened afresh
  const body = () => Readable.from(commitBody(branch, `Ferry: ${options.jobLabel}`, actions, sent));
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
