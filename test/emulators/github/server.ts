import { createHash } from 'node:crypto';
import http from 'node:http';
import { closeServers, listenOnLoopback } from '../shared/http.js';
import { ERROR_SHAPES, type FaultPlan } from '../shared/faults.js';
import { GitStore, type FlatEntry, type Signature } from './git-objects.js';
import { advertisement, receivePack, type PushRecord } from './receive-pack.js';
import { uploadAdvertisement, uploadPack } from './upload-pack.js';

/**
 * A GitHub REST v3 emulator (remote-targets.md §1), faithful in what Ferry relies on:
 * shapes of repos/trees/blobs/commits/refs/contents (checked against recorded responses in
 * ./recorded), Link-header paging (per_page default 30, max 100), `{"message","documentation_url"}`
 * errors, x-ratelimit-* headers on every response with 403 when used up, the empty-repository
 * 409 of the git data API, and real git object ids.
 */
export interface GithubUser {
  id: number;
  login: string;
}

export interface GithubRepo {
  id: number;
  owner: GithubUser;
  name: string;
  private: boolean;
  description: string | null;
  /** "A URL with more information about the repository" (POST /user/repos `homepage`) */
  homepage: string | null;
  /** the repository's topics (GET /repos answers them since 2021 without a preview header) */
  topics: string[];
  /** the licence GitHub detected: `{key, name, spdx_id, url, node_id}` in the answer, or null */
  license: { key: string; name: string; spdx_id: string } | null;
  default_branch: string;
  created_at: string;
  updated_at: string;
  pushed_at: string | null;
  /** refs/heads/<name> → commit sha */
  refs: Map<string, string>;
  git: GitStore;
}

export interface GithubState {
  /** token → user */
  tokens: Map<string, GithubUser>;
  repos: GithubRepo[];
  rateLimit: { limit: number; remaining: number; reset: number };
  /**
   * GitHub's secondary limits on content-creating requests ("Rate limits for the REST API",
   * https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api#about-secondary-rate-limits:
   * "no more than 80 content-generating requests per minute and no more than 500
   * content-generating requests per hour"); see also octokit/plugin-throttling.js#667 and
   * octokit/octokit.js#1313. Every POST, PATCH, PUT and DELETE of the REST API counts; a git
   * push is not a REST request and does not.
   */
  secondaryLimits: { perMinute: number; perHour: number };
  /** when each content-creating REST request was accepted (epoch ms) */
  contentCreations: number[];
  /** blob shas whose bytes are served altered (fixity tests) */
  corruptBlobs: Set<string>;
  /** recursive tree listings longer than this answer `truncated: true` (GitHub: 100,000) */
  treeTruncateAt: number;
  /** every request, for assertions: "METHOD /path" */
  requests: string[];
  /** every git push the emulator took (objects and blobs in its pack) */
  pushes: PushRecord[];
  /** the Authorization header of every git request (Basic user:token), for assertions */
  gitAuthorizations: string[];
  /** set to make `clone_url` name another origin (a test that the token never goes there) */
  cloneOrigin: string | null;
  /**
   * How many git requests to a repository made by `POST /user/repos` answer 404 before its git
   * endpoint appears (GitHub is eventually consistent there: hail-is/hail#4517,
   * brucemcpherson/gasGit#2, cli/cli#7761); 0 by default.
   */
  newRepoGitDelay: number;
  /**
   * Tokens that may delete repositories. GitHub's "Delete a repository"
   * (https://docs.github.com/en/rest/repos/repos#delete-a-repository): admin rights, and a
   * classic token needs the `delete_repo` scope; otherwise 403 "Must have admin rights to
   * Repository." (as `gh repo delete` reports it, cli/cli#3015). Empty by default: most
   * tokens people make for uploads lack that scope.
   */
  deleteRepoTokens: Set<string>;
  /** Git LFS (on for every GitHub repository); false: the batch endpoint answers 404 */
  lfsEnabled: boolean;
  /** LFS objects stored, sha256 → bytes; and every request to the storage host with its Authorization */
  lfsObjects: Map<string, Buffer>;
  lfsStorageRequests: string[];
  /** helpers for tests */
  addRepo(owner: GithubUser, name: string, files?: Record<string, string | Buffer>, options?: { private?: boolean }): GithubRepo;
  commitCount(repo: GithubRepo): number;
  files(repo: GithubRepo): Record<string, Buffer>;
}

export interface GithubEmulator {
  url: string;
  state: GithubState;
  close(): Promise<void>;
}

const DOCS = 'https://docs.github.com/rest';
/** GitHub's answer to a topic outside its rule (cli/cli#5934 and integrations/terraform-provider-github#951 quote it with the old limit of 35) */
const TOPIC_RULE = 'Topics must start with a lowercase letter or number, consist of 50 characters or less, and can include hyphens.';

