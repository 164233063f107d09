import { readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { badRequest, notFound } from './errors.js';
import { writeFileAtomic } from './jobs/atomic-file.js';
import type { TargetRegistry } from './registry.js';
import type { Target } from './target.js';

/**
 * Local folders of the user's choosing (a file manager's "places"), each served as a target
 * of its own beside the workspace's `local`: `local-<slug>`, named after the folder.
 *
 * Invariants:
 * - The list lives in `<data dir>/local-roots.json` (mode 0600, written atomically); a
 *   change is on disk before it is answered, and the registry then holds exactly the
 *   targets the file names.
 * - A root is an absolute path to an existing folder (symbolic links resolved), not inside
 *   the data directory (which holds the access key and job records), not the workspace
 *   (already `local`), and not chosen twice. Every refusal is a sentence; none carries the
 *   path, as no FerryError does (errors.ts).
 * - A root whose folder has gone since it was chosen stays listed: its listing says what is
 *   wrong, and the person decides whether to remove it.
 */
export interface LocalRoot {
  /** the target's name, e.g. "local-data" */
  name: string;
  /** what the UI calls it, e.g. "Data" */
  label: string;
  /** the absolute path, as resolved when chosen */
  path: string;
}

export const LOCAL_ROOTS_FILE = 'local-roots.json';

export interface LocalRootsOptions {
  dataDir: string;
  workspace: string;
  registry: TargetRegistry;
  /** builds the target serving one root (ferry-core passes the local target's factory) */
  createTarget(root: LocalRoot): Target;
}

export class LocalRoots {
  private roots: LocalRoot[] = [];
  private readonly file: string;
  /** one change at a time, so two quick PUTs cannot both take the same slug */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: LocalRootsOptions) {
    this.file = path.join(options.dataDir, LOCAL_ROOTS_FILE);
  }

  /** Reads the file and registers each root; an unreadable file is said once and leaves none. */
  async load(): Promise<void> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      console.warn(`Your chosen local folders could not be read (${(error as NodeJS.ErrnoException).code ?? 'error'}); only the workspace is shown.`);
      return;
    }
    try {
      const parsed = JSON.parse(text) as { roots?: unknown };
      const roots = Array.isArray(parsed.roots) ? parsed.roots : [];
      for (const entry of roots as Partial<LocalRoot>[]) {
        if (typeof entry?.name !== 'string' || !/^local-[a-z0-9-]{1,40}$/.test(entry.name)) continue;
        if (typeof entry.path !== 'string' || !path.isAbsolute(entry.path) || typeof entry.label !== 'string') continue;
        if (this.options.registry.find(entry.name)) continue;
        const root: LocalRoot = { name: entry.name, label: entry.label, path: entry.path };
        this.options.registry.register(this.options.createTarget(root));
        this.roots.push(root);
      }
    } catch {
      console.warn('Your chosen local folders could not be read (the file is not valid JSON); only the workspace is shown.');
    }
  }

  list(): LocalRoot[] {
    return this.roots.map((root) => ({ ...root }));
  }

  /**
   * Adds a folder, or renames it when it is already there (keyed by its resolved path, so
   * PUT is idempotent). Answers the root as stored.
   */
  put(rawPath: string, rawLabel?: string): Promise<LocalRoot> {
    return this.serially(async () => {
      const resolved = await this.validate(rawPath);
      const label = cleanLabel(rawLabel) ?? (path.basename(resolved) || resolved);
      const existing = this.roots.find((root) => root.path === resolved);
      if (existing) {
        const renamed = { ...existing, label };
        await this.persist(this.roots.map((root) => (root === existing ? renamed : root)));
        this.reregister(renamed);
        return { ...renamed };
      }
      const root: LocalRoot = { name: this.freeName(label, resolved), label, path: resolved };
      const target = this.options.createTarget(root);
      await this.persist([...this.roots, root]);
      this.options.registry.register(target);
      return { ...root };
    });
  }

  /** Forgets a chosen folder (the folder itself is left alone). */
  remove(name: string): Promise<void> {
    return this.serially(async () => {
      const root = this.roots.find((r) => r.name === name);
      if (!root) throw notFound('That local folder is not in the list (it may have been removed already).', 'target_not_found');
      await this.persist(this.roots.filter((r) => r !== root));
      const target = this.options.registry.unregister(root.name);
      await target?.close?.();
    });
  }

  private async validate(rawPath: string): Promise<string> {
    const given = rawPath.trim();
    if (!given) throw badRequest('Enter the folder to add, e.g. /home/alice/Data.');
    if (!path.isAbsolute(given)) throw badRequest('Enter the whole path of the folder, starting at the top (e.g. /home/alice/Data or C:\\Data).');
    let resolved: string;
    try {
      resolved = await realpath(given);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw badRequest(code === 'EACCES' ? 'Ferry may not open that folder (permission denied).' : 'There is no folder at that path; check its spelling.');
    }
    if (!(await stat(resolved)).isDirectory()) throw badRequest('That path is a file; choose the folder that holds it.');
    const dataDir = await realpath(this.options.dataDir).catch(() => path.resolve(this.options.dataDir));
    if (isInside(resolved, dataDir)) throw badRequest("That folder is inside Ferry's own data folder, which only Ferry may use; choose another.");
    const workspace = await realpath(this.options.workspace).catch(() => path.resolve(this.options.workspace));
    if (resolved === workspace) throw badRequest('That folder is the workspace, which Ferry already shows as "Local folders".');
    return resolved;
  }

  private freeName(label: string, resolved: string): string {
    const base = `local-${slug(label) || slug(path.basename(resolved)) || 'folder'}`;
    for (let n = 1; ; n++) {
      const candidate = n === 1 ? base : `${base}-${n}`;
      if (!this.options.registry.find(candidate) && !this.roots.some((r) => r.name === candidate)) return candidate;
    }
  }

  private reregister(root: LocalRoot): void {
    const old = this.options.registry.unregister(root.name);
    void old?.close?.();
    this.options.registry.register(this.options.createTarget(root));
    this.roots = this.roots.map((r) => (r.name === root.name ? root : r));
  }

  private async persist(roots: LocalRoot[]): Promise<void> {
    await writeFileAtomic(this.file, `${JSON.stringify({ roots }, null, 2)}\n`, 0o600);
    this.roots = roots;
  }

  private serially<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => undefined);
    return run;
  }
}

function cleanLabel(label: string | undefined): string | null {
  const clean = (label ?? '').replace(/\s+/g, ' ').trim();
  if (!clean) return null;
  if (clean.length > 80) throw badRequest('Keep the name under 80 characters.');
  return clean;
}

function slug(text: string): string {
  return text
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 32)
    .replace(/-+$/, '');
}

function isInside(child: string, parent: string): boolean {
  const relative = path.relative(parent, child);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

