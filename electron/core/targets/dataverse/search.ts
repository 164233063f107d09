// Dataverse search: the installation's Solr index, as the My Data search the listing already
// uses, given the text as `mydata_search_term` (DataRetrieverAPI → SolrSearchServiceBean,
// edismax over title, description, authors, keywords, file names…; docs/targets/dataverse.md).
// Not `/api/search`: with a token that one searches every published dataset of the
// installation as well as the user's drafts, while My Data keeps to the datasets the user has
// a role on — the same set the listing shows.
import { SEARCH_PAGE_SIZE } from '../../search.js';
import type { ResourceNode, SearchPage, SearchQuery, TargetContext } from '../../target.js';
import { MYDATA_PAGE, type DataverseApi } from './api.js';
import { datasetId } from './ids.js';

/** My Data pages per Ferry page: its page size is fixed at 10 (SearchConstants.NUM_SOLR_DOCS_TO_RETRIEVE). */
const MYDATA_PAGES = SEARCH_PAGE_SIZE / MYDATA_PAGE;

/** One page of the user's datasets the index finds for the text, best match first. */
export async function searchMyData(api: DataverseApi, ctx: TargetContext, query: SearchQuery): Promise<SearchPage> {
  const nodes: ResourceNode[] = [];
  const first = (query.page - 1) * MYDATA_PAGES + 1;
  for (let page = first; page < first + MYDATA_PAGES; page++) {
    const { items, more } = await api.myDataPage(page, ctx.signal, query.text);
    for (const item of items) nodes.push({ kind: 'container', kind_name: 'folder', id: datasetId(item.entity_id), container: null, title: item.name });
    if (!more) return { nodes, next: null, method: 'index' };
  }
  return { nodes, next: query.page + 1, method: 'index' };
}
