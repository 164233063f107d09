import type { ResourceInfo, ResourceNode } from '../../target.js';
import { normalizeTimestamp } from '../../time.js';
import { reportedHashes, unescapeHtml, type JsonApiResource } from './client.js';
import { fileNodeId, nodeId, storageId } from './ids.js';

/**
 * OSF JSON:API objects → Ferry resources. Nodes, storages and folders are containers
 * ("folder"); files are items. A file's `extra` is exactly the contract's OSF field list,
 * in its order, with OSF's values.
 */
export const FILE_EXTRA_FIELDS = [
  'last_touched', 'materialized_path', 'current_version', 'provider', 'path', 'current_user_can_comment', 'guid', 'checkout', 'tags', 'size',
] as const;

export const nodeTitle = (node: JsonApiResource): string => unescapeHtml(String(node.attributes.title ?? ''));

export function parentGuid(node: JsonApiResource): string | null {
  return node.relationships?.parent?.data?.id ?? null;
}

export function nodeToResource(node: JsonApiResource, container: string | null): ResourceNode {
  return { kind: 'container', kind_name: 'folder', id: nodeId(node.id), container, title: nodeTitle(node) };
}

export function nodeInfo(node: JsonApiResource): ResourceInfo {
  const a = node.attributes;
  const parent = parentGuid(node);
  return {
    ...nodeToResource(node, parent ? nodeId(parent) : null),
    date_created: timestampOf(a.date_created),
    date_modified: timestampOf(a.date_modified),
    hashes: {},
    extra: {
      guid: node.id,
      category: a.category ?? null,
      description: a.description ?? '',
      public: a.public ?? null,
      tags: a.tags ?? [],
      registration: a.registration ?? false,
      fork: a.fork ?? false,
      current_user_permissions: a.current_user_permissions ?? [],
      parent: parent,
      html: node.links?.html ?? null,
    },
  };
}

export function storageToResource(guid: string, provider: string): ResourceNode {
  return { kind: 'container', kind_name: 'folder', id: storageId(guid, provider), container: nodeId(guid), title: provider };
}

export function storageInfo(guid: string, provider: string): ResourceInfo {
  return { ...storageToResource(guid, provider), date_created: null, date_modified: null, hashes: {}, extra: { provider, node: guid } };
}

/** The Ferry id of a file's or folder's container, from its materialized path. */
export function fileContainer(file: JsonApiResource, guid: string, provider: string): string {
  const depth = String(file.attributes.materialized_path ?? '/').split('/').filter(Boolean).length;
  const parent = file.relationships?.parent_folder?.data?.id;
  return depth <= 1 || !parent ? storageId(guid, provider) : fileNodeId(guid, provider, parent);
}

export function fileToResource(file: JsonApiResource, guid: string, provider: string, container: string): ResourceNode {
  const folder = file.attributes.kind === 'folder';
  return {
    kind: folder ? 'container' : 'item',
    kind_name: folder ? 'folder' : 'file',
    id: fileNodeId(guid, provider, file.id),
    container,
    title: String(file.attributes.name ?? ''),
  };
}

export function fileHashes(file: JsonApiResource): Record<string, string> {
  const hashes: Record<string, string> = {};
  const reported = reportedHashes(file);
  for (const algorithm of ['md5', 'sha256']) {
    const value = reported[algorithm];
    if (typeof value === 'string' && value !== '') hashes[algorithm] = value.toLowerCase();
  }
  return hashes;
}

export function fileInfo(file: JsonApiResource, guid: string, provider: string): ResourceInfo {
  const a = file.attributes;
  const folder = a.kind === 'folder';
  const extra: Record<string, unknown> = {};
  for (const field of FILE_EXTRA_FIELDS) extra[field] = a[field] ?? null;
  if (!('tags' in a)) extra.tags = [];
  return {
    ...fileToResource(file, guid, provider, fileContainer(file, guid, provider)),
    date_created: timestampOf(a.date_created),
    date_modified: timestampOf(a.date_modified),
    hashes: folder ? {} : fileHashes(file),
    extra,
  };
}

/** An OSF date attribute in the contract's format; null when absent or not a date string. */
const timestampOf = (value: unknown): string | null => normalizeTimestamp(typeof value === 'string' ? value : null);

/** A name usable as one Entry path segment ('/' would split it). */
export function safeSegment(name: string): string {
  const cleaned = name.replace(/[/\\\0]/g, '_').trim();
  return cleaned === '' || cleaned === '.' || cleaned === '..' ? '_' : cleaned;
}
