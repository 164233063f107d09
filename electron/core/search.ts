// Search for targets without an index of their own (a folder, the offline library, an
// rclone remote): a name filter over list(), paged, and bounded so that a search of a huge
// tree answers in bounded time and says it stopped early instead of walking on.
import { foldName } from './name-fold.js';
import type { ResourceNode, SearchPage, SearchQuery } from './target.js';

/** Rows per page, for every target: the HTTP layer's `Link: rel="next"` follows from it. */
export const SEARCH_PAGE_SIZE = 50;

/** The most nodes one name search looks at; past it the page says `truncated`. */
export const SEARCH_WALK_LIMIT = 200_000;

/**
 * Case-insensitive substring match, on NFC forms (a macOS name arrives decomposed, what a
 * user types composed): "surv" matches "Survey.csv", "é" matches "Café".
 */
export function nameMatcher(text: string): (title: string) => boolean {
  const wanted = foldName(text);
  return (title) => foldName(title).includes(wanted);
}

export interface NameSearchOptions {
  pageSize?: number;
  walkLimit?: number;
}

/**
 * Page `query.page` of the nodes whose titles match, in list order. Stops at the first
 * match past the page (so `next` is exact) or after `walkLimit` nodes (then `truncated`,
 * and `next` is null: a later page could not be found either). Leaving the loop early
 * returns the iterator, which lets the target close what it opened.
 */
export async function pageOfNameMatches(nodes: AsyncIterable<ResourceNode>, query: SearchQuery, options: NameSearchOptions = {}): Promise<SearchPage> {
  const pageSize = options.pageSize ?? SEARCH_PAGE_SIZE;
  const walkLimit = options.walkLimit ?? SEARCH_WALK_LIMIT;
  const matches = nameMatcher(query.text);
  const skip = (query.page - 1) * pageSize;
  const page: ResourceNode[] = [];
  let found = 0;
  let seen = 0;
  for await (const node of nodes) {
    if (++seen > walkLimit) return { nodes: page, next: null, method: 'names', truncated: true };
    if (!matches(node.title)) continue;
    if (found++ < skip) continue;
    if (page.length === pageSize) return { nodes: page, next: query.page + 1, method: 'names' };
    page.push(node);
  }
  return { nodes: page, next: null, method: 'names' };
}
