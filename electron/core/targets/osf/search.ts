// OSF search: the user's projects and components whose titles contain the text, filtered by
// OSF itself. `GET /v2/users/me/nodes/?filter[title][icontains]=…` — `title` is one of the
// node serializer's filterable_fields, and a CharField's match operators are `contains` and
// `icontains` (osf.io api/nodes/serializers.py, api/base/filters.py; docs/targets/osf.md).
// Files are not searched: OSF filters a file listing (`filter[name]`) only within one folder
// (api/files/serializers.py), and no view lists a user's files across nodes, so a file
// search would be a walk of every folder of every node.
import { SEARCH_PAGE_SIZE } from '../../search.js';
import type { ResourceNode, SearchPage, SearchQuery, TargetContext } from '../../target.js';
import type { OsfClient } from './client.js';
import { nodeId } from './ids.js';
import { nodeToResource, parentGuid } from './mapping.js';

/**
 * Page `query.page` (of SEARCH_PAGE_SIZE) of the matching nodes, oldest first (the order the
 * listing uses, stable across OSF's pages). OSF's pages are 100 long, so page N costs
 * ceil(N·50/100)+1 requests at most; a component keeps its parent as container even when
 * the parent is not among the matches.
 */
export async function searchOsfNodes(client: OsfClient, ctx: TargetContext, query: SearchQuery): Promise<SearchPage> {
  const skip = (query.page - 1) * SEARCH_PAGE_SIZE;
  const nodes: ResourceNode[] = [];
  let seen = 0;
  const params = { sort: 'date_created', 'filter[title][icontains]': query.text };
  for await (const node of client.list('users/me/nodes/', ctx.token, params, ctx.signal)) {
    if (seen++ < skip) continue;
    if (nodes.length === SEARCH_PAGE_SIZE) return { nodes, next: query.page + 1, method: 'index' };
    const parent = parentGuid(node);
    nodes.push(nodeToResource(node, parent ? nodeId(parent) : null));
  }
  return { nodes, next: null, method: 'index' };
}
