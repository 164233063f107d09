import { describe, expect, it } from 'vitest';
import { poolSizeFrom } from './pool-size.js';

describe('poolSizeFrom', () => {
  it('takes the fallback when nothing is set', () => {
    expect(poolSizeFrom(undefined, 1, 3)).toBe(3);
    expect(poolSizeFrom('', 0, 2)).toBe(2);
  });
  it('takes a whole number set, never fewer than the least', () => {
    expect(poolSizeFrom('4', 1, 2)).toBe(4);
    expect(poolSizeFrom('2.7', 0, 1)).toBe(2);
    expect(poolSizeFrom('0', 0, 2)).toBe(0);
    expect(poolSizeFrom('0', 1, 2)).toBe(1);
    expect(poolSizeFrom('-3', 0, 2)).toBe(0);
    expect(poolSizeFrom('many', 1, 2)).toBe(1);
  });
});
