import { FerryError, badRequest } from '../../errors.js';
import type { Entry, WriteOptions, WriteOutcome } from '../../target.js';
import { gh, githubError, statusOf, type GithubOctokit } from './client.js';
import { gitBlobSha } from '../forge/git-hash.js';
import { GitHttp } from '../forge/git-http.js';
import { pushEntries } from '../forge/git-push-write.js';
import { startForgeWrite } from '../forge/write-plan.js';
import type { PlanDestination } from '../../plan/write-plan.js';
import { toRepo, walkTree, type Repo } from './repo-tree.js';
import { GITHUB_DESCRIPTION_MAX, githubRepositoryFields, type GithubRepositoryFields } from '../../metadata/forge.js';

/** GitHub refuses files over 100 MB and warns above 50 MB (docs: "About large files on GitHub"). */
export const GITHUB_MAX_FILE_BYTES = 100 * 1024 * 1024;
/** Git LFS on GitHub takes files up to 2 GB on Free and Pro plans (docs: "About Git Large File Storage"). */
export const GITHUB_LFS_MAX_FILE_BYTES = 2 * 1024 * 1024 * 1024;
export const GITHUB_WARN_FILE_BYTES = 50 * 1024 * 1024;

export interface WriteLimits {
  maxFileBytes: number;
  warnFileBytes: number;
  /** largest file Git LFS takes (default GitHub's 2 GB) */
  lfsMaxFileBytes?: number;
}

export interface GithubWriteContext {
  /** the target written to: its naming rules judge a write no job planned */
  destination: PlanDestination;
  octokit: GithubOctokit;
  token: string;
  signal: AbortSignal;
  /** the REST API base, e.g. https://api.github.com or https://ghes.example/api/v3 */
  apiBaseUrl: string;
  timeoutMs?: number;
}

/**
 * Writes entries into a repository (or a new private one) as ONE commit in ONE `git push`
 * (forge/git-push-write.ts). The REST API is left only what git cannot do: create the
 * repository, name the token's user as the author, read the head's tree (one recursive
 * call). Uploading through the REST git-data API instead cost one content-creating request
 * per file, and GitHub allows 80 of those a minute and 500 an hour (secondary rate limits), so
 * an upload of a few hundred files stopped half-way; a push is one request whatever it holds.
 * An empty repository (a new one included) gets a root commit from the same push.
 */
export async function writeToGithub(
  github: GithubWriteContext,
  dest: { repo: Repo; prefix: string } | null,
  source: AsyncIterable<Entry>,
  options: WriteOptions,
  limits: WriteLimits = { maxFileBytes: GITHUB_MAX_FILE_BYTES, warnFileBytes: GITHUB_WARN_FILE_BYTES },
  /** told of a repository this write made, as soon as it exists (so a failure can remove it) */
  onCreated: (repo: Repo) => void = () => {},
): Promise<WriteOutcome> {
  const { octokit } = github;
  const notes: string[] = [];
  // the source's description, homepage and keywords, where a transfer carries them; the rest is said (metadata/forge.ts)
  const described = githubRepositoryFields(options.metadata);
  const { entries, outcome, repo, top, toRepoPath } = await startForgeWrite(github.destination, source, options, dest, async (title) => {
    const created = await createRepository(octokit, title, options.jobLabel, described.fields);
    onCreated(created);
    notes.push(...described.notes);
    return { repo: created, newResource: { id: `r${created.id}`, title: created.name } };
  });
  // the topics only once the job knows of the new repository (startForgeWrite): a pause while
  // they are set then keeps the repository for the resumed run rather than leaving a stray
  if (outcome.newResource && described.fields.topics) notes.push(...(await setTopics(octokit, repo, described.fields.topics, options.signal)));
  if (notes.length > 0) outcome.notes = [...(outcome.notes ?? []), ...notes];
  const { data: me } = await gh(() => octokit.rest.users.getAuthenticated());
  const http = new GitHttp(
    { url: gitUrl(repo, github.apiBaseUrl), username: 'x-access-token', password: github.token, service: 'GitHub', notFoundHint: `GitHub has no repository ${repo.fullName}, or the token may not push to it (a classic token needs the \`repo\` scope; a fine-grained one Contents read and write).` },
    github.signal,
    github.timeoutMs,
  );
  return pushEntries(
    {
      http,
      branch: repo.defaultBranch,
      where: repo.fullName,
      listTree: async (commit) => {
        const items = [];
        for await (const item of walkTree(octokit, repo, commit)) items.push({ path: item.path, type: item.type, mode: item.mode, oid: item.sha });
        return items;
      },
      maxFileBytes: limits.maxFileBytes,
      warnFileBytes: limits.warnFileBytes,
      lfs: { maxFileBytes: limits.lfsMaxFileBytes ?? GITHUB_LFS_MAX_FILE_BYTES, readBlob: (oid) => blobBytes(octokit, repo, oid) },
      // GitHub's documented no-reply address links the commit to the token's account
      author: { name: me.login, email: `${me.id}+${me.login}@users.noreply.github.com` },
      justCreated: dest === null || madeMomentsAgo(repo),
      refused: (reason) =>
        new FerryError(403, 'forbidden', `GitHub refused to update branch "${repo.defaultBranch}" of ${repo.fullName} (it said: ${reason}); nothing was committed. The branch may be protected, or the token may lack write access.`),
    },
    entries,
    toRepoPath,
    options,
    outcome,
    { top },
  );
}

