import { FerryError, badRequest, conflict, throwIfAborted } from '../../errors.js';
import type { Entry, WriteOptions, WriteOutcome } from '../../target.js';
import { gh, statusOf, type GithubOctokit } from './client.js';
import { readCapped } from '../forge/entries.js';
import { gitBlobSha } from '../forge/git-hash.js';
import { filesToWrite, reportEmptyFolders, startForgeWrite } from '../forge/write-plan.js';
import { toRepo, walkTree, type Repo, type TreeItem } from './repo-tree.js';

/** GitHub refuses files over 100 MB and warns above 50 MB (docs: "About large files on GitHub"). */
export const GITHUB_MAX_FILE_BYTES = 100 * 1024 * 1024;
export const GITHUB_WARN_FILE_BYTES = 50 * 1024 * 1024;

export interface WriteLimits {
  maxFileBytes: number;
  warnFileBytes: number;
}

interface Change {
  path: string;
  mode: string;
  sha: string;
}

/**
 * Writes entries into a repository (or a new private one) as ONE commit, through the git data
 * API: a blob per changed file, one tree on top of the head's, one commit, one fast-forward of
 * the branch. Nothing becomes visible until the last step, so a failure half-way leaves the
 * branch as it was.
 *
 * Empty repositories (no commit yet) answer 409 to every git data call. Ferry then creates the
 * first file with the contents API (which works on an empty repository), continues with the git
 * data API, and finally points the branch at a parentless commit holding every file — so the
 * branch history is still exactly one commit naming Ferry and the job (the contents-API commit is
 * left unreferenced). New top-level repositories are created with `auto_init: false` and take
 * this same path, so no README appears that the upload did not contain.
 */
export async function writeToGithub(
  octokit: GithubOctokit,
  dest: { repo: Repo; prefix: string } | null,
  source: AsyncIterable<Entry>,
  options: WriteOptions,
  limits: WriteLimits = { maxFileBytes: GITHUB_MAX_FILE_BYTES, warnFileBytes: GITHUB_WARN_FILE_BYTES },
): Promise<WriteOutcome> {
  const { entries, outcome, repo, toRepoPath } = await startForgeWrite(source, options, dest, async (title) => {
    const created = await createRepository(octokit, title, options.jobLabel);
    return { repo: created, newResource: { id: `r${created.id}`, title: created.name } };
  });
  const message = `Ferry: ${options.jobLabel}`;

  // the head commit and its tree, fixed now: the new commit's parent
  const head = await headCommit(octokit, repo);
  const existing = new Map<string, TreeItem>();
  if (head) for await (const item of walkTree(octokit, repo, head.tree)) existing.set(item.path, item);
  const context = { existing, toRepoPath, where: repo.fullName, clashNoun: 'folder or submodule' };

  const changes: Change[] = [];
  let emptyRepoFirstCommit: string | null = null;
  for (const { entry, repoPath, current } of filesToWrite(entries, context, options, outcome)) {
    if (entry.size !== null && entry.size > limits.maxFileBytes) {
      outcome.fileErrors.push({ path: entry.path, error: tooBigMessage(entry.size, limits) });
      continue;
    }
    const bytes = await readCapped(entry, limits.maxFileBytes);
    if (bytes === null) {
      outcome.fileErrors.push({ path: entry.path, error: tooBigMessage(null, limits) });
      continue;
    }
    const sha = gitBlobSha(bytes);
    if (current && current.sha === sha) {
      outcome.ignored.push(entry.path);
      continue;
    }
    if (bytes.length > limits.warnFileBytes) {
      outcome.fileErrors.push({
        path: entry.path,
        error: `Warning only: "${entry.path}" (${mb(bytes.length)} MB) was uploaded, but GitHub recommends keeping files under ${mb(limits.warnFileBytes)} MB; consider Git LFS or another target for large data.`,
      });
    }
    const mode = current?.mode === '100755' ? '100755' : '100644';
    if (!head && emptyRepoFirstCommit === null) {
      emptyRepoFirstCommit = await createFirstFile(octokit, repo, repoPath, bytes, message, sha);
    } else {
      await createBlob(octokit, repo, bytes, sha, entry.path);
    }
    changes.push({ path: repoPath, mode, sha });
    (current ? outcome.updated : outcome.created).push(entry.path);
  }
  reportEmptyFolders(entries, context, 'GitHub', outcome);

  if (changes.length === 0) return outcome;
  throwIfAborted(options.signal);

  if (!head) {
    // the contents API made the first commit; with more files, replace it by one root commit
    if (changes.length > 1) await commitRootOverFirst(octokit, repo, changes, message, emptyRepoFirstCommit as string);
    return outcome;
  }
  const tree = await gh(() => octokit.rest.git.createTree({ owner: repo.owner, repo: repo.name, base_tree: head.tree, tree: changes.map((c) => ({ ...c, mode: c.mode as '100644', type: 'blob' as const })) }));
  const commit = await gh(() => octokit.rest.git.createCommit({ owner: repo.owner, repo: repo.name, message, tree: tree.data.sha, parents: [head.sha] }));
  try {
    await octokit.rest.git.updateRef({ owner: repo.owner, repo: repo.name, ref: `heads/${repo.defaultBranch}`, sha: commit.data.sha, force: false });
  } catch (error) {
    if (statusOf(error) === 422) {
      throw conflict(`${repo.fullName} changed while Ferry was uploading (someone else pushed); nothing was committed. Start the upload again.`);
    }
    throw await gh(() => Promise.reject(error)).catch((e: unknown) => e);
  }
  return outcome;
}

