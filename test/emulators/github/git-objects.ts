import { createHash } from 'node:crypto';

/**
 * A real git object database in memory: blob, tree and commit ids are computed exactly as git
 * computes them (sha1 over "<type> <size>\0<body>"), so ids the emulators report can be checked
 * against `git hash-object` and against what Ferry computes on its side. Shared by the GitHub
 * and GitLab emulators.
 */
export type GitObject =
  | { type: 'blob'; data: Buffer }
  | { type: 'tree'; entries: TreeEntry[] }
  | { type: 'commit'; tree: string; parents: string[]; message: string; author: Signature; committer: Signature };

export interface TreeEntry {
  /** git's own spelling: "100644", "100755", "120000", "40000", "160000" */
  mode: string;
  name: string;
  sha: string;
}

export interface Signature {
  name: string;
  email: string;
  /** ISO 8601 */
  date: string;
}

export interface FlatEntry {
  path: string;
  /** API spelling: trees are "040000" */
  mode: string;
  type: 'blob' | 'tree' | 'commit';
  sha: string;
  size?: number;
}

export class GitStore {
  readonly objects = new Map<string, GitObject>();
  /** each object's body exactly as git stores it, for serving packs */
  private readonly bodies = new Map<string, Buffer>();

  private put(type: string, body: Buffer, object: GitObject): string {
    const sha = createHash('sha1').update(`${type} ${body.length}\0`).update(body).digest('hex');
    this.objects.set(sha, object);
    this.bodies.set(sha, body);
    return sha;
  }

  /** An object's type and body as git stores it, or null. */
  raw(sha: string): { type: GitObject['type']; body: Buffer } | null {
    const object = this.objects.get(sha);
    const body = this.bodies.get(sha);
    return object && body ? { type: object.type, body } : null;
  }

  writeBlob(data: Buffer): string {
    return this.put('blob', data, { type: 'blob', data });
  }

  writeTree(entries: TreeEntry[]): string {
    // git sorts tree entries by name, comparing a tree's name as if it ended with "/"
    const key = (e: TreeEntry) => (e.mode === '40000' ? `${e.name}/` : e.name);
    const sorted = [...entries].sort((a, b) => Buffer.compare(Buffer.from(key(a)), Buffer.from(key(b))));
    const body = Buffer.concat(sorted.flatMap((e) => [Buffer.from(`${e.mode} ${e.name}\0`), Buffer.from(e.sha, 'hex')]));
    return this.put('tree', body, { type: 'tree', entries: sorted });
  }

  writeCommit(tree: string, parents: string[], message: string, author: Signature, committer: Signature = author): string {
    const line = (s: Signature) => `${s.name} <${s.email}> ${Math.floor(Date.parse(s.date) / 1000)} +0000`;
    const text = [`tree ${tree}`, ...parents.map((p) => `parent ${p}`), `author ${line(author)}`, `committer ${line(committer)}`, '', message].join('\n');
    return this.put('commit', Buffer.from(text), { type: 'commit', tree, parents, message, author, committer });
  }

  /**
   * An object as git stores it (type and body, e.g. from a pushed packfile), parsed into this
   * store's form; null when the body is not a well-formed object of that type or would not
   * keep its id.
   */
  writeRaw(type: 'blob' | 'tree' | 'commit', body: Buffer): string | null {
    const expected = createHash('sha1').update(`${type} ${body.length}\0`).update(body).digest('hex');
    let sha: string;
    if (type === 'blob') sha = this.writeBlob(body);
    else if (type === 'tree') {
      const entries: TreeEntry[] = [];
      let at = 0;
      while (at < body.length) {
        const space = body.indexOf(0x20, at);
        const nul = body.indexOf(0, space);
        if (space < 0 || nul < 0 || nul + 21 > body.length) return null;
        entries.push({ mode: body.subarray(at, space).toString(), name: body.subarray(space + 1, nul).toString('utf8'), sha: body.subarray(nul + 1, nul + 21).toString('hex') });
        at = nul + 21;
      }
      sha = this.writeTree(entries);
    } else {
      const text = body.toString('utf8');
      const split = text.indexOf('\n\n');
      if (split < 0) return null;
      const headers = text.slice(0, split).split('\n');
      const tree = headers.find((h) => h.startsWith('tree '))?.slice(5);
      const parents = headers.filter((h) => h.startsWith('parent ')).map((h) => h.slice(7));
      const person = (prefix: string): Signature | null => {
        const m = new RegExp(`^${prefix} (.*) <(.*)> (\\d+) \\+0000$`).exec(headers.find((h) => h.startsWith(`${prefix} `)) ?? '');
        return m ? { name: m[1]!, email: m[2]!, date: new Date(Number(m[3]) * 1000).toISOString() } : null;
      };
      const author = person('author');
      const committer = person('committer');
      if (!tree || !author || !committer) return null;
      sha = this.writeCommit(tree, parents, text.slice(split + 2), author, committer);
    }
    return sha === expected ? sha : null;
  }

