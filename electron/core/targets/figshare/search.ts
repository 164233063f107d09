// figshare search: figshare's own index of the account's items, `POST /account/articles/search`
// ("Search own articles", user_documentation docs/api/articles.md): `search_for` of at least
// 4 characters, spaces meaning OR over every metadata field (docs/Search/search.md), `page`
// at most 100 and `page_size` at most 100, answered as a bare array (docs/targets/figshare.md).
import { badRequest } from '../../errors.js';
import { SEARCH_PAGE_SIZE } from '../../search.js';
import type { ResourceNode, SearchPage, SearchQuery, TargetContext } from '../../target.js';
import type { ArticleRef, FigshareApi, FigshareArticle } from './api.js';

export const FIGSHARE_MIN_QUERY = 4;
export const FIGSHARE_MAX_PAGE = 100;

/**
 * One page of the account's items the index finds. Refused here, in a sentence, are the
 * queries figshare's docs call invalid, rather than sent. The answer has no total: a full
 * page offers the next one. An item in a project keeps its project as container, read from
 * the project route figshare gives as its `url`.
 */
export async function searchOwnArticles(
  api: FigshareApi,
  ctx: TargetContext,
  query: SearchQuery,
  toNode: (at: ArticleRef, article: FigshareArticle) => ResourceNode,
): Promise<SearchPage> {
  if (query.text.length < FIGSHARE_MIN_QUERY) throw badRequest(`figshare searches only for text of at least ${FIGSHARE_MIN_QUERY} characters; type a longer word.`);
  if (query.page > FIGSHARE_MAX_PAGE) throw badRequest(`figshare answers only the first ${FIGSHARE_MAX_PAGE} pages of a search; narrow it down.`);
  const articles = await api.json<(FigshareArticle & { url?: string })[]>(ctx.token, 'account/articles/search', {
    method: 'POST',
    signal: ctx.signal,
    json: { search_for: query.text, page: query.page, page_size: SEARCH_PAGE_SIZE },
  });
  const nodes = articles.map((article) => {
    const project = /\/account\/projects\/(\d+)\/articles\/\d+$/.exec(article.url ?? '')?.[1];
    return toNode({ id: article.id, project: project === undefined ? null : Number(project) }, article);
  });
  return { nodes, next: articles.length >= SEARCH_PAGE_SIZE && query.page < FIGSHARE_MAX_PAGE ? query.page + 1 : null, method: 'index' };
}
