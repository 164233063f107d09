// InvenioRDM search: the instance's own index of the user's records and drafts.
// `GET /api/user/records?q=…&page=…&size=…` is invenio-drafts-resources search_user_records →
// service.search_drafts, limited to the identity's own (and shared) records; `q` is an
// OpenSearch query_string over every field (invenio-records-resources args.py,
// queryparser/query.py; docs/targets/invenio.md).
import { badRequest } from '../../errors.js';
import { SEARCH_PAGE_SIZE } from '../../search.js';
import type { ResourceNode, SearchPage, SearchQuery, TargetContext } from '../../target.js';
import type { InvenioApi, InvenioRecord } from './api.js';

/** The search's result window (invenio-records-resources services/records/config.py `default_max_results`). */
export const INVENIO_MAX_RESULTS = 10_000;

/** One page of the records the index finds; `hits.total` says whether another page exists. */
export async function searchUserRecords(api: InvenioApi, ctx: TargetContext, query: SearchQuery, toNode: (record: InvenioRecord) => ResourceNode, service = 'InvenioRDM'): Promise<SearchPage> {
  const last = INVENIO_MAX_RESULTS / SEARCH_PAGE_SIZE;
  // past the window the instance answers 400 "Invalid pagination parameters." (params/pagination.py)
  if (query.page > last) throw badRequest(`${service} answers only the first ${INVENIO_MAX_RESULTS} results of a search (page ${last}); narrow it down.`);
  const answer = await api.client.json<{ hits?: { hits?: InvenioRecord[]; total?: number | { value?: number } } }>('user/records', {
    token: api.account.token,
    signal: ctx.signal,
    searchParams: { q: query.text, page: query.page, size: SEARCH_PAGE_SIZE, sort: 'bestmatch' },
  });
  const hits = answer.hits?.hits ?? [];
  // a plain number on InvenioRDM; OpenSearch's own `{value}` shape on some versions
  const total = answer.hits?.total;
  const count = typeof total === 'number' ? total : (total?.value ?? 0);
  return { nodes: hits.map(toNode), next: query.page * SEARCH_PAGE_SIZE < count && query.page < last ? query.page + 1 : null, method: 'index' };
}