async function headCommit(octokit: GithubOctokit, repo: Repo): Promise<{ sha: string; tree: string } | null> {
  let sha: string;
  try {
    const ref = await octokit.rest.git.getRef({ owner: repo.owner, repo: repo.name, ref: `heads/${repo.defaultBranch}` });
    sha = ref.data.object.sha;
  } catch (error) {
    // 409 "Git Repository is empty."; a 404 here means the default branch has no commit yet
    if (statusOf(error) === 409 || statusOf(error) === 404) return null;
    throw await gh(() => Promise.reject(error)).catch((e: unknown) => e);
  }
  const commit = await gh(() => octokit.rest.git.getCommit({ owner: repo.owner, repo: repo.name, commit_sha: sha }));
  return { sha, tree: commit.data.tree.sha };
}

async function createBlob(octokit: GithubOctokit, repo: Repo, bytes: Buffer, sha: string, path: string): Promise<void> {
  const blob = await gh(() => octokit.rest.git.createBlob({ owner: repo.owner, repo: repo.name, content: bytes.toString('base64'), encoding: 'base64' }));
  if (blob.data.sha !== sha) {
    throw new FerryError(502, 'upstream_error', `GitHub stored "${path}" with git blob id ${blob.data.sha}, but the bytes sent have id ${sha}; nothing was committed.`);
  }
}

async function createFirstFile(octokit: GithubOctokit, repo: Repo, repoPath: string, bytes: Buffer, message: string, sha: string): Promise<string> {
  const { data } = await gh(() =>
    octokit.rest.repos.createOrUpdateFileContents({ owner: repo.owner, repo: repo.name, path: repoPath, message, content: bytes.toString('base64') }),
  );
  if (data.content?.sha !== sha) {
    throw new FerryError(502, 'upstream_error', `GitHub stored "${repoPath}" with git blob id ${data.content?.sha}, but the bytes sent have id ${sha}.`);
  }
  return data.commit.sha as string;
}

async function commitRootOverFirst(octokit: GithubOctokit, repo: Repo, changes: Change[], message: string, firstCommit: string): Promise<void> {
  const tree = await gh(() => octokit.rest.git.createTree({ owner: repo.owner, repo: repo.name, tree: changes.map((c) => ({ ...c, mode: c.mode as '100644', type: 'blob' as const })) }));
  const commit = await gh(() => octokit.rest.git.createCommit({ owner: repo.owner, repo: repo.name, message, tree: tree.data.sha, parents: [] }));
  // force is needed (the root commit does not descend from the first one); check first that
  // nobody else pushed in between, so only Ferry's own first commit is replaced
  const ref = await gh(() => octokit.rest.git.getRef({ owner: repo.owner, repo: repo.name, ref: `heads/${repo.defaultBranch}` }));
  if (ref.data.object.sha !== firstCommit) {
    throw conflict(`${repo.fullName} changed while Ferry was uploading (someone else pushed); only the first file was committed. Start the upload again with duplicate action "update".`);
  }
  await gh(() => octokit.rest.git.updateRef({ owner: repo.owner, repo: repo.name, ref: `heads/${repo.defaultBranch}`, sha: commit.data.sha, force: true }));
}

/** GitHub repository names allow [A-Za-z0-9._-]; the rest becomes "-". */
export function sanitizeRepoName(title: string): string {
  const cleaned = title.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[-.]+|-+$/g, '').slice(0, 100);
  return cleaned && cleaned !== '.' && cleaned !== '..' ? cleaned : 'ferry-upload';
}

/**
 * A new private repository named after `title` (or `title-2`, ... when taken). The create is
 * a POST and never repeated blindly: a repeat after a lost answer would meet the first one's
 * repository and go on to `-2`, leaving an empty stray behind. Instead, when the answer is
 * lost (a broken connection, a 5xx), a repository of that name carrying this job's own
 * description and nothing else is taken to be the one just made.
 */
async function createRepository(octokit: GithubOctokit, title: string, jobLabel: string): Promise<Repo> {
  const base = sanitizeRepoName(title);
  const description = `Created by Ferry from "${title}" (${jobLabel})`.slice(0, 350);
  for (let n = 1; n <= 100; n++) {
    const name = n === 1 ? base : `${base.slice(0, 100 - String(n).length - 1)}-${n}`;
    try {
      const { data } = await octokit.rest.repos.createForAuthenticatedUser({ name, private: true, auto_init: false, description, request: { retries: 0 } });
      return toRepo(data);
    } catch (error) {
      const errors = (error as { response?: { data?: { errors?: { field?: string; message?: string }[] } } }).response?.data?.errors ?? [];
      if (statusOf(error) === 422 && errors.some((e) => /already exists/i.test(e.message ?? ''))) continue;
      if ((statusOf(error) ?? 500) >= 500) {
        const landed = await madeByThisJob(octokit, name, description);
        if (landed) return landed;
      }
      throw await gh(() => Promise.reject(error)).catch((e: unknown) => e);
    }
  }
  throw badRequest(`Every name from "${base}" to "${base}-100" is taken on this GitHub account; rename the top folder and upload again.`);
}

/** The repository `name` of the token's user, if it is empty and carries `description`. */
async function madeByThisJob(octokit: GithubOctokit, name: string, description: string): Promise<Repo | null> {
  try {
    const { data: me } = await octokit.rest.users.getAuthenticated();
    const { data } = await octokit.rest.repos.get({ owner: me.login, repo: name });
    return data.description === description && data.size === 0 ? toRepo(data) : null;
  } catch {
    return null;
  }
}

const mb = (bytes: number) => Math.round(bytes / (1024 * 1024));

function tooBigMessage(size: number | null, limits: WriteLimits): string {
  return `${size === null ? 'This file' : `This file (${mb(size)} MB)`} is larger than GitHub's limit of ${mb(limits.maxFileBytes)} MB per file, so it was not uploaded; use Git LFS or another target for it.`;
}
