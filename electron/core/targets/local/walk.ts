// Reading the workspace tree: one readdir (with file types) per folder, no stat per file,
// so listing 100,000 files stays fast. Symbolic links are never followed (see README.md).

import type { Dirent } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { throwIfAborted } from '../../errors.js';

export interface WalkNode {
  name: string;
  /** '/'-joined path relative to the workspace root */
  relativePath: string;
  /** the parent's relative path; '' at the top level */
  parentPath: string;
  isFolder: boolean;
  /** made on first use: a listing of 100,000 files never needs them */
  readonly absolutePath: string;
}

class Node implements WalkNode {
  private absolute: string | null = null;

  constructor(
    readonly name: string,
    readonly relativePath: string,
    readonly parentPath: string,
    readonly isFolder: boolean,
    private readonly absoluteDir: string,
  ) {}

  get absolutePath(): string {
    // the folder is already absolute and normal, the name a single segment: no path.join needed
    this.absolute ??= insideFolder(this.absoluteDir, this.name);
    return this.absolute;
  }
}

/** Names Ferry's own writer uses for files in progress (and claims, see writer.ts; partials kept for a resume, resumable-write.ts); never shown as resources. */
export const TEMP_NAME = /^\.ferry-(?:(?:\d+-)?[0-9a-f]{16,}\.part|claim-[0-9a-f]{24}|resume-[0-9a-f]{32}\.part)$/;

export function joinRelative(parentPath: string, name: string): string {
  return parentPath === '' ? name : `${parentPath}/${name}`;
}

/** Regular files and real folders directly in `absoluteDir`, sorted by name (code units, locale-free). */
export async function childrenOf(absoluteDir: string, relativeDir: string): Promise<WalkNode[]> {
  const prefix = relativeDir === '' ? '' : `${relativeDir}/`;
  return (await readFolder(absoluteDir)).map((dirent) => new Node(dirent.name, prefix + dirent.name, relativeDir, dirent.isDirectory(), absoluteDir));
}

/**
 * The regular files and real folders directly in `absoluteDir` as Dirents, sorted by name:
 * the listing's lean form of childrenOf (it needs no WalkNode per file).
 */
export async function readFolder(absoluteDir: string): Promise<Dirent[]> {
  let dirents: Dirent[];
  try {
    dirents = await readdir(absoluteDir, { withFileTypes: true });
  } catch (error) {
    // A folder removed or made unreadable while walking is simply empty now.
    if (isCode(error, 'ENOENT', 'ENOTDIR', 'EACCES', 'EPERM')) return [];
    throw error;
  }
  const kept: Dirent[] = [];
  for (const dirent of dirents) {
    // Symlinks (and sockets, FIFOs, devices) are skipped: Dirent types come from lstat semantics.
    if (dirent.isDirectory()) kept.push(dirent);
    else if (dirent.isFile() && !(dirent.name.charCodeAt(0) === 0x2e && TEMP_NAME.test(dirent.name))) kept.push(dirent);
  }
  return kept.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** `name` inside the absolute folder `dir` (already normal: no path.join needed). */
export function insideFolder(dir: string, name: string): string {
  return dir.endsWith(path.sep) ? dir + name : dir + path.sep + name;
}

/**
 * Everything below `absoluteDir`, depth first in name order (a folder, then its contents,
 * then its next sibling), iteratively so deep trees cannot overflow the stack.
 */
export async function* walkTree(absoluteDir: string, relativeDir: string, signal?: AbortSignal): AsyncGenerator<WalkNode> {
  const stack: WalkNode[] = (await childrenOf(absoluteDir, relativeDir)).reverse();
  while (stack.length > 0) {
    const node = stack.pop()!;
    yield node;
    if (node.isFolder) {
      throwIfAborted(signal);
      const children = await childrenOf(node.absolutePath, node.relativePath);
      for (let i = children.length - 1; i >= 0; i -= 1) stack.push(children[i]!);
    }
  }
}

/**
 * The same nodes as walkTree, a folder's children at a time (with the folder they are in):
 * a listing then pays one await per folder rather than one per file.
 */
export async function* walkFolders(absoluteDir: string, relativeDir: string, signal?: AbortSignal): AsyncGenerator<{ parentPath: string; nodes: WalkNode[] }> {
  let current: { parentPath: string; nodes: WalkNode[]; next: number } = { parentPath: relativeDir, nodes: await childrenOf(absoluteDir, relativeDir), next: 0 };
  const pending: { parentPath: string; nodes: WalkNode[]; next: number }[] = [];
  // depth first in name order: emit a run of siblings up to (and including) the next folder,
  // then that folder's children, then the rest of the run
  for (;;) {
    const { nodes } = current;
    let end = current.next;
    while (end < nodes.length && !nodes[end]!.isFolder) end++;
    const stop = Math.min(end + 1, nodes.length);
    if (stop > current.next) yield { parentPath: current.parentPath, nodes: nodes.slice(current.next, stop) };
    current.next = stop;
    const folder = end < nodes.length ? nodes[end]! : null;
    if (folder) {
      throwIfAborted(signal);
      pending.push(current);
      current = { parentPath: folder.relativePath, nodes: await childrenOf(folder.absolutePath, folder.relativePath), next: 0 };
      continue;
    }
    const parent = pending.pop();
    if (!parent) return;
    current = parent;
  }
}

export function isCode(error: unknown, ...codes: string[]): boolean {
  return typeof error === 'object' && error !== null && codes.includes((error as NodeJS.ErrnoException).code ?? '');
}
