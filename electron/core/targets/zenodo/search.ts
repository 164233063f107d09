// Zenodo search: Zenodo's own index of the user's depositions. The legacy list
// `GET /api/deposit/depositions` is zenodo-rdm's search_user_records (legacy/resources.py),
// whose `q` goes to the search engine as a query_string over every field of the user's
// drafts and records, with `page` and `size` (at most 100) beside it
// (invenio-records-resources resources/records/args.py; docs/targets/zenodo.md).
import { SEARCH_PAGE_SIZE } from '../../search.js';
import type { ResourceNode, SearchPage, SearchQuery, TargetContext } from '../../target.js';
import type { Deposition, ZenodoApi } from './api.js';

/**
 * One page of depositions the index finds, in its order (best match first). The answer is
 * a bare array with no total, so a full page means there may be another: the next page is
 * offered, and comes back empty if there was none.
 */
export async function searchDepositions(api: ZenodoApi, ctx: TargetContext, query: SearchQuery, toNode: (deposition: Deposition) => ResourceNode): Promise<SearchPage> {
  const depositions = await api.client.json<Deposition[]>('deposit/depositions', {
    token: ctx.token,
    signal: ctx.signal,
    searchParams: { q: query.text, page: query.page, size: SEARCH_PAGE_SIZE },
    headers: { accept: 'application/json' },
  });
  return { nodes: depositions.map(toNode), next: depositions.length >= SEARCH_PAGE_SIZE ? query.page + 1 : null, method: 'index' };
}
