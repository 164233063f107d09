import { FerryError, badRequest } from '../../errors.js';
import type { Entry, WriteOptions, WriteOutcome } from '../../target.js';
import { GitHttp } from '../forge/git-http.js';
import { pushEntries } from '../forge/git-push-write.js';
import { startForgeWrite } from '../forge/write-plan.js';
import type { PlanDestination } from '../../plan/write-plan.js';
import type { GitlabApi } from './gitlab-api.js';
import { branchOf, walkTree, type Project } from './project-tree.js';
import { gitlabProjectFields, type GitlabProjectFields } from '../../metadata/forge.js';

/** GitLab.com refuses a push larger than 5 GB ("Maximum push size", gitlab-com/gl-infra/production#1810). */
export const GITLAB_MAX_PUSH_BYTES = 5000 * 1024 * 1024;

export interface GitlabWriteContext {
  /** the target written to: its naming rules judge a write no job planned */
  destination: PlanDestination;
  api: GitlabApi;
  token: string;
  signal: AbortSignal;
  /** the instance base, e.g. https://gitlab.com */
  baseUrl: string;
  timeoutMs?: number;
}

/**
 * Writes entries into a project (or a new private one) as ONE commit in ONE `git push`
 * (forge/git-push-write.ts). Sending the files inside one JSON `POST /repository/commits`
 * instead put every byte, base64-encoded, into a single REST request, which GitLab.com ends
 * after 60 s (Rack::Timeout) and which, being a POST, cannot be retried: a folder of a few
 * hundred MB could not be uploaded. Git over HTTP goes through GitLab Workhorse to Gitaly,
 * outside that timeout. The REST API keeps what git cannot do: create the project, name the
 * author, read the head's tree. Works on empty projects too: the push creates the branch.
 */
export async function writeToGitlab(
  gitlab: GitlabWriteContext,
  dest: { repo: Project; prefix: string } | null,
  source: AsyncIterable<Entry>,
  options: WriteOptions,
  /** told of a project this write made, as soon as it exists (so a failure can remove it) */
  onCreated: (project: Project) => void = () => {},
): Promise<WriteOutcome> {
  const { api } = gitlab;
  const notes: string[] = [];
  const { entries, outcome, repo: project, top, toRepoPath } = await startForgeWrite(gitlab.destination, source, options, dest, async (title) => {
    // the source's description and keywords, where a transfer carries them; the rest is said (metadata/forge.ts)
    const described = gitlabProjectFields(options.metadata);
    const created = await createProject(api, title, options.jobLabel, described.fields);
    notes.push(...described.notes);
    onCreated(created);
    return { repo: created, newResource: { id: `p${created.id}`, title: created.name } };
  });
  if (notes.length > 0) outcome.notes = [...(outcome.notes ?? []), ...notes];
  const me = await api.json<{ id: number; username: string; name?: string }>('user');
  const http = new GitHttp(
    { url: gitUrl(project, gitlab.baseUrl), username: 'oauth2', password: gitlab.token, service: 'GitLab', notFoundHint: `GitLab has no project ${project.path_with_namespace}, or the token may not push to it (it needs the \`write_repository\` or \`api\` scope and the Developer role).` },
    gitlab.signal,
    gitlab.timeoutMs,
  );
  return pushEntries(
    {
      http,
      branch: branchOf(project),
      where: project.path_with_namespace,
      listTree: async (commit) => {
        const items = [];
        for await (const item of walkTree(api, { ...project, default_branch: commit, empty_repo: false })) items.push({ path: item.path, type: item.type, mode: item.mode, oid: item.id });
        return items;
      },
      maxFileBytes: null,
      maxPushBytes: GITLAB_MAX_PUSH_BYTES,
      warnFileBytes: null,
      // GitLab's private commit email: <id>-<username>@users.noreply.<instance host>
      author: { name: me.name || me.username, email: `${me.id}-${me.username}@users.noreply.${new URL(gitlab.baseUrl).hostname}` },
      justCreated: dest === null,
      refused: (reason) =>
        new FerryError(403, 'forbidden', `GitLab refused to update branch "${branchOf(project)}" of ${project.path_with_namespace} (it said: ${reason}); nothing was committed. The branch may be protected, or the token's role may not push to it.`),
    },
    entries,
    toRepoPath,
    options,
    outcome,
    { top },
  );
}

/** The project's git URL, only on the instance's own origin: the token goes nowhere else. */
export function gitUrl(project: Project, baseUrl: string): string {
  const instance = new URL(baseUrl);
  const url = new URL(project.http_url_to_repo ?? `${project.web_url ?? ''}.git`, instance);
  if (url.origin !== instance.origin) {
    throw new FerryError(502, 'upstream_error', `GitLab named ${url.host} as the git host of ${project.path_with_namespace}; Ferry sends the token only to ${instance.host}, so nothing was uploaded.`);
  }
  return url.href.replace(/\/+$/, '');
}

/** GitLab project names: letters, digits, emoji, '_', '.', '+', '-', spaces; start with a letter/digit/'_'. */
export function sanitizeProjectName(title: string): { name: string; path: string } {
  const name = title.replace(/[^\p{L}\p{N}\p{Extended_Pictographic}_.+\- ]+/gu, '-').replace(/^[^\p{L}\p{N}_]+/u, '').trim().slice(0, 255) || 'ferry-upload';
  const path = name.replace(/[^A-Za-z0-9_.-]+/g, '-').replace(/-{2,}/g, '-').replace(/^[-.]+|[-.]+$/g, '').replace(/\.(git|atom)$/i, '').toLowerCase().slice(0, 255) || 'ferry-upload';
  return { name, path };
}

async function createProject(api: GitlabApi, title: string, jobLabel: string, described: GitlabProjectFields): Promise<Project> {
  const base = sanitizeProjectName(title);
  for (let n = 1; n <= 100; n++) {
    const name = n === 1 ? base.name : `${base.name}-${n}`;
    const path = n === 1 ? base.path : `${base.path}-${n}`;
    const response = await api.request('projects', {
      method: 'POST',
      json: { name, path, visibility: 'private', initialize_with_readme: false, description: described.description ?? `Created by Ferry from "${title}" (${jobLabel})`, ...(described.topics ? { topics: described.topics } : {}) },
      allow: [400],
    });
    if (response.status !== 400) return (await response.json()) as Project;
    const body = (await response.json().catch(() => ({}))) as { message?: unknown };
    if (JSON.stringify(body.message ?? '').includes('has already been taken')) continue;
    throw badRequest(`GitLab refused to create the project "${name}" (GitLab said: ${JSON.stringify(body.message ?? body)}).`);
  }
  throw badRequest(`Every name from "${base.name}" to "${base.name}-100" is taken on this GitLab account; rename the top folder and upload again.`);
}