/**
 * How long after `POST /user/repos` a repository's git endpoint may still answer 404 (finding 10
 * in docs/targets/github.md: "for a moment"; a minute leaves room for clock skew). A write into a
 * repository this young — the one a paused job made, resumed at once — waits it out as the
 * write that made it does; an older repository's 404 counts at once.
 */
const NEW_REPOSITORY_GRACE_MS = 60_000;

function madeMomentsAgo(repo: Repo, now = Date.now()): boolean {
  const created = repo.createdAt === null ? Number.NaN : Date.parse(repo.createdAt);
  return Number.isFinite(created) && now - created < NEW_REPOSITORY_GRACE_MS;
}

/** A small blob's bytes (the .gitattributes Ferry extends), checked against its id. */
async function blobBytes(octokit: GithubOctokit, repo: Repo, oid: string): Promise<Buffer> {
  const { data } = await gh(() => octokit.rest.git.getBlob({ owner: repo.owner, repo: repo.name, file_sha: oid }));
  const bytes = Buffer.from(data.content, 'base64');
  if (gitBlobSha(bytes) !== oid) throw new FerryError(502, 'upstream_error', `GitHub sent .gitattributes bytes that do not match their id ${oid}; nothing was pushed. Try again.`);
  return bytes;
}

/**
 * The repository's git URL, only on GitHub's own host: the API's host (GitHub Enterprise
 * Server serves both on one host), or, for api.github.com, github.com. The token goes nowhere
 * else, whatever the API answered.
 */
export function gitUrl(repo: Repo, apiBaseUrl: string): string {
  const api = new URL(apiBaseUrl);
  const url = new URL(repo.cloneUrl);
  const allowed = new Set([api.host, api.host.replace(/^api\./, '')]);
  if (url.protocol !== api.protocol || !allowed.has(url.host)) {
    throw new FerryError(502, 'upstream_error', `GitHub named ${url.host} as the git host of ${repo.fullName}; Ferry sends the token only to ${[...allowed].join(' or ')}, so nothing was uploaded.`);
  }
  return url.href.replace(/\/+$/, '');
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
async function createRepository(octokit: GithubOctokit, title: string, jobLabel: string, described: GithubRepositoryFields): Promise<Repo> {
  const base = sanitizeRepoName(title);
  // A described repository carries the source's description instead of the job's: a lost
  // answer then takes an EMPTY repository of that name and description as this job's, which
  // at worst is an empty one an earlier run of the same source left; nothing in it is lost.
  const description = described.description ?? `Created by Ferry from "${title}" (${jobLabel})`.slice(0, GITHUB_DESCRIPTION_MAX);
  const homepage = described.homepage ? { homepage: described.homepage } : {};
  for (let n = 1; n <= 100; n++) {
    const name = n === 1 ? base : `${base.slice(0, 100 - String(n).length - 1)}-${n}`;
    try {
      const { data } = await octokit.rest.repos.createForAuthenticatedUser({ name, private: true, auto_init: false, description, ...homepage, request: { retries: 0 } });
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

/**
 * The keywords as the new repository's topics (`PUT /repos/{owner}/{repo}/topics`, which
 * replaces them all). They are already in GitHub's form (metadata/forge.ts); should GitHub
 * still refuse them, the files go in all the same and a note says which topics are missing
 * and why: topics describe the repository, they are not its data.
 */
async function setTopics(octokit: GithubOctokit, repo: Repo, topics: string[], signal: AbortSignal): Promise<string[]> {
  try {
    await octokit.rest.repos.replaceAllTopics({ owner: repo.owner, repo: repo.name, names: topics });
    return [];
  } catch (error) {
    if (signal.aborted) throw error;
    // a 422's reasons are sentences in `errors` (the spec's validation-error-simple)
    const errors = (error as { response?: { data?: { errors?: unknown[] } } }).response?.data?.errors ?? [];
    const reasons = errors.map((e) => (typeof e === 'string' ? e : (e as { message?: unknown })?.message)).filter((e): e is string => typeof e === 'string');
    const said = [(githubError(error) as Error).message, ...reasons].join(' ');
    return [`The topics (${topics.join(', ')}) could not be set on ${repo.fullName}: ${said} Add them on GitHub in the repository's About settings.`];
  }
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
