import { createHash } from 'node:crypto';
import http from 'node:http';
import { GitStore, type FlatEntry, type Signature } from '../github/git-objects.js';
import { advertisement, receivePack, type PushRecord } from '../github/receive-pack.js';
import { uploadAdvertisement, uploadPack } from '../github/upload-pack.js';
import { closeServers, listenOnLoopback } from '../shared/http.js';
import { ERROR_SHAPES, type FaultPlan } from '../shared/faults.js';

/**
 * A GitLab REST v4 emulator (remote-targets.md §2) under `/api/v4`: projects with
 * `membership=true` and offset paging (x-page/x-next-page/x-total… + Link; per_page default 20,
 * max 100), the repository tree (recursive, keyset paging with `page_token` + Link), the
 * repository files API (GET JSON, HEAD with X-Gitlab-* headers, /raw), blob raw, commits with
 * actions (one commit, create/update/delete), project creation, `{"message"}` errors,
 * RateLimit-* headers on every response and 429 "Retry later" with Retry-After when used up.
 * Git object ids are real (shared GitStore).
 */
export interface GitlabUser {
  id: number;
  username: string;
  name: string;
}

export interface GitlabProject {
  id: number;
  name: string;
  path: string;
  owner: GitlabUser;
  visibility: 'private' | 'internal' | 'public';
  description: string | null;
  /** `topics` as given on create (doc/api/projects.md "Create a project": an array of strings) */
  topics: string[];
  /**
   * The licence GitLab detects from the repository's LICENSE file (licensee: `key` such as
   * "mit" or "lgpl-3.0", "other" for one it cannot name), or null; a test sets it
   */
  license: { key: string; name: string; nickname: string | null; html_url: string; source_url: string | null } | null;
  /** null until the first commit */
  default_branch: string | null;
  created_at: string;
  last_activity_at: string;
  refs: Map<string, string>;
  git: GitStore;
  /** the date its owner deleted it, where deletion is delayed (GitlabState.delayedDeletion); null otherwise */
  markedForDeletionOn: string | null;
}

export interface GitlabState {
  tokens: Map<string, GitlabUser>;
  projects: GitlabProject[];
  rateLimit: { limit: number; remaining: number; reset: number };
  corruptBlobs: Set<string>;
  requests: string[];
  /**
   * The body size of every API request ("METHOD /path" → bytes). GitLab.com ends a REST request
   * after 60 s (Rails' Rack::Timeout; gitlab-org/gitlab!43117 "Document GitLab.com puma request
   * timeout"), while git over HTTP goes through Workhorse without that limit (gitlab-ce
   * d07b2e09); tests check that no file bytes travel in an API request.
   */
  apiBodies: { request: string; bytes: number }[];
  /** every git push the emulator took */
  pushes: PushRecord[];
  /** the Authorization header of every git request, for assertions */
  gitAuthorizations: string[];
  /** set to make `http_url_to_repo` name another origin (a test that the token never goes there) */
  cloneOrigin: string | null;
  /**
   * Delayed deletion, on by default on newer GitLab (gitlab-org/gitlab#255449; Premium, and on
   * gitlab.com): `DELETE /projects/:id` only marks the project — it stays, answered by
   * `GET /projects/:id` with `marked_for_deletion_on`/`_at` set (!28754), renamed
   * `<path>-deletion_scheduled-<id>` so its name is free at once (#526081; `-deleted-<id>` in
   * !76675) — and is removed days later. A DELETE of a project already marked removes it
   * (!147479 "already scheduled … fully delete"). Off: removed at once, as on GitLab CE.
   */
  delayedDeletion: boolean;
  addProject(owner: GitlabUser, name: string, files?: Record<string, string | Buffer>, options?: { visibility?: GitlabProject['visibility'] }): GitlabProject;
  commitCount(project: GitlabProject): number;
  files(project: GitlabProject): Record<string, Buffer>;
}

export interface GitlabEmulator {
  /** the instance's base URL (Ferry appends /api/v4) */
  url: string;
  state: GitlabState;
  close(): Promise<void>;
}

class HttpError extends Error {
  constructor(readonly status: number, readonly body: unknown) {
    super(typeof body === 'string' ? body : JSON.stringify(body));
  }
}

const notFound = (what: string) => new HttpError(404, { message: `404 ${what} Not Found` });

