import { normalMode, objectId, treeBody, type TreeEntry } from './git-objects.js';

/** One entry of a repository's tree as any host lists it, flat, path from the root. */
export interface FlatItem {
  path: string;
  type: 'blob' | 'tree' | 'commit';
  mode: string;
  oid: string;
}

export interface NewTree {
  oid: string;
  body: Buffer;
}

/**
 * The trees of a new commit: the head's tree with `changes` (path → blob) laid over it. Only
 * the trees on a changed path are rebuilt; every other subtree keeps its id, which the host
 * already has, so the push carries the new blobs, these trees and nothing else.
 */
export function buildTrees(existing: Iterable<FlatItem>, changes: Map<string, { mode: string; oid: string }>): { root: string; trees: NewTree[] } {
  const dirty = new Set<string>(['']);
  for (const path of changes.keys()) for (const dir of parentsOf(path)) dirty.add(dir);
  const children = new Map<string, Map<string, TreeEntry>>();
  for (const dir of dirty) children.set(dir, new Map());
  for (const item of existing) {
    const dir = parentOf(item.path);
    const level = children.get(dir);
    if (level) level.set(nameOf(item.path), { mode: normalMode(item.mode, item.type), name: nameOf(item.path), oid: item.oid });
  }
  for (const [path, blob] of changes) children.get(parentOf(path))!.set(nameOf(path), { mode: blob.mode, name: nameOf(path), oid: blob.oid });
  // deepest first, so each folder's new id is known before its parent is written
  const order = [...dirty].sort((a, b) => depth(b) - depth(a));
  const trees: NewTree[] = [];
  const ids = new Map<string, string>();
  for (const dir of order) {
    const body = treeBody([...children.get(dir)!.values()]);
    const oid = objectId('tree', body);
    ids.set(dir, oid);
    trees.push({ oid, body });
    if (dir !== '') children.get(parentOf(dir))!.set(nameOf(dir), { mode: '40000', name: nameOf(dir), oid });
  }
  return { root: ids.get('')!, trees };
}

const parentOf = (path: string) => (path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '');
const nameOf = (path: string) => path.slice(path.lastIndexOf('/') + 1);
const depth = (path: string) => (path === '' ? 0 : path.split('/').length);

function parentsOf(path: string): string[] {
  const parts = path.split('/');
  return parts.slice(0, -1).map((_, i) => parts.slice(0, i + 1).join('/'));
}
