// Zenodo search: Zenodo's own index of the user's depositions. The legacy list
// `GET /api/deposit/depositions` is zenodo-rdm's search_user_records (legacy/resources.py),
// whose `q` goes to the search engine as a query_string over every field of the user's
// drafts and records, with `page` and `size` (at most 100) beside it
// (invenio-records-resources resources/records/args.py; docs/targets/zenodo.md).
import { badRequest } from '../../errors.js';
import { SEARCH_PAGE_SIZE } from '../../search.js';
import type { ResourceNode, SearchPage, SearchQuery, TargetContext } from '../../target.js';
import type { Deposition, ZenodoApi } from './api.js';

/**
 * One page of depositions the index finds, in its order (best match first). The answer is
 * a bare array with no total, so a full page means there may be another: the next page is
 * offered, and comes back empty if there was none.
 */
/** The search's result window (invenio-records-resources services/records/config.py `default_max_results`). */
export const ZENODO_MAX_RESULTS = 10_000;

export async function searchDepositions(api: ZenodoApi, ctx: TargetContext, query: SearchQuery, toNode: (deposition: Deposition) => ResourceNode): Promise<SearchPage> {
  const last = ZENODO_MAX_RESULTS / SEARCH_PAGE_SIZE;
  // past the window Zenodo answers 400 "Invalid pagination parameters." (params/pagination.py)
  if (query.page > last) throw badRequest(`Zenodo answers only the first ${ZENODO_MAX_RESULTS} results of a search (page ${last}); narrow it down.`);
  const depositions = await api.client.json<Deposition[]>('deposit/depositions', {
    token: ctx.token,
    signal: ctx.signal,
    searchParams: { q: query.text, page: query.page, size: SEARCH_PAGE_SIZE },
    headers: { accept: 'application/json' },
  });
  return { nodes: depositions.map(toNode), next: depositions.length >= SEARCH_PAGE_SIZE && query.page < last ? query.page + 1 : null, method: 'index' };
}
