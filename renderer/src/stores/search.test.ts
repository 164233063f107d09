import { describe, expect, it } from 'vitest';
import type { SearchPage } from '../api/client.js';
import { summary } from '../test-support.js';
import { createSearchStore } from './search.js';

describe('search store', () => {
  it('shows the newest search: a slower earlier answer never replaces it', async () => {
    const answers: Record<string, (page: SearchPage) => void> = {};
    const search = createSearchStore({
      search: (_target, text, _page, signal) =>
        new Promise<SearchPage>((resolve, reject) => {
          answers[text] = resolve;
          signal?.addEventListener('abort', () => reject(new DOMException('stopped', 'AbortError')));
        }),
    });
    const first = search.run('local', 'old');
    const second = search.run('local', 'new');
    answers.new!({ rows: [summary('n', 'new.txt')], hasNext: true, method: 'names', truncated: false });
    answers.old!({ rows: [summary('o', 'old.txt')], hasNext: false, method: 'names', truncated: false });
    await Promise.all([first, second]);
    const state = search.store.getState();
    expect(state.rows.map((r) => r.title)).toEqual(['new.txt']);
    expect(state).toMatchObject({ text: 'new', page: 1, hasNext: true, status: 'ready' });
  });

  it('says why a search did not run', async () => {
    const search = createSearchStore({ search: async () => Promise.reject(new Error('WebDAV does not support search')) });
    await search.run('webdav', 'x');
    expect(search.store.getState()).toMatchObject({ status: 'error', error: 'WebDAV does not support search', rows: [] });
  });
});
