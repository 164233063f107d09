import { Readable } from 'node:stream';
import type { Entry } from '../../target.js';
import { GIT_SHA1 } from './git-hash.js';
import { folderEntry } from './nodes.js';
import type { ShallowClone } from './shallow-clone.js';
import type { FlatItem } from './tree-builder.js';

/**
 * The entries of a read from a shallow clone: the folder `path` (or the root, '') as `title`,
 * then everything below it. Files report their git blob id; their bytes come from the clone's
 * object store, no request per file.
 */
export async function* cloneEntries(clone: ShallowClone, items: Iterable<FlatItem>, path: string, title: string): AsyncGenerator<Entry> {
  yield folderEntry(title);
  const prefix = path ? `${path}/` : '';
  for (const item of items) {
    if (!item.path.startsWith(prefix)) continue;
    const relative = `${title}/${item.path.slice(prefix.length)}`;
    if (item.type === 'tree') yield folderEntry(relative);
    else if (item.type === 'blob') yield cloneFileEntry(clone, item, relative);
    // submodules (type "commit") point into other repositories: nothing to copy here
  }
}

export function cloneFileEntry(clone: ShallowClone, item: FlatItem, path: string): Entry {
  return { path, kind: 'file', size: null, mtime: null, hashes: { [GIT_SHA1]: item.oid }, open: async () => Readable.from([await clone.blob(item.oid)]) };
}
