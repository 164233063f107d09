// Collections ("dataverses") as containers: a collection holds its direct sub-collections and
// datasets, through `GET /api/dataverses/{id}/contents` (Dataverses.java `listContent`,
// docs/targets/dataverse.md). That answer names a sub-collection but not a dataset (JsonPrinter
// `json(Dataset)` carries ids and the persistent id, no title), so each dataset's title is read
// from its latest version, the files left out (`excludeFiles`).
import { FerryError } from '../../errors.js';
import { normalizeTimestamp } from '../../time.js';
import type { ResourceInfo, ResourceNode } from '../../target.js';
import type { DataverseApi } from './api.js';
import { collectionId, datasetId } from './ids.js';

export function collectionNode(id: number, title: string, container: string | null): ResourceNode {
  return { kind: 'container', kind_name: 'folder', id: collectionId(id), container, title };
}

/** The user's own collections (a role on them, My Data), for the top level. */
export async function* myCollectionNodes(api: DataverseApi, signal: AbortSignal): AsyncIterable<ResourceNode> {
  for await (const item of api.myCollections(signal)) yield collectionNode(item.entity_id, item.name, null);
}

export async function* collectionChildren(api: DataverseApi, id: number, signal: AbortSignal): AsyncIterable<ResourceNode> {
  const parent = collectionId(id);
  for (const item of await api.contents(id, signal)) {
    if (item.type === 'dataverse') {
      yield collectionNode(item.id, item.title, parent);
      continue;
    }
    yield { kind: 'container', kind_name: 'folder', id: datasetId(item.id), container: parent, title: await datasetTitle(api, item.id, persistentIdOf(item), signal) };
  }
}

export async function collectionDetail(api: DataverseApi, id: number, signal: AbortSignal): Promise<ResourceInfo> {
  const collection = await api.collection(id, signal);
  return {
    ...collectionNode(collection.id, collection.name, null),
    date_created: normalizeTimestamp(collection.creationDate),
    date_modified: null,
    hashes: {},
    extra: { provider: 'dataverse', type: 'collection', installation: api.account.url, alias: collection.alias, parent_id: collection.ownerId ?? null, html_url: `${api.account.url}dataverse/${encodeURIComponent(collection.alias)}` },
  };
}

/**
 * A dataset's title from its latest version; one the user may not read (a draft of someone
 * else's listed by an older installation) is named by its persistent id rather than left out.
 */
async function datasetTitle(api: DataverseApi, id: number, persistentId: string, signal: AbortSignal): Promise<string> {
  try {
    const version = await api.latestVersion(id, signal, false, true);
    const field = version.metadataBlocks?.citation?.fields?.find((f) => f.typeName === 'title');
    return typeof field?.value === 'string' && field.value.trim() ? field.value : `Dataset ${persistentId}`;
  } catch (error) {
    if (error instanceof FerryError && (error.status === 403 || error.status === 404)) return `Dataset ${persistentId}`;
    throw error;
  }
}

function persistentIdOf(item: { id: number; protocol?: string; authority?: string; separator?: string; identifier?: string }): string {
  return item.protocol && item.authority && item.identifier ? `${item.protocol}:${item.authority}${item.separator ?? '/'}${item.identifier}` : String(item.id);
}