export interface GitlabEmulatorOptions {
  /** faults played in front of the instance ('api') */
  faults?: FaultPlan;
}

export async function startGitlabEmulator(options: GitlabEmulatorOptions = {}): Promise<GitlabEmulator> {
  let nextId = 5000;
  const now = () => new Date().toISOString();
  const signature = (u: GitlabUser): Signature => ({ name: u.name, email: `${u.username}@users.gitlab.example`, date: now() });

  const state: GitlabState = {
    tokens: new Map(),
    projects: [],
    rateLimit: { limit: 2000, remaining: 2000, reset: Math.floor(Date.now() / 1000) + 60 },
    corruptBlobs: new Set(),
    requests: [],
    apiBodies: [],
    pushes: [],
    gitAuthorizations: [],
    cloneOrigin: null,
    delayedDeletion: false,
    addProject(owner, name, files = {}, options = {}) {
      const project: GitlabProject = {
        id: nextId++,
        name,
        path: name.replace(/[^A-Za-z0-9_.-]+/g, '-').toLowerCase(),
        owner,
        visibility: options.visibility ?? 'private',
        description: null,
        topics: [],
        license: null,
        default_branch: null,
        created_at: now(),
        last_activity_at: now(),
        refs: new Map(),
        git: new GitStore(),
        markedForDeletionOn: null,
      };
      const entries = Object.entries(files);
      if (entries.length) {
        const tree = project.git.applyChanges(null, entries.map(([path, c]) => ({ path, mode: '100644', sha: project.git.writeBlob(Buffer.from(c)) })));
        project.refs.set('main', project.git.writeCommit(tree, [], 'Initial commit', signature(owner)));
        project.default_branch = 'main';
      }
      state.projects.push(project);
      return project;
    },
    commitCount(project) {
      return project.git.history(project.default_branch ? (project.refs.get(project.default_branch) ?? null) : null).length;
    },
    files(project) {
      const head = project.default_branch ? project.refs.get(project.default_branch) : undefined;
      if (!head) return {};
      return Object.fromEntries(project.git.flatten(project.git.commit(head)!.tree).filter((e) => e.type === 'blob').map((e) => [e.path, project.git.blob(e.sha)!]));
    },
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        handle(req, res, Buffer.concat(chunks));
      } catch (error) {
        const e = error instanceof HttpError ? error : new HttpError(500, { message: '500 Internal Server Error' });
        if (res.headersSent) return void res.destroy();
        if (typeof e.body === 'string') {
          res.writeHead(e.status, { 'content-type': 'text/plain', ...rateHeaders(), ...(e.status === 429 ? retryHeaders() : {}) });
          res.end(e.body);
        } else send(req, res, e.status, e.body);
      }
    });
  });

  function rateHeaders(): Record<string, string> {
    const rl = state.rateLimit;
    if (rl.reset * 1000 <= Date.now()) {
      rl.remaining = rl.limit;
      rl.reset = Math.floor(Date.now() / 1000) + 60;
    }
    return {
      'ratelimit-limit': String(rl.limit),
      'ratelimit-name': 'throttle_authenticated_api',
      'ratelimit-observed': String(rl.limit - rl.remaining),
      'ratelimit-remaining': String(rl.remaining),
      'ratelimit-reset': String(rl.reset),
    };
  }

  function retryHeaders(): Record<string, string> {
    const seconds = Math.max(0, state.rateLimit.reset - Math.floor(Date.now() / 1000));
    return { 'retry-after': String(seconds), 'ratelimit-resettime': new Date(state.rateLimit.reset * 1000).toUTCString() };
  }

  function send(req: http.IncomingMessage, res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    res.writeHead(status, { 'content-type': 'application/json', ...rateHeaders(), ...headers });
    res.end(req.method === 'HEAD' ? undefined : JSON.stringify(body));
  }

  function base(req: http.IncomingMessage) {
    return `http://${req.headers.host}`;
  }

  function repositorySize(p: GitlabProject): number {
    return [...p.git.objects.values()].reduce((n, o) => n + (o.type === 'blob' ? o.data.length : 0), 0);
  }

  function projectJson(req: http.IncomingMessage, p: GitlabProject) {
    const web = `${base(req)}/${p.owner.username}/${p.path}`;
    return {
      id: p.id,
      description: p.description,
      name: p.name,
      name_with_namespace: `${p.owner.name} / ${p.name}`,
      path: p.path,
      path_with_namespace: `${p.owner.username}/${p.path}`,
      created_at: p.created_at,
      default_branch: p.default_branch,
      // sorted by name, as lib/api/entities/basic_project_details.rb `topic_names` answers them
      tag_list: [...p.topics].sort(),
      topics: [...p.topics].sort(),
      ssh_url_to_repo: `git@gitlab.example:${p.owner.username}/${p.path}.git`,
      http_url_to_repo: state.cloneOrigin ? `${state.cloneOrigin}/${p.owner.username}/${p.path}.git` : `${web}.git`,
      web_url: web,
      readme_url: null,
      avatar_url: null,
      forks_count: 0,
      star_count: 0,
      last_activity_at: p.last_activity_at,
      namespace: { id: p.owner.id, name: p.owner.name, path: p.owner.username, kind: 'user', full_path: p.owner.username, parent_id: null },
      _links: { self: `${base(req)}/api/v4/projects/${p.id}` },
      empty_repo: p.refs.size === 0,
      archived: false,
      visibility: p.visibility,
      owner: { id: p.owner.id, username: p.owner.username, name: p.owner.name, state: 'active' },
      marked_for_deletion_at: p.markedForDeletionOn,
      marked_for_deletion_on: p.markedForDeletionOn,
      permissions: { project_access: { access_level: 50, notification_level: 3 }, group_access: null },
    };
  }

  function offsetPage(req: http.IncomingMessage, url: URL, items: unknown[]) {
    const perPage = Math.min(100, Math.max(1, Number(url.searchParams.get('per_page') ?? 20) || 20));
    const page = Math.max(1, Number(url.searchParams.get('page') ?? 1) || 1);
    const totalPages = Math.max(1, Math.ceil(items.length / perPage));
    const link = (p: number, rel: string) => {
      const u = new URL(url.pathname + url.search, base(req));
      u.searchParams.set('page', String(p));
      u.searchParams.set('per_page', String(perPage));
      return `<${u}>; rel="${rel}"`;
    };
    const links = [...(page > 1 ? [link(page - 1, 'prev')] : []), ...(page < totalPages ? [link(page + 1, 'next')] : []), link(1, 'first'), link(totalPages, 'last')];
    const headers: Record<string, string> = {
      'x-page': String(page),
      'x-per-page': String(perPage),
      'x-next-page': page < totalPages ? String(page + 1) : '',
      'x-prev-page': page > 1 ? String(page - 1) : '',
      'x-total': String(items.length),
      'x-total-pages': String(totalPages),
      link: links.join(', '),
    };
    return { page: items.slice((page - 1) * perPage, page * perPage), headers };
  }

  function findProject(user: GitlabUser, idOrPath: string): GitlabProject {
    const key = decodeURIComponent(idOrPath);
    const p = /^\d+$/.test(key) ? state.projects.find((x) => x.id === Number(key)) : state.projects.find((x) => `${x.owner.username}/${x.path}` === key);
    if (!p || (p.visibility !== 'public' && p.owner.id !== user.id)) throw notFound('Project');
    return p;
  }

  function headTree(p: GitlabProject, ref: string | null): { commit: string; tree: string } | null {
    const name = ref ?? p.default_branch;
    if (!name) return null;
    const commit = p.refs.get(name) ?? (p.git.commit(name) ? name : null);
    if (!commit) return null;
    return { commit, tree: p.git.commit(commit)!.tree };
  }

  function json(body: Buffer): Record<string, unknown> {
    if (!body.length) return {};
    try {
      return JSON.parse(body.toString('utf8')) as Record<string, unknown>;
    } catch {
      throw new HttpError(400, { error: 'Invalid JSON' });
    }
  }

  function lastCommitFor(p: GitlabProject, head: string, path: string): string {
    for (const sha of p.git.history(head)) {
      const c = p.git.commit(sha)!;
      const mine = p.git.lookup(c.tree, path)?.sha ?? null;
      const parent = c.parents[0] ? (p.git.lookup(p.git.commit(c.parents[0])!.tree, path)?.sha ?? null) : null;
      if (mine !== parent) return sha;
    }
    return head;
  }

  function commitJson(p: GitlabProject, sha: string, stats?: { additions: number; deletions: number; total: number }) {
    const c = p.git.commit(sha)!;
    return {
      id: sha,
      short_id: sha.slice(0, 8),
      created_at: c.committer.date,
      parent_ids: c.parents,
      title: c.message.split('\n')[0],
      message: c.message,
      author_name: c.author.name,
      author_email: c.author.email,
      authored_date: c.author.date,
      committer_name: c.committer.name,
      committer_email: c.committer.email,
      committed_date: c.committer.date,
      trailers: {},
      web_url: `https://gitlab.example/${p.owner.username}/${p.path}/-/commit/${sha}`,
      ...(stats ? { stats, status: null, project_id: p.id, last_pipeline: null } : {}),
    };
  }

  /**
   * git over HTTPS (served by GitLab Workhorse + Gitaly, outside the REST API's limits): Basic
   * auth with the token as the password and any user name ("You can set the username to any
   * string value. You should use oauth2", doc/api/oauth2.md); 401 "HTTP Basic: Access denied"
   * otherwise. receive-pack (push) and a depth-1 upload-pack are served. The first push into an empty project makes
   * its branch the default branch.
   */
  function smartHttp(req: http.IncomingMessage, res: http.ServerResponse, url: URL, m: RegExpExecArray, body: Buffer): void {
    const auth = String(req.headers.authorization ?? '');
    state.gitAuthorizations.push(auth);
    const basic = /^Basic (.+)$/i.exec(auth)?.[1];
    const [username, ...rest] = basic ? Buffer.from(basic, 'base64').toString('utf8').split(':') : [''];
    const user = username ? state.tokens.get(rest.join(':')) : undefined;
    if (!user) {
      res.writeHead(401, { 'www-authenticate': 'Basic realm="GitLab"', 'content-type': 'text/plain' });
      res.end('HTTP Basic: Access denied.\n');
      return;
    }
    const p = state.projects.find((x) => x.owner.username === decodeURIComponent(m[1]!) && x.path === decodeURIComponent(m[2]!));
    if (!p || (p.owner.id !== user.id && p.visibility !== 'public')) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('The project you were looking for could not be found or you don\'t have permission to view it.\n');
      return;
    }
    const view = { git: p.git, refs: new Map([...p.refs].map(([branch, oid]) => [`refs/heads/${branch}`, oid])) };
    if (m[3] === 'git-upload-pack') {
      res.writeHead(200, { 'content-type': 'application/x-git-upload-pack-result', 'cache-control': 'no-cache' });
      res.end(uploadPack(p.git, body));
      return;
    }
    if (m[3] === 'info/refs') {
      if (url.searchParams.get('service') === 'git-upload-pack') {
        res.writeHead(200, { 'content-type': 'application/x-git-upload-pack-advertisement', 'cache-control': 'no-cache' });
        res.end(uploadAdvertisement(view, p.default_branch ?? 'main'));
        return;
      }
      if (url.searchParams.get('service') !== 'git-receive-pack') {
        res.writeHead(403, { 'content-type': 'text/plain' });
        res.end('this emulator serves git-receive-pack only\n');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/x-git-receive-pack-advertisement', 'cache-control': 'no-cache' });
      res.end(advertisement(view));
      return;
    }
    const result = receivePack(view, body);
    if (result.record) state.pushes.push(result.record);
    if (result.updated) {
      for (const [ref, oid] of view.refs) p.refs.set(ref.replace(/^refs\/heads\//, ''), oid);
      if (!p.default_branch) p.default_branch = [...p.refs.keys()][0] ?? null;
      p.last_activity_at = now();
    }
    res.writeHead(200, { 'content-type': 'application/x-git-receive-pack-result', 'cache-control': 'no-cache' });
    res.end(result.report);
  }

  function handle(req: http.IncomingMessage, res: http.ServerResponse, body: Buffer): void {
    const url = new URL(req.url ?? '/', base(req));
    const method = req.method ?? 'GET';
    state.requests.push(`${method} ${url.pathname}`);
    const gitPath = /^\/([^/]+)\/([^/]+)\.git\/(info\/refs|git-receive-pack|git-upload-pack)$/.exec(url.pathname);
    if (gitPath) return smartHttp(req, res, url, gitPath, body);
    if (!url.pathname.startsWith('/api/v4/')) throw new HttpError(404, { error: '404 Not Found' });
    state.apiBodies.push({ request: `${method} ${url.pathname}`, bytes: body.length });
    const token = (req.headers['private-token'] as string | undefined) ?? /^Bearer\s+(.+)$/i.exec(String(req.headers.authorization ?? ''))?.[1];
    const user = token ? state.tokens.get(token) : undefined;
    if (!user) throw new HttpError(401, { message: '401 Unauthorized' });

    rateHeaders();
    if (state.rateLimit.remaining <= 0) throw new HttpError(429, 'Retry later\n');
    state.rateLimit.remaining -= 1;

    const segments = url.pathname.slice('/api/v4/'.length).split('/');
    const route = segments.join('/');

    if (method === 'GET' && route === 'user') return send(req, res, 200, { id: user.id, username: user.username, name: user.name, state: 'active' });
    if (method === 'GET' && route === 'projects') {
      const mine = state.projects.filter((p) => url.searchParams.get('membership') === 'true' ? p.owner.id === user.id : p.owner.id === user.id || p.visibility === 'public').sort((a, b) => a.id - b.id);
      const { page, headers } = offsetPage(req, url, mine.map((p) => projectJson(req, p)));
      return send(req, res, 200, page, headers);
    }
    if (method === 'POST' && route === 'projects') {
      const input = json(body);
      const name = String(input.name ?? input.path ?? '');
      const path = String(input.path ?? name.replace(/[^A-Za-z0-9_.-]+/g, '-')).toLowerCase();
      const errors: Record<string, string[]> = {};
      if (!name) errors.name = ["can't be blank"];
      else if (!/^[\p{L}\p{N}_][\p{L}\p{N}_.+\- ]*$/u.test(name)) errors.name = ["can contain only letters, digits, emoji, '_', '.', '+', dashes, or spaces. It must start with a letter, digit, emoji, or '_'."];
      if (!/^[A-Za-z0-9_]([A-Za-z0-9_.-]*[A-Za-z0-9_])?$/.test(path) || /\.(git|atom)$/.test(path)) errors.path = ["can contain only letters, digits, '_', '-' and '.'. Cannot start with '-', end in '.git' or end in '.atom'"];
      const mine = state.projects.filter((p) => p.owner.id === user.id);
      if (mine.some((p) => p.name.toLowerCase() === name.toLowerCase())) errors.name = ['has already been taken'];
      if (mine.some((p) => p.path === path)) errors.path = ['has already been taken'];
      if (Object.keys(errors).length) throw new HttpError(400, { message: errors });
      const p = state.addProject(user, name, {}, { visibility: (input.visibility as GitlabProject['visibility']) ?? 'private' });
      p.path = path;
      p.description = typeof input.description === 'string' ? input.description : null;
      p.topics = Array.isArray(input.topics) ? input.topics.map(String) : [];
      if (input.initialize_with_readme === true) {
        const branch = String(input.default_branch ?? 'main');
        const tree = p.git.applyChanges(null, [{ path: 'README.md', mode: '100644', sha: p.git.writeBlob(Buffer.from(`# ${name}\n`)) }]);
        p.refs.set(branch, p.git.writeCommit(tree, [], 'Initial commit', signature(user)));
        p.default_branch = branch;
      }
      return send(req, res, 201, projectJson(req, p));
    }
    if (segments[0] !== 'projects' || !segments[1]) throw new HttpError(404, { error: '404 Not Found' });
    const p = findProject(user, segments[1]);
    const rest = segments.slice(2);
    const sub = rest.join('/');

    if (method === 'DELETE' && sub === '') {
      // doc/api/projects.md "Delete a project": Owner role (the creator of a personal project);
      // answers 202 {"message":"202 Accepted"} (deletion runs in the background, or marks the
      // project for delayed deletion where that is on); others get 403 "403 Forbidden"
      if (p.owner.id !== user.id) throw new HttpError(403, { message: '403 Forbidden' });
      if (state.delayedDeletion && p.markedForDeletionOn === null) {
        p.markedForDeletionOn = now().slice(0, 10);
        p.name = `${p.name}-deletion_scheduled-${p.id}`;
        p.path = `${p.path}-deletion_scheduled-${p.id}`;
        return send(req, res, 202, { message: '202 Accepted' });
      }
      state.projects.splice(state.projects.indexOf(p), 1);
      return send(req, res, 202, { message: '202 Accepted' });
    }
    if (method === 'GET' && sub === '') {
      // statistics=true adds repository_size (bytes) for members with Reporter access or more (doc/api/projects.md)
      const statistics = url.searchParams.get('statistics') === 'true' ? { statistics: { repository_size: repositorySize(p) } } : {};
      // license=true adds `license_url` and `license` {key, name, nickname, html_url, source_url},
      // null without a detected licence (doc/api/projects.md "Get a single project"; lib/api/entities/project.rb)
      const license = url.searchParams.get('license') === 'true' ? { license_url: p.license ? `${base(req)}/${p.owner.username}/${p.path}/-/blob/${p.default_branch ?? 'main'}/LICENSE` : null, license: p.license } : {};
      return send(req, res, 200, { ...projectJson(req, p), ...statistics, ...license });
    }

    if (method === 'GET' && sub === 'repository/tree') {
      const head = headTree(p, url.searchParams.get('ref'));
      if (!head) throw notFound('Tree');
      const path = url.searchParams.get('path') ?? '';
      const start = path ? p.git.lookup(head.tree, path) : { sha: head.tree, type: 'tree' };
      if (!start || start.type !== 'tree') throw notFound('Tree');
      const recursive = url.searchParams.get('recursive') === 'true';
      const items = p.git.flatten(start.sha, path ? `${path}/` : '', recursive).map((e: FlatEntry) => ({
        id: e.sha,
        name: e.path.split('/').pop(),
        type: e.type,
        path: e.path,
        mode: e.mode,
      }));
      if (url.searchParams.get('pagination') === 'keyset') {
        const perPage = Math.min(100, Math.max(1, Number(url.searchParams.get('per_page') ?? 20) || 20));
        const token = url.searchParams.get('page_token');
        const from = token ? items.findIndex((i) => i.id + ':' + i.path === Buffer.from(token, 'base64url').toString()) + 1 : 0;
        const page = items.slice(from, from + perPage);
        const headers: Record<string, string> = {};
        if (from + perPage < items.length && page.length) {
          const next = new URL(url.pathname + url.search, base(req));
          const last = page[page.length - 1]!;
          next.searchParams.set('page_token', Buffer.from(`${last.id}:${last.path}`).toString('base64url'));
          headers.link = `<${next}>; rel="next"`;
        }
        return send(req, res, 200, page, headers);
      }
      const { page, headers } = offsetPage(req, url, items);
      return send(req, res, 200, page, headers);
    }

    if (rest[0] === 'repository' && rest[1] === 'files' && rest[2]) {
      const filePath = decodeURIComponent(rest[2]);
      const raw = rest[3] === 'raw';
      if (method !== 'GET' && method !== 'HEAD') throw new HttpError(405, { message: '405 Method Not Allowed' });
      const head = headTree(p, url.searchParams.get('ref'));
      const e = head ? p.git.lookup(head.tree, filePath) : null;
      if (!head || !e || e.type !== 'blob') throw notFound('File');
      let data = p.git.blob(e.sha)!;
      if (state.corruptBlobs.has(e.sha)) data = Buffer.concat([data.subarray(0, Math.max(0, data.length - 1)), Buffer.from('X')]);
      const last = lastCommitFor(p, head.commit, filePath);
      const sha256 = createHash('sha256').update(p.git.blob(e.sha)!).digest('hex');
      if (raw) {
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'content-length': String(data.length), 'x-gitlab-blob-id': e.sha, ...rateHeaders() });
        return void res.end(method === 'HEAD' ? undefined : data);
      }
      const headers = {
        'x-gitlab-blob-id': e.sha,
        'x-gitlab-commit-id': head.commit,
        'x-gitlab-content-sha256': sha256,
        'x-gitlab-encoding': 'base64',
        'x-gitlab-execute-filemode': String(e.mode === '100755'),
        'x-gitlab-file-name': filePath.split('/').pop()!,
        'x-gitlab-file-path': filePath,
        'x-gitlab-last-commit-id': last,
        'x-gitlab-ref': url.searchParams.get('ref') ?? p.default_branch ?? '',
        'x-gitlab-size': String(data.length),
      };
      return send(req, res, 200, {
        file_name: filePath.split('/').pop(),
        file_path: filePath,
        size: data.length,
        encoding: 'base64',
        content_sha256: sha256,
        ref: url.searchParams.get('ref') ?? p.default_branch,
        blob_id: e.sha,
        commit_id: head.commit,
        last_commit_id: last,
        execute_filemode: e.mode === '100755',
        content: data.toString('base64'),
      }, headers);
    }

    if (method === 'GET' && rest[0] === 'repository' && rest[1] === 'blobs' && rest[2] && rest[3] === 'raw') {
      let data = p.git.blob(rest[2]);
      if (!data) throw notFound('Blob');
      if (state.corruptBlobs.has(rest[2])) data = Buffer.concat([data.subarray(0, Math.max(0, data.length - 1)), Buffer.from('X')]);
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(data.length), ...rateHeaders() });
      return void res.end(data);
    }

    if (method === 'GET' && sub === 'repository/commits') {
      const head = headTree(p, url.searchParams.get('ref_name'));
      if (!head) return send(req, res, 200, []);
      const path = url.searchParams.get('path');
      const shas = p.git.history(head.commit).filter((sha) => {
        if (!path) return true;
        const c = p.git.commit(sha)!;
        const mine = p.git.lookup(c.tree, path)?.sha ?? null;
        const parent = c.parents[0] ? (p.git.lookup(p.git.commit(c.parents[0])!.tree, path)?.sha ?? null) : null;
        return mine !== parent;
      });
      const { page, headers } = offsetPage(req, url, shas.map((s) => commitJson(p, s)));
      return send(req, res, 200, page, headers);
    }

    if (method === 'POST' && sub === 'repository/commits') {
      const input = json(body);
      const branch = String(input.branch ?? '');
      if (!branch) throw new HttpError(400, { error: 'branch is missing' });
      if (typeof input.commit_message !== 'string') throw new HttpError(400, { error: 'commit_message is missing' });
      const actions = Array.isArray(input.actions) ? (input.actions as Record<string, unknown>[]) : [];
      if (!actions.length) throw new HttpError(400, { error: 'actions is missing' });
      const startName = typeof input.start_branch === 'string' ? input.start_branch : branch;
      const parent = p.refs.get(branch) ?? p.refs.get(startName) ?? null;
      if (!parent && p.refs.size > 0 && input.start_branch) throw new HttpError(400, { message: 'You can only create or edit files when you are on a branch' });
      const baseTree = parent ? p.git.commit(parent)!.tree : null;
      const changes: { path: string; mode: string; sha: string | null }[] = [];
      let additions = 0;
      for (const a of actions) {
        const path = String(a.file_path ?? '');
        const existing = baseTree ? p.git.lookup(baseTree, path) : null;
        const content = typeof a.content === 'string' ? (a.encoding === 'base64' ? Buffer.from(a.content, 'base64') : Buffer.from(a.content, 'utf8')) : Buffer.alloc(0);
        switch (a.action) {
          case 'create':
            if (existing) throw new HttpError(400, { message: 'A file with this name already exists' });
            break;
          case 'update':
            if (!existing) throw new HttpError(400, { message: "A file with this name doesn't exist" });
            break;
          case 'delete':
            if (!existing) throw new HttpError(400, { message: "A file with this name doesn't exist" });
            changes.push({ path, mode: '100644', sha: null });
            continue;
          default:
            throw new HttpError(400, { error: 'actions[0][action] does not have a valid value' });
        }
        if (path.split('/').some((s) => s === '..' || s === '')) throw new HttpError(400, { message: 'Path cannot include directory traversal' });
        additions += content.toString('utf8').split('\n').length;
        changes.push({ path, mode: a.execute_filemode === true ? '100755' : '100644', sha: p.git.writeBlob(content) });
      }
      const tree = p.git.applyChanges(baseTree, changes);
      const sha = p.git.writeCommit(tree, parent ? [parent] : [], input.commit_message, signature(user));
      p.refs.set(branch, sha);
      if (!p.default_branch) p.default_branch = branch;
      p.last_activity_at = now();
      return send(req, res, 201, commitJson(p, sha, { additions, deletions: 0, total: additions }));
    }
    throw new HttpError(404, { error: '404 Not Found' });
  }

  return {
    url: await (options.faults?.install(server, 'api', ERROR_SHAPES.gitlab), listenOnLoopback(server)),
    state,
    close: () => closeServers(server),
  };
}
