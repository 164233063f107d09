import { describe, expect, it } from 'vitest';
import { matchesQueryString } from './query-string.js';

describe('matchesQueryString (query_string, default operator OR, standard analyzer)', () => {
  const texts = ['Coral Survey 2024', 'raw-data/reef_notes.csv'];
  it.each([
    ['survey', true],
    ['SURVEY', true],
    ['surv', false],
    ['surv*', true],
    ['soil survey', true],
    ['soil', false],
    ['"coral survey"', true],
    ['"survey coral"', false],
    ['raw-data', true],
    ['*', true],
  ])('%s → %s', (q, expected) => {
    expect(matchesQueryString(q, texts)).toBe(expected);
  });
});
