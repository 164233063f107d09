import { describe, expect, it } from 'vitest';
import type { ResourceNode } from './target.js';
import { nameMatcher, pageOfNameMatches } from './search.js';

const node = (title: string, i: number): ResourceNode => ({ kind: 'item', kind_name: 'file', id: `n${i}`, container: null, title });

async function* nodes(titles: string[], opened: { closed: boolean }) {
  try {
    for (const [i, title] of titles.entries()) yield node(title, i);
  } finally {
    opened.closed = true;
  }
}

describe('pageOfNameMatches', () => {
  const titles = Array.from({ length: 12 }, (_, i) => (i % 3 === 0 ? `Survey ${i}.csv` : `notes ${i}.txt`));

  it('pages the matches in list order and knows whether another page exists', async () => {
    const opened = { closed: false };
    const first = await pageOfNameMatches(nodes(titles, opened), { text: 'SURVEY', page: 1 }, { pageSize: 3 });
    expect(first.nodes.map((n) => n.title)).toEqual(['Survey 0.csv', 'Survey 3.csv', 'Survey 6.csv']);
    expect(first.next).toBe(2);
    expect(opened.closed).toBe(true);
    const second = await pageOfNameMatches(nodes(titles, { closed: false }), { text: 'survey', page: 2 }, { pageSize: 3 });
    expect(second.nodes.map((n) => n.title)).toEqual(['Survey 9.csv']);
    expect(second.next).toBeNull();
  });

  it('stops after the walk limit and says so', async () => {
    const page = await pageOfNameMatches(nodes(titles, { closed: false }), { text: 'survey', page: 1 }, { pageSize: 10, walkLimit: 5 });
    expect(page.nodes.map((n) => n.title)).toEqual(['Survey 0.csv', 'Survey 3.csv']);
    expect(page).toMatchObject({ next: null, truncated: true, method: 'names' });
  });

  it('matches composed text against decomposed names', () => {
    expect(nameMatcher('café')('Cafe\u0301 Data')).toBe(true);
    expect(nameMatcher('x')('Cafe')).toBe(false);
  });
});
