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
  absolutePath: string;
}

/** Names Ferry's own writer uses for files in progress; never shown as resources. */
export const TEMP_NAME = /^\.ferry-(?:\d+-)?[0-9a-f]{16,}\.part$/;

export function joinRelative(parentPath: string, name: string): string {
  return parentPath === '' ? name : `${parentPath}/${name}`;
}

/** Regular files and real folders directly in `absoluteDir`, sorted by name (code units, locale-free). */
export async function childrenOf(absoluteDir: string, relativeDir: string): Promise<WalkNode[]> {
  let dirents: Dirent[];
  try {
    dirents = await readdir(absoluteDir, { withFileTypes: true });
  } catch (error) {
    // A folder removed or made unreadable while walking is simply empty now.
    if (isCode(error, 'ENOENT', 'ENOTDIR', 'EACCES', 'EPERM')) return [];
    throw error;
  }
  const nodes: WalkNode[] = [];
  for (const dirent of dirents) {
    // Symlinks (and sockets, FIFOs, devices) are skipped: Dirent types come from lstat semantics.
    const isFolder = dirent.isDirectory();
    if (!isFolder && !dirent.isFile()) continue;
    if (!isFolder && TEMP_NAME.test(dirent.name)) continue;
    nodes.push({
      name: dirent.name,
      relativePath: joinRelative(relativeDir, dirent.name),
      parentPath: relativeDir,
      isFolder,
      absolutePath: path.join(absoluteDir, dirent.name),
    });
  }
  nodes.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return nodes;
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

export function isCode(error: unknown, ...codes: string[]): boolean {
  return typeof error === 'object' && error !== null && codes.includes((error as NodeJS.ErrnoException).code ?? '');
}
