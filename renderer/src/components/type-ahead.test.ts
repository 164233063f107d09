import { describe, expect, it } from 'vitest';
import { createTypeAhead } from './type-ahead.js';

const titles = ['alpha', 'beta', 'Bravo', 'brief', 'charlie'];

describe('type-ahead', () => {
  it('spells a prefix within a pause, case-insensitively', () => {
    let t = 0;
    const ahead = createTypeAhead(() => t);
    expect(ahead.next('b', titles, 0)).toBe(1);
    t += 200;
    expect(ahead.next('r', titles, 1)).toBe(2);
    t += 200;
    expect(ahead.next('i', titles, 2)).toBe(3);
  });

  it('cycles through rows on the same letter, and starts again after a pause', () => {
    let t = 0;
    const ahead = createTypeAhead(() => t);
    expect(ahead.next('b', titles, 0)).toBe(1);
    t += 100;
    expect(ahead.next('b', titles, 1)).toBe(2);
    t += 100;
    expect(ahead.next('b', titles, 2)).toBe(3);
    t += 100;
    expect(ahead.next('b', titles, 3)).toBe(1);
    t += 2000;
    expect(ahead.next('c', titles, 1)).toBe(4);
    t += 100;
    expect(ahead.next('x', titles, 4)).toBe(-1);
  });
});
