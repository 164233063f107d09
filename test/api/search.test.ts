// GET resources/?q= (docs/api.md "Search") over real HTTP: the local target's name search,
// paging through Link, the capability flag, and the 400/405 sentences.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResourceSummary, TargetDescription } from '../../shared/api.js';
import { fullActions, type Target } from '../../electron/core/target.js';
import { LocalTarget } from '../../electron/core/targets/local/index.js';
import { SEARCH_PAGE_SIZE } from '../../electron/core/search.js';
import { expectApiError, startFerry, writeTree, type Ferry } from './harness.js';

/** Lists, but has no search method. */
function unsearchable(): Target {
  return {
    info: { name: 'shelf', readable_name: 'A shelf', supported_actions: fullActions(false), supported_hash_algorithms: ['sha1'], credential: 'access-key' },
    async *list() {},
    detail: async () => Promise.reject(new Error('not used')),
    read: async () => Promise.reject(new Error('not used')),
    write: async () => Promise.reject(new Error('not used')),
  };
}

let ferry: Ferry;
beforeAll(async () => {
  ferry = await startFerry({ targets: (config) => [new LocalTarget({ root: config.workspace }), unsearchable()] });
  const files: Record<string, string> = { 'Survey 2024/answers.csv': 'a', 'Survey 2024/notes.txt': 'n', 'other/SURVEY-raw.bin': 'r', 'other/unrelated.txt': 'u' };
  for (let i = 0; i < SEARCH_PAGE_SIZE + 5; i++) files[`many/hit-${String(i).padStart(3, '0')}.dat`] = 'x';
  await writeTree(ferry.workspace, files);
});
afterAll(async () => ferry?.close());

const search = (target: string, query: string) => ferry.fetch(`/api_v1/targets/${target}/resources/?${query}`, { headers: ferry.auth() });

describe('GET resources/?q=', () => {
  it('answers the local names that contain the text, case-insensitively, as listing rows', async () => {
    const response = await search('local', 'q=survey');
    expect(response.status).toBe(200);
    expect(response.headers.get('ferry-search-method')).toBe('names');
    expect(response.headers.get('link')).toBeNull();
    const rows = (await response.json()) as ResourceSummary[];
    expect(rows.map((row) => row.title).sort()).toEqual(['SURVEY-raw.bin', 'Survey 2024']);
    const listing = (await (await ferry.fetch('/api_v1/targets/local/resources/', { headers: ferry.auth() })).json()) as ResourceSummary[];
    for (const row of rows) expect(listing).toContainEqual(row);
  });

  it('pages through Link: rel="next" until the last page', async () => {
    const first = await search('local', 'q=HIT-');
    const rows = (await first.json()) as ResourceSummary[];
    expect(rows).toHaveLength(SEARCH_PAGE_SIZE);
    const next = /^<([^>]+)>; rel="next"$/.exec(first.headers.get('link') ?? '')?.[1];
    expect(next).toBeDefined();
    const second = await fetch(next!, { headers: ferry.auth() });
    const more = (await second.json()) as ResourceSummary[];
    expect(more).toHaveLength(5);
    expect(second.headers.get('link')).toBeNull();
    expect(new Set([...rows, ...more].map((row) => row.title)).size).toBe(SEARCH_PAGE_SIZE + 5);
  });

  it('says which targets search, and a target without it answers 405 with a sentence', async () => {
    const targets = (await (await ferry.fetch('/api_v1/targets/')).json()) as TargetDescription[];
    expect(targets.map((t) => [t.name, t.capabilities.search])).toEqual([
      ['local', true],
      ['shelf', false],
    ]);
    const one = (await (await ferry.fetch('/api_v1/target/shelf/')).json()) as TargetDescription;
    expect(one.capabilities).toEqual({ search: false, folder_modes: [] });
    const refused = await expectApiError(await search('shelf', 'q=x'), 405, 'action_not_supported');
    expect(refused.error).toMatch(/does not support search/);
  });

  it('refuses an empty text, a bad page and a search within a container', async () => {
    await expectApiError(await search('local', 'q=%20'), 400, 'bad_request');
    await expectApiError(await search('local', 'q=x&page=0'), 400, 'bad_request');
    await expectApiError(await search('local', 'q=x&page=two'), 400, 'bad_request');
    await expectApiError(await search('local', 'q=x&container=None'), 400, 'bad_request');
  });

  it('is described in openapi.json: q and page on the listing route, capabilities on Target', async () => {
    const spec = (await (await ferry.fetch('/api_v1/openapi.json')).json()) as {
      paths: Record<string, { get?: { parameters?: { name: string; in: string }[] } }>;
      components: { schemas: Record<string, { properties: Record<string, unknown> }> };
    };
    const listing = spec.paths['/api_v1/targets/{target}/resources/']!.get!;
    expect(listing.parameters!.filter((p) => p.in === 'query').map((p) => p.name).sort()).toEqual(['container', 'fields', 'page', 'q']);
    expect(spec.components.schemas.Target!.properties).toHaveProperty('capabilities');
  });

  it('needs the token like the listing', async () => {
    await expectApiError(await ferry.fetch('/api_v1/targets/local/resources/?q=survey'), 401, 'unauthorized');
  });
});