/**
 * Why GitHub refuses a repository's description, as its 422 says it: control characters
 * (a line break: r-lib/gh#92, github/VisualStudio#1777) and more than 350 characters.
 */
function descriptionRefusals(description: string): string[] {
  const refusals: string[] = [];
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(description)) refusals.push('description control characters are not allowed');
  if ([...description].length > 350) refusals.push('description cannot be more than 350 characters');
  return refusals;
}
const MAX_BLOB_BYTES = 100 * 1024 * 1024;

class HttpError extends Error {
  constructor(readonly status: number, message: string, readonly extra: Record<string, unknown> = {}) {
    super(message);
  }
}

export interface GithubEmulatorOptions {
  /** faults played in front of the API server ('api') */
  faults?: FaultPlan;
}

export async function startGithubEmulator(options: GithubEmulatorOptions = {}): Promise<GithubEmulator> {
  let nextId = 1000;
  const now = () => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  const state: GithubState = {
    tokens: new Map(),
    deleteRepoTokens: new Set(),
    repos: [],
    rateLimit: { limit: 5000, remaining: 5000, reset: Math.floor(Date.now() / 1000) + 3600 },
    secondaryLimits: { perMinute: 80, perHour: 500 },
    contentCreations: [],
    pushes: [],
    gitAuthorizations: [],
    cloneOrigin: null,
    newRepoGitDelay: 0,
    lfsEnabled: true,
    lfsObjects: new Map(),
    lfsStorageRequests: [],
    corruptBlobs: new Set(),
    treeTruncateAt: 100_000,
    requests: [],
    addRepo(owner, name, files = {}, options = {}) {
      const repo: GithubRepo = {
        id: nextId++,
        owner,
        name,
        private: options.private ?? true,
        description: null,
        homepage: null,
        topics: [],
        license: null,
        default_branch: 'main',
        created_at: now(),
        updated_at: now(),
        pushed_at: null,
        refs: new Map(),
        git: new GitStore(),
      };
      const paths = Object.entries(files);
      if (paths.length > 0) {
        const tree = repo.git.applyChanges(
          null,
          paths.map(([path, content]) => ({ path, mode: '100644', sha: repo.git.writeBlob(Buffer.from(content)) })),
        );
        const sig = signature(owner);
        repo.refs.set('refs/heads/main', repo.git.writeCommit(tree, [], 'Initial commit', sig));
        repo.pushed_at = now();
      }
      state.repos.push(repo);
      return repo;
    },
    commitCount(repo) {
      return repo.git.history(repo.refs.get(`refs/heads/${repo.default_branch}`) ?? null).length;
    },
    files(repo) {
      const head = repo.refs.get(`refs/heads/${repo.default_branch}`);
      if (!head) return {};
      const tree = repo.git.commit(head)?.tree as string;
      return Object.fromEntries(
        repo.git
          .flatten(tree)
          .filter((e) => e.type === 'blob')
          .map((e) => [e.path, repo.git.blob(e.sha) as Buffer]),
      );
    },
  };

  /** repositories whose git endpoint still answers 404 a number of times */
  const notYetVisible = new Map<GithubRepo, number>();

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        handle(req, res, Buffer.concat(chunks));
      } catch (error) {
        if (error instanceof HttpError) sendError(res, error);
        else sendError(res, new HttpError(500, `Server Error: ${(error as Error).message}`));
      }
    });
  });

  function baseUrl(req: http.IncomingMessage): string {
    return `http://${req.headers.host}`;
  }

  function signature(user: GithubUser): Signature {
    return { name: user.login, email: `${user.id}+${user.login}@users.noreply.github.com`, date: now() };
  }

  function rateHeaders(): Record<string, string> {
    const rl = state.rateLimit;
    if (rl.reset * 1000 <= Date.now()) {
      rl.remaining = rl.limit;
      rl.reset = Math.floor(Date.now() / 1000) + 3600;
    }
    return {
      'x-ratelimit-limit': String(rl.limit),
      'x-ratelimit-remaining': String(rl.remaining),
      'x-ratelimit-used': String(rl.limit - rl.remaining),
      'x-ratelimit-reset': String(rl.reset),
      'x-ratelimit-resource': 'core',
      'x-github-api-version-selected': '2022-11-28',
    };
  }

  function send(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    const text = body === undefined ? '' : JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...rateHeaders(), ...headers });
    res.end(text);
  }

  function sendError(res: http.ServerResponse, error: HttpError): void {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const { retryAfterSeconds, ...extra } = error.extra;
    send(res, error.status, { message: error.message, documentation_url: DOCS, status: String(error.status), ...extra }, retryAfterSeconds ? { 'retry-after': String(retryAfterSeconds) } : {});
  }

  function repoJson(req: http.IncomingMessage, repo: GithubRepo) {
    const api = `${baseUrl(req)}/repos/${repo.owner.login}/${repo.name}`;
    return {
      id: repo.id,
      node_id: Buffer.from(`010:Repository${repo.id}`).toString('base64'),
      name: repo.name,
      full_name: `${repo.owner.login}/${repo.name}`,
      private: repo.private,
      owner: { login: repo.owner.login, id: repo.owner.id, type: 'User', site_admin: false, url: `${baseUrl(req)}/users/${repo.owner.login}` },
      html_url: `https://github.example/${repo.owner.login}/${repo.name}`,
      // GitHub serves git on its web host (github.com) and the API on api.github.com; here one host serves both
      clone_url: `${state.cloneOrigin ?? baseUrl(req)}/${repo.owner.login}/${repo.name}.git`,
      description: repo.description,
      homepage: repo.homepage,
      fork: false,
      url: api,
      contents_url: `${api}/contents/{+path}`,
      trees_url: `${api}/git/trees{/sha}`,
      blobs_url: `${api}/git/blobs{/sha}`,
      created_at: repo.created_at,
      updated_at: repo.updated_at,
      pushed_at: repo.pushed_at,
      size: Math.ceil(
        [...repo.git.objects.values()].reduce((n, o) => n + (o.type === 'blob' ? o.data.length : 0), 0) / 1024,
      ),
      visibility: repo.private ? 'private' : 'public',
      archived: false,
      disabled: false,
      topics: repo.topics,
      license: repo.license ? { ...repo.license, url: `${baseUrl(req)}/licenses/${repo.license.key}`, node_id: 'MDc6TGljZW5zZTA=' } : null,
      default_branch: repo.default_branch,
      permissions: { admin: true, maintain: true, push: true, triage: true, pull: true },
    };
  }

  function paginate(req: http.IncomingMessage, url: URL, items: unknown[]): { page: unknown[]; headers: Record<string, string> } {
    const perPage = Math.min(100, Math.max(1, Number(url.searchParams.get('per_page') ?? 30) || 30));
    const page = Math.max(1, Number(url.searchParams.get('page') ?? 1) || 1);
    const last = Math.max(1, Math.ceil(items.length / perPage));
    const link = (p: number, rel: string) => {
      const u = new URL(url.pathname + url.search, baseUrl(req));
      u.searchParams.set('per_page', String(perPage));
      u.searchParams.set('page', String(p));
      return `<${u.toString()}>; rel="${rel}"`;
    };
    const links: string[] = [];
    if (page > 1) links.push(link(page - 1, 'prev'));
    if (page < last) links.push(link(page + 1, 'next'), link(last, 'last'));
    if (page > 1) links.push(link(1, 'first'));
    return { page: items.slice((page - 1) * perPage, page * perPage), headers: links.length ? { link: links.join(', ') } : {} };
  }

  function findRepo(user: GithubUser, owner: string, name: string): GithubRepo {
    const repo = state.repos.find((r) => r.owner.login.toLowerCase() === owner.toLowerCase() && r.name.toLowerCase() === name.toLowerCase());
    // GitHub hides private repositories the token cannot see behind 404, exactly like missing ones
    if (!repo || (repo.private && repo.owner.id !== user.id)) throw new HttpError(404, 'Not Found');
    return repo;
  }

  function head(repo: GithubRepo, branch = repo.default_branch): string | null {
    return repo.refs.get(`refs/heads/${branch}`) ?? null;
  }

  function requireNonEmpty(repo: GithubRepo): void {
    if (repo.refs.size === 0) throw new HttpError(409, 'Git Repository is empty.');
  }

  function resolveTreeish(repo: GithubRepo, ref: string): string {
    requireNonEmpty(repo);
    const commit = repo.refs.get(`refs/heads/${ref}`) ?? ref;
    const c = repo.git.commit(commit);
    if (c) return c.tree;
    if (repo.git.tree(ref)) return ref;
    throw new HttpError(404, 'Not Found');
  }

  function treeEntryJson(req: http.IncomingMessage, repo: GithubRepo, e: FlatEntry) {
    const api = `${baseUrl(req)}/repos/${repo.owner.login}/${repo.name}`;
    if (e.type === 'blob') return { path: e.path, mode: e.mode, type: e.type, sha: e.sha, size: e.size, url: `${api}/git/blobs/${e.sha}` };
    if (e.type === 'tree') return { path: e.path, mode: e.mode, type: e.type, sha: e.sha, url: `${api}/git/trees/${e.sha}` };
    return { path: e.path, mode: e.mode, type: e.type, sha: e.sha };
  }

  function commitJson(req: http.IncomingMessage, repo: GithubRepo, sha: string) {
    const c = repo.git.commit(sha);
    if (!c) throw new HttpError(404, 'Not Found');
    const api = `${baseUrl(req)}/repos/${repo.owner.login}/${repo.name}/git`;
    return {
      sha,
      node_id: Buffer.from(`04:Commit${sha}`).toString('base64'),
      url: `${api}/commits/${sha}`,
      html_url: `https://github.example/${repo.owner.login}/${repo.name}/commit/${sha}`,
      author: c.author,
      committer: c.committer,
      tree: { sha: c.tree, url: `${api}/trees/${c.tree}` },
      message: c.message,
      parents: c.parents.map((p) => ({ sha: p, url: `${api}/commits/${p}`, html_url: `https://github.example/${repo.owner.login}/${repo.name}/commit/${p}` })),
      verification: { verified: false, reason: 'unsigned', signature: null, payload: null, verified_at: null },
    };
  }

  function refJson(req: http.IncomingMessage, repo: GithubRepo, ref: string) {
    const sha = repo.refs.get(ref) as string;
    const api = `${baseUrl(req)}/repos/${repo.owner.login}/${repo.name}/git`;
    return { ref, node_id: Buffer.from(`03:Ref${ref}`).toString('base64'), url: `${api}/${ref}`, object: { sha, type: 'commit', url: `${api}/commits/${sha}` } };
  }

  function contentJson(req: http.IncomingMessage, repo: GithubRepo, e: FlatEntry) {
    const api = `${baseUrl(req)}/repos/${repo.owner.login}/${repo.name}`;
    const name = e.path.split('/').pop() as string;
    const type = e.type === 'tree' ? 'dir' : e.mode === '120000' ? 'symlink' : e.type === 'commit' ? 'submodule' : 'file';
    const self = `${api}/contents/${e.path}?ref=${repo.default_branch}`;
    const git = `${api}/git/${e.type === 'tree' ? 'trees' : 'blobs'}/${e.sha}`;
    const html = `https://github.example/${repo.owner.login}/${repo.name}/${e.type === 'tree' ? 'tree' : 'blob'}/${repo.default_branch}/${e.path}`;
    return {
      name,
      path: e.path,
      sha: e.sha,
      size: e.size ?? 0,
      url: self,
      html_url: html,
      git_url: git,
      download_url: type === 'file' ? `https://raw.example/${repo.owner.login}/${repo.name}/${repo.default_branch}/${e.path}` : null,
      type,
      _links: { self, git, html },
    };
  }

  function commitOnBranch(repo: GithubRepo, user: GithubUser, tree: string, message: string): string {
    const parent = head(repo);
    const sha = repo.git.writeCommit(tree, parent ? [parent] : [], message, signature(user));
    repo.refs.set(`refs/heads/${repo.default_branch}`, sha);
    repo.pushed_at = now();
    repo.updated_at = now();
    return sha;
  }

  /**
   * The secondary limit as the docs describe the answer: 403 (or 429) with a message naming it,
   * and `retry-after` in seconds; the primary x-ratelimit-remaining is not 0.
   */
  function secondaryLimit(): void {
    const at = Date.now();
    state.contentCreations = state.contentCreations.filter((t) => t > at - 3600_000);
    const lastMinute = state.contentCreations.filter((t) => t > at - 60_000);
    const { perMinute, perHour } = state.secondaryLimits;
    let waitMs = 0;
    if (lastMinute.length >= perMinute) waitMs = lastMinute[lastMinute.length - perMinute]! + 60_000 - at;
    if (state.contentCreations.length >= perHour) waitMs = Math.max(waitMs, state.contentCreations[state.contentCreations.length - perHour]! + 3600_000 - at);
    if (waitMs > 0) {
      throw new HttpError(403, 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID.', {
        documentation_url: 'https://docs.github.com/free-pro-team@latest/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits',
        retryAfterSeconds: Math.ceil(waitMs / 1000),
      });
    }
    state.contentCreations.push(at);
  }

  /**
   * git over HTTPS: Basic auth with the token as the password (GitHub documents
   * `x-access-token:<token>`; any user name works with a personal access token), 401 with a
   * Basic challenge otherwise; a repository the token cannot see is "Repository not found."
   * receive-pack (push) and a depth-1 upload-pack (a shallow fetch of a whole repository).
   */
  function smartHttp(req: http.IncomingMessage, res: http.ServerResponse, url: URL, m: RegExpExecArray, body: Buffer): void {
    const auth = String(req.headers.authorization ?? '');
    state.gitAuthorizations.push(auth);
    const basic = /^Basic (.+)$/i.exec(auth)?.[1];
    const password = basic ? Buffer.from(basic, 'base64').toString('utf8').split(':').slice(1).join(':') : '';
    const user = state.tokens.get(password);
    if (!user) {
      res.writeHead(401, { 'www-authenticate': 'Basic realm="GitHub"', 'content-type': 'text/plain' });
      res.end('Invalid username or token. Password authentication is not supported for Git operations.\n');
      return;
    }
    let repo: GithubRepo;
    try {
      repo = findRepo(user, decodeURIComponent(m[1]!), decodeURIComponent(m[2]!));
      const pending = notYetVisible.get(repo) ?? 0;
      if (pending > 0) {
        notYetVisible.set(repo, pending - 1);
        throw new Error('not yet visible to git');
      }
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('Repository not found.\n');
      return;
    }
    if (m[3] === 'info/lfs/objects/batch') return lfsBatch(req, res, body);
    if (m[3] === 'git-upload-pack') {
      res.writeHead(200, { 'content-type': 'application/x-git-upload-pack-result', 'cache-control': 'no-cache' });
      res.end(uploadPack(repo.git, body));
      return;
    }
    if (m[3] === 'info/refs') {
      if (url.searchParams.get('service') === 'git-upload-pack') {
        res.writeHead(200, { 'content-type': 'application/x-git-upload-pack-advertisement', 'cache-control': 'no-cache' });
        res.end(uploadAdvertisement(repo, repo.default_branch));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/x-git-receive-pack-advertisement', 'cache-control': 'no-cache' });
      res.end(advertisement(repo));
      return;
    }
    const result = receivePack(repo, body);
    if (result.record) state.pushes.push(result.record);
    if (result.updated) {
      repo.pushed_at = now();
      repo.updated_at = now();
    }
    res.writeHead(200, { 'content-type': 'application/x-git-receive-pack-result', 'cache-control': 'no-cache' });
    res.end(result.report);
  }

  /**
   * The Git LFS batch API (git-lfs docs/api/batch.md): for each object not stored yet, an
   * upload action whose href is on the storage "host" with its own one-off Authorization (on
   * GitHub the storage is another host; the git token must not go there).
   */
  const storageToken = `RemoteAuth ${Math.random().toString(36).slice(2)}`;
  function lfsBatch(req: http.IncomingMessage, res: http.ServerResponse, body: Buffer): void {
    if (!state.lfsEnabled) {
      res.writeHead(404, { 'content-type': 'application/vnd.git-lfs+json' });
      res.end(JSON.stringify({ message: 'Not Found' }));
      return;
    }
    const input = JSON.parse(body.toString('utf8')) as { operation: string; objects: { oid: string; size: number }[] };
    const objects = input.objects.map(({ oid, size }) =>
      state.lfsObjects.has(oid)
        ? { oid, size }
        : { oid, size, authenticated: true, actions: { upload: { href: `${baseUrl(req)}/lfs-storage/${oid}`, header: { Authorization: storageToken }, expires_in: 3600 } } },
    );
    res.writeHead(200, { 'content-type': 'application/vnd.git-lfs+json' });
    res.end(JSON.stringify({ transfer: 'basic', objects, hash_algo: 'sha256' }));
  }

  function lfsStorage(req: http.IncomingMessage, res: http.ServerResponse, oid: string, body: Buffer): void {
    state.lfsStorageRequests.push(`${req.method} ${String(req.headers.authorization ?? '')}`);
    const sha = createHash('sha256').update(body).digest('hex');
    if (req.method !== 'PUT' || req.headers.authorization !== storageToken || sha !== oid) {
      res.writeHead(req.headers.authorization !== storageToken ? 403 : 400).end();
      return;
    }
    state.lfsObjects.set(oid, body);
    res.writeHead(200).end();
  }

  function json(body: Buffer): Record<string, unknown> {
    if (body.length === 0) return {};
    try {
      return JSON.parse(body.toString('utf8')) as Record<string, unknown>;
    } catch {
      throw new HttpError(400, 'Problems parsing JSON');
    }
  }

  function wantsRaw(req: http.IncomingMessage): boolean {
    return /application\/vnd\.github(\.v3)?\.raw/.test(String(req.headers.accept ?? ''));
  }

  function handle(req: http.IncomingMessage, res: http.ServerResponse, body: Buffer): void {
    const url = new URL(req.url ?? '/', baseUrl(req));
    const method = req.method ?? 'GET';
    state.requests.push(`${method} ${url.pathname}`);
    const gitPath = /^\/([^/]+)\/([^/]+)\.git\/(info\/refs|git-receive-pack|git-upload-pack|info\/lfs\/objects\/batch)$/.exec(url.pathname);
    if (gitPath) return smartHttp(req, res, url, gitPath, body);
    const storage = /^\/lfs-storage\/([0-9a-f]{64})$/.exec(url.pathname);
    if (storage) return lfsStorage(req, res, storage[1]!, body);
    if (!req.headers['user-agent']) {
      throw new HttpError(403, 'Request forbidden by administrative rules. Please make sure your request has a User-Agent header (https://docs.github.com/en/rest/overview/resources-in-the-rest-api#user-agent-required). Check https://developer.github.com for other possible causes.');
    }
    const auth = String(req.headers.authorization ?? '');
    const token = /^(?:token|bearer)\s+(.+)$/i.exec(auth)?.[1];
    if (!token) throw new HttpError(401, 'Requires authentication');
    const user = state.tokens.get(token);
    if (!user) throw new HttpError(401, 'Bad credentials');

    // the primary limit: every authenticated call costs one; used up → 403 until the reset
    rateHeaders();
    if (state.rateLimit.remaining <= 0) {
      throw new HttpError(403, `API rate limit exceeded for user ID ${user.id}.`, { documentation_url: 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api' });
    }
    state.rateLimit.remaining -= 1;
    if (method !== 'GET' && method !== 'HEAD') secondaryLimit();

    const path = url.pathname.replace(/\/+$/, '');
    let m: RegExpExecArray | null;

    if (method === 'GET' && path === '/user') {
      return send(res, 200, { login: user.login, id: user.id, type: 'User', site_admin: false, name: null });
    }
    if (method === 'GET' && path === '/user/repos') {
      const visible = state.repos.filter((r) => r.owner.id === user.id).sort((a, b) => `${a.owner.login}/${a.name}`.localeCompare(`${b.owner.login}/${b.name}`));
      const { page, headers } = paginate(req, url, visible.map((r) => repoJson(req, r)));
      return send(res, 200, page, headers);
    }
    if (method === 'POST' && path === '/user/repos') {
      const input = json(body);
      const rawName = String(input.name ?? '');
      if (!rawName) throw new HttpError(422, 'Repository creation failed.', { errors: [{ resource: 'Repository', code: 'missing_field', field: 'name' }] });
      // GitHub turns any character outside [A-Za-z0-9._-] into "-"
      const name = rawName.replace(/[^A-Za-z0-9._-]/g, '-');
      if (state.repos.some((r) => r.owner.id === user.id && r.name.toLowerCase() === name.toLowerCase())) {
        throw new HttpError(422, 'Repository creation failed.', {
          errors: [{ resource: 'Repository', code: 'custom', field: 'name', message: 'name already exists on this account' }],
        });
      }
      const description = typeof input.description === 'string' ? input.description : null;
      const descriptionErrors = description === null ? [] : descriptionRefusals(description);
      if (descriptionErrors.length > 0) {
        throw new HttpError(422, 'Repository creation failed.', { errors: descriptionErrors.map((message) => ({ resource: 'Repository', code: 'custom', field: 'description', message })) });
      }
      const repo = state.addRepo(user, name, {}, { private: input.private === true });
      if (state.newRepoGitDelay > 0) notYetVisible.set(repo, state.newRepoGitDelay);
      repo.description = description;
      repo.homepage = typeof input.homepage === 'string' ? input.homepage : null;
      if (input.auto_init === true) commitOnBranch(repo, user, repo.git.applyChanges(null, [{ path: 'README.md', mode: '100644', sha: repo.git.writeBlob(Buffer.from(`# ${name}\n`)) }]), 'Initial commit');
      return send(res, 201, repoJson(req, repo), { location: `${baseUrl(req)}/repos/${user.login}/${name}` });
    }
    if (method === 'GET' && (m = /^\/repositories\/(\d+)$/.exec(path))) {
      const repo = state.repos.find((r) => r.id === Number(m![1]));
      if (!repo || (repo.private && repo.owner.id !== user.id)) throw new HttpError(404, 'Not Found');
      return send(res, 200, repoJson(req, repo));
    }

    m = /^\/repos\/([^/]+)\/([^/]+)(\/.*)?$/.exec(path);
    if (!m) throw new HttpError(404, 'Not Found');
    const repo = findRepo(user, decodeURIComponent(m[1]!), decodeURIComponent(m[2]!));
    const rest = m[3] ?? '';

    if (method === 'GET' && rest === '') return send(res, 200, repoJson(req, repo));
    if (method === 'GET' && rest === '/topics') return send(res, 200, { names: repo.topics });
    if (method === 'PUT' && rest === '/topics') {
      // "Replace all repository topics": `names` replaces the set; GitHub saves them lower
      // case (the REST description), and refuses a name outside its topic rule, or more than
      // 20, with 422 and the reason as a sentence in `errors` (validation-error-simple)
      const input = json(body);
      if (!Array.isArray(input.names)) throw new HttpError(422, 'Invalid request.\n\n"names" wasn\'t supplied.');
      const names = input.names.map((n) => String(n).toLowerCase());
      if (names.some((n) => !/^[a-z0-9][a-z0-9-]{0,49}$/.test(n))) throw new HttpError(422, 'Validation Failed', { errors: [TOPIC_RULE] });
      if (names.length > 20) throw new HttpError(422, 'Validation Failed', { errors: ['A repository cannot have more than 20 topics.'] });
      repo.topics = names;
      repo.updated_at = now();
      return send(res, 200, { names: repo.topics });
    }
    if (method === 'DELETE' && rest === '') {
      if (!state.deleteRepoTokens.has(token) || repo.owner.id !== user.id) {
        throw new HttpError(403, 'Must have admin rights to Repository.', { documentation_url: 'https://docs.github.com/rest/repos/repos#delete-a-repository' });
      }
      state.repos.splice(state.repos.indexOf(repo), 1);
      res.writeHead(204).end();
      return;
    }

    if (method === 'GET' && (m = /^\/git\/trees\/(.+)$/.exec(rest))) {
      const treeSha = resolveTreeish(repo, decodeURIComponent(m[1]!));
      const recursive = url.searchParams.has('recursive');
      let entries = repo.git.flatten(treeSha, '', recursive);
      let truncated = false;
      if (recursive && entries.length > state.treeTruncateAt) {
        entries = entries.slice(0, state.treeTruncateAt);
        truncated = true;
      }
      return send(res, 200, {
        sha: treeSha,
        url: `${baseUrl(req)}/repos/${repo.owner.login}/${repo.name}/git/trees/${treeSha}`,
        tree: entries.map((e) => treeEntryJson(req, repo, e)),
        truncated,
      });
    }
    if (method === 'GET' && (m = /^\/git\/blobs\/([0-9a-f]{40})$/.exec(rest))) {
      requireNonEmpty(repo);
      let data = repo.git.blob(m[1]!);
      if (!data) throw new HttpError(404, 'Not Found');
      if (state.corruptBlobs.has(m[1]!)) data = Buffer.concat([data.subarray(0, Math.max(0, data.length - 1)), Buffer.from('X')]);
      if (wantsRaw(req)) {
        res.writeHead(200, { 'content-type': 'application/vnd.github.raw; charset=utf-8', 'content-length': String(data.length), ...rateHeaders() });
        res.end(data);
        return;
      }
      return send(res, 200, {
        sha: m[1],
        node_id: Buffer.from(`04:Blob${m[1]}`).toString('base64'),
        size: data.length,
        url: `${baseUrl(req)}/repos/${repo.owner.login}/${repo.name}/git/blobs/${m[1]}`,
        content: (data.toString('base64').match(/.{1,60}/g) ?? ['']).join('\n') + '\n',
        encoding: 'base64',
      });
    }
    if (method === 'POST' && rest === '/git/blobs') {
      requireNonEmpty(repo);
      const input = json(body);
      if (typeof input.content !== 'string') throw new HttpError(422, 'Invalid request.\n\n"content" wasn\'t supplied.');
      const data = input.encoding === 'base64' ? Buffer.from(input.content, 'base64') : Buffer.from(input.content, 'utf8');
      if (data.length > MAX_BLOB_BYTES) throw new HttpError(422, 'Sorry, your input was too large to process. Consider creating the blob in a local clone of the repository and then pushing it to GitHub.');
      const sha = repo.git.writeBlob(data);
      return send(res, 201, { sha, url: `${baseUrl(req)}/repos/${repo.owner.login}/${repo.name}/git/blobs/${sha}` }, { location: `${baseUrl(req)}/repos/${repo.owner.login}/${repo.name}/git/blobs/${sha}` });
    }
    if (method === 'POST' && rest === '/git/trees') {
      requireNonEmpty(repo);
      const input = json(body);
      const base = typeof input.base_tree === 'string' ? input.base_tree : null;
      if (base && !repo.git.tree(base)) throw new HttpError(422, 'base_tree is not a valid tree oid');
      const items = Array.isArray(input.tree) ? (input.tree as Record<string, unknown>[]) : [];
      const changes = items.map((item) => {
        let sha = item.sha === null ? null : typeof item.sha === 'string' ? item.sha : null;
        if (typeof item.content === 'string') sha = repo.git.writeBlob(Buffer.from(item.content, 'utf8'));
        else if (sha && !repo.git.objects.has(sha)) throw new HttpError(422, `tree.sha ${sha} is not a valid blob`);
        return { path: String(item.path ?? ''), mode: String(item.mode ?? '100644'), sha };
      });
      const tree = repo.git.applyChanges(base, changes);
      return send(res, 201, {
        sha: tree,
        url: `${baseUrl(req)}/repos/${repo.owner.login}/${repo.name}/git/trees/${tree}`,
        tree: repo.git.flatten(tree, '', false).map((e) => treeEntryJson(req, repo, e)),
        truncated: false,
      });
    }
    if (method === 'GET' && (m = /^\/git\/commits\/([0-9a-f]{40})$/.exec(rest))) {
      requireNonEmpty(repo);
      return send(res, 200, commitJson(req, repo, m[1]!));
    }
    if (method === 'POST' && rest === '/git/commits') {
      requireNonEmpty(repo);
      const input = json(body);
      const tree = String(input.tree ?? '');
      if (!repo.git.tree(tree)) throw new HttpError(422, 'Tree SHA does not exist');
      const parents = Array.isArray(input.parents) ? input.parents.map(String) : [];
      for (const p of parents) if (!repo.git.commit(p)) throw new HttpError(422, 'Parent SHA does not exist or is not a commit object');
      const sha = repo.git.writeCommit(tree, parents, String(input.message ?? ''), signature(user));
      return send(res, 201, commitJson(req, repo, sha));
    }
    // octokit sends "heads/main" as "heads%2Fmain"; GitHub accepts both spellings
    if (method === 'GET' && (m = /^\/git\/(?:ref|refs)\/(heads(?:\/|%2F).+)$/i.exec(rest))) {
      requireNonEmpty(repo);
      const ref = `refs/${decodeURIComponent(m[1]!)}`;
      if (!repo.refs.has(ref)) throw new HttpError(404, 'Not Found');
      return send(res, 200, refJson(req, repo, ref));
    }
    if (method === 'PATCH' && (m = /^\/git\/refs\/(heads(?:\/|%2F).+)$/i.exec(rest))) {
      requireNonEmpty(repo);
      const ref = `refs/${decodeURIComponent(m[1]!)}`;
      const current = repo.refs.get(ref);
      if (!current) throw new HttpError(422, 'Reference does not exist');
      const input = json(body);
      const sha = String(input.sha ?? '');
      if (!repo.git.commit(sha)) throw new HttpError(422, 'Object does not exist');
      if (input.force !== true && !repo.git.isAncestor(current, sha)) throw new HttpError(422, 'Update is not a fast forward');
      repo.refs.set(ref, sha);
      repo.pushed_at = now();
      return send(res, 200, refJson(req, repo, ref));
    }
    if (method === 'GET' && rest === '/commits') {
      const start = head(repo, url.searchParams.get('sha') ?? repo.default_branch);
      if (repo.refs.size === 0) throw new HttpError(409, 'Git Repository is empty.');
      const filter = url.searchParams.get('path');
      const shas = repo.git.history(start).filter((sha) => {
        if (!filter) return true;
        const c = repo.git.commit(sha)!;
        const mine = repo.git.lookup(c.tree, filter)?.sha ?? null;
        const parent = c.parents[0] ? repo.git.lookup(repo.git.commit(c.parents[0])!.tree, filter)?.sha ?? null : null;
        return mine !== parent;
      });
      const { page, headers } = paginate(req, url, shas.map((sha) => ({ sha, commit: commitJson(req, repo, sha), url: `${baseUrl(req)}/repos/${repo.owner.login}/${repo.name}/commits/${sha}` })));
      return send(res, 200, page, headers);
    }
    if ((m = /^\/contents(?:\/(.*))?$/.exec(rest))) {
      const filePath = decodeURIComponent(m[1] ?? '');
      if (method === 'GET') {
        if (repo.refs.size === 0) throw new HttpError(404, 'This repository is empty.');
        const tree = resolveTreeish(repo, url.searchParams.get('ref') ?? repo.default_branch);
        const e = repo.git.lookup(tree, filePath);
        if (!e) throw new HttpError(404, 'Not Found');
        if (e.type === 'tree') return send(res, 200, repo.git.flatten(e.sha, filePath ? `${filePath}/` : '', false).map((x) => contentJson(req, repo, x)));
        const data = repo.git.blob(e.sha) as Buffer;
        if (wantsRaw(req)) {
          res.writeHead(200, { 'content-type': 'application/vnd.github.raw; charset=utf-8', ...rateHeaders() });
          res.end(data);
          return;
        }
        if (data.length > 1024 * 1024) return send(res, 200, { ...contentJson(req, repo, e), content: '', encoding: 'none' });
        return send(res, 200, { ...contentJson(req, repo, e), content: (data.toString('base64').match(/.{1,60}/g) ?? ['']).join('\n') + '\n', encoding: 'base64' });
      }
      if (method === 'PUT') {
        const input = json(body);
        if (typeof input.message !== 'string') throw new HttpError(422, 'Invalid request.\n\n"message" wasn\'t supplied.');
        if (typeof input.content !== 'string') throw new HttpError(422, 'Invalid request.\n\n"content" wasn\'t supplied.');
        const data = Buffer.from(input.content, 'base64');
        const current = head(repo);
        const baseTree = current ? repo.git.commit(current)!.tree : null;
        const existing = baseTree ? repo.git.lookup(baseTree, filePath) : null;
        if (existing && existing.type === 'blob' && input.sha === undefined) throw new HttpError(422, 'Invalid request.\n\n"sha" wasn\'t supplied.');
        if (existing && input.sha !== undefined && input.sha !== existing.sha) throw new HttpError(409, `${filePath} does not match ${String(input.sha)}`);
        const blob = repo.git.writeBlob(data);
        const tree = repo.git.applyChanges(baseTree, [{ path: filePath, mode: '100644', sha: blob }]);
        const commit = commitOnBranch(repo, user, tree, input.message);
        const entry = repo.git.lookup(tree, filePath) as FlatEntry;
        return send(res, existing ? 200 : 201, { content: contentJson(req, repo, entry), commit: commitJson(req, repo, commit) });
      }
    }
    throw new HttpError(404, 'Not Found');
  }

  return {
    url: await (options.faults?.install(server, 'api', ERROR_SHAPES.github), listenOnLoopback(server)),
    state,
    close: () => closeServers(server),
  };
}
