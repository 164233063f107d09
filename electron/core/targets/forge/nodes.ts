import type { Entry, ResourceNode } from '../../target.js';
import { encodeForgeId } from './ids.js';

/**
 * How a git forge's repositories and trees appear as Ferry resources: a repository (GitHub) or
 * project (GitLab) is a top-level folder; the folders and files of its default branch sit below
 * it, each id naming the repository and the path, so ids stay valid across repository renames.
 */
export function repositoryNode(prefix: string, repoId: number, title: string): ResourceNode {
  return { kind: 'container', kind_name: 'folder', id: encodeForgeId(prefix, repoId), container: null, title };
}

/** A folder ("tree") or file ("blob") of a repository, its path relative to the repository root. */
export function treeItemNode(prefix: string, repoId: number, item: { path: string; type: string }): ResourceNode {
  const parent = item.path.includes('/') ? item.path.slice(0, item.path.lastIndexOf('/')) : '';
  return {
    kind: item.type === 'tree' ? 'container' : 'item',
    kind_name: item.type === 'tree' ? 'folder' : 'file',
    id: encodeForgeId(prefix, repoId, item.path),
    container: encodeForgeId(prefix, repoId, parent),
    title: basename(item.path),
  };
}

export function folderEntry(path: string): Entry {
  return { path, kind: 'folder', size: null, mtime: null, hashes: {}, open: () => Promise.reject(new Error(`"${path}" is a folder.`)) };
}

export const basename = (path: string) => path.slice(path.lastIndexOf('/') + 1);
