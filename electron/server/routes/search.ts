// The `?q=` branch of GET resources/ (docs/api.md "Search"): one page of a target's search as
// ResourceSummary rows, the listing's shape, with the next page in a `Link` header.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { badRequest, notSupported } from '../../core/errors.js';
import type { ResourceSummary } from '../../../shared/api.js';
import type { ResourceNode, SearchQuery, Target, TargetContext } from '../../core/target.js';
import { baseUrl } from '../urls.js';

/** The listing's row maker (resources.ts toSummary), passed in so this module needs nothing of the listing's. */
export type Summarize = (node: ResourceNode, base: string, targetName: string) => ResourceSummary;

/** Past this a client is paging through noise; services cap deep paging too (Zenodo at 10,000 results). */
export const MAX_SEARCH_PAGE = 1000;
export const MAX_QUERY_LENGTH = 500;

/** The query of `?q=…&page=N`, or a 400 saying what is wrong with it. */
export function searchQueryFrom(query: { q?: string; page?: string; container?: string }): SearchQuery {
  const text = (query.q ?? '').trim();
  if (text === '') throw badRequest('The search text (q) is empty; give some text to search for, or leave q out to list everything.');
  if (text.length > MAX_QUERY_LENGTH) throw badRequest(`The search text (q) is longer than ${MAX_QUERY_LENGTH} characters; shorten it.`);
  if (query.container !== undefined) throw badRequest('A search (q) covers the whole target; leave out container, or list that folder without q.');
  const page = query.page === undefined ? 1 : /^\d{1,6}$/.test(query.page) ? Number(query.page) : NaN;
  if (!(page >= 1 && page <= MAX_SEARCH_PAGE)) throw badRequest(`The page must be a whole number from 1 to ${MAX_SEARCH_PAGE}.`);
  return { text, page };
}

/** 405 with a sentence for a target without search, as for an action whose flag is false. */
export function requireSearch(target: Target): asserts target is Target & Required<Pick<Target, 'search'>> {
  if (!target.search) throw notSupported(`${target.info.readable_name} does not support search (its capabilities.search is false); list its resources instead.`);
}

export async function sendSearch(request: FastifyRequest, reply: FastifyReply, target: Target, ctx: TargetContext, query: SearchQuery, toSummary: Summarize): Promise<FastifyReply> {
  requireSearch(target);
  const page = await target.search(ctx, query);
  const base = baseUrl(request);
  if (page.next !== null && page.next <= MAX_SEARCH_PAGE) {
    const next = new URLSearchParams({ q: query.text, page: String(page.next) });
    reply.header('link', `<${base}/api_v1/targets/${encodeURIComponent(target.info.name)}/resources/?${next}>; rel="next"`);
  }
  reply.header('ferry-search-method', page.method);
  if (page.truncated) reply.header('ferry-search-truncated', 'true');
  return reply
    .type('application/json; charset=utf-8')
    .send(JSON.stringify(page.nodes.map((node) => toSummary(node, base, target.info.name))));
}
