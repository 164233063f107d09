// Listing the workspace: the flat collection (everything, depth first in name order) and one
// folder's children. Apart from local-target.ts so the listing's speed work stays in one place.

import type { ResourceNode } from '../../target.js';
import { encodeLocalId } from './ids.js';
import { childrenOf, walkFolders, type WalkNode } from './walk.js';

/** Everything below the workspace root, a folder's run of children at a time. */
export async function* listWorkspace(root: string, signal?: AbortSignal): AsyncGenerator<ResourceNode[]> {
  for await (const { parentPath, nodes } of walkFolders(root, '', signal)) {
    const container = parentPath === '' ? null : encodeLocalId(parentPath);
    yield nodes.map((node) => nodeIn(container, node));
  }
}

/** The direct children of one folder (`relativePath` '' is the root). */
export async function listFolder(absolutePath: string, relativePath: string): Promise<ResourceNode[]> {
  const container = relativePath === '' ? null : encodeLocalId(relativePath);
  return (await childrenOf(absolutePath, relativePath)).map((node) => nodeIn(container, node));
}

/** A walked node as a resource, its folder's id already known (one encoding per folder, not per file). */
function nodeIn(container: string | null, node: WalkNode): ResourceNode {
  return {
    kind: node.isFolder ? 'container' : 'item',
    kind_name: node.isFolder ? 'folder' : 'file',
    id: encodeLocalId(node.relativePath),
    container,
    title: node.name,
  };
}