  blob(sha: string): Buffer | null {
    const o = this.objects.get(sha);
    return o?.type === 'blob' ? o.data : null;
  }

  tree(sha: string): TreeEntry[] | null {
    const o = this.objects.get(sha);
    return o?.type === 'tree' ? o.entries : null;
  }

  commit(sha: string): Extract<GitObject, { type: 'commit' }> | null {
    const o = this.objects.get(sha);
    return o?.type === 'commit' ? o : null;
  }

  /** Every entry below a tree, depth-first, paths relative to it (like `ls-tree -r -t`). */
  flatten(treeSha: string, prefix = '', recursive = true): FlatEntry[] {
    const out: FlatEntry[] = [];
    for (const e of this.tree(treeSha) ?? []) {
      const path = prefix + e.name;
      if (e.mode === '40000') {
        out.push({ path, mode: '040000', type: 'tree', sha: e.sha });
        if (recursive) out.push(...this.flatten(e.sha, `${path}/`, true));
      } else if (e.mode === '160000') {
        out.push({ path, mode: e.mode, type: 'commit', sha: e.sha });
      } else {
        out.push({ path, mode: e.mode, type: 'blob', sha: e.sha, size: this.blob(e.sha)?.length ?? 0 });
      }
    }
    return out;
  }

  /** The entry at `path` below a tree, or null. */
  lookup(treeSha: string, path: string): FlatEntry | null {
    const parts = path.split('/').filter(Boolean);
    let current = treeSha;
    for (let i = 0; i < parts.length; i++) {
      const e = this.tree(current)?.find((x) => x.name === parts[i]);
      if (!e) return null;
      if (i === parts.length - 1) {
        if (e.mode === '40000') return { path, mode: '040000', type: 'tree', sha: e.sha };
        if (e.mode === '160000') return { path, mode: e.mode, type: 'commit', sha: e.sha };
        return { path, mode: e.mode, type: 'blob', sha: e.sha, size: this.blob(e.sha)?.length ?? 0 };
      }
      if (e.mode !== '40000') return null;
      current = e.sha;
    }
    return { path: '', mode: '040000', type: 'tree', sha: treeSha };
  }

  /**
   * A new tree: `base` (or empty) with `changes` applied. A change with sha null deletes the path.
   * Paths may be nested ("a/b/c.txt"); intermediate trees are created as git does.
   */
  applyChanges(base: string | null, changes: { path: string; mode: string; sha: string | null }[]): string {
    const root = new Map<string, TreeEntry>();
    for (const e of base ? (this.tree(base) ?? []) : []) root.set(e.name, e);
    const byHead = new Map<string, { path: string; mode: string; sha: string | null }[]>();
    for (const change of changes) {
      const [head, ...rest] = change.path.split('/').filter(Boolean);
      if (!head) continue;
      if (rest.length === 0) {
        if (change.sha === null) root.delete(head);
        else root.set(head, { mode: change.mode === '040000' ? '40000' : change.mode, name: head, sha: change.sha });
      } else {
        const list = byHead.get(head) ?? [];
        list.push({ ...change, path: rest.join('/') });
        byHead.set(head, list);
      }
    }
    for (const [head, list] of byHead) {
      const existing = root.get(head);
      const subBase = existing && existing.mode === '40000' ? existing.sha : null;
      const sub = this.applyChanges(subBase, list);
      if ((this.tree(sub) ?? []).length === 0) root.delete(head);
      else root.set(head, { mode: '40000', name: head, sha: sub });
    }
    return this.writeTree([...root.values()]);
  }

  /** First-parent history from a commit, newest first. */
  history(commitSha: string | null): string[] {
    const out: string[] = [];
    let current = commitSha;
    while (current) {
      out.push(current);
      current = this.commit(current)?.parents[0] ?? null;
    }
    return out;
  }

  /** Whether `ancestor` is reachable from `descendant` (fast-forward check). */
  isAncestor(ancestor: string, descendant: string): boolean {
    const seen = new Set<string>();
    const stack = [descendant];
    while (stack.length) {
      const sha = stack.pop() as string;
      if (sha === ancestor) return true;
      if (seen.has(sha)) continue;
      seen.add(sha);
      stack.push(...(this.commit(sha)?.parents ?? []));
    }
    return false;
  }
}
