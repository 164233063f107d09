import { describe, expect, it } from 'vitest';
import { ChangeTurns } from './change-turns.js';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('ChangeTurns', () => {
  it('lets each turn go only once every turn taken before it has ended, whatever order they end in', async () => {
    const turns = new ChangeTurns();
    const [a, b, c, d] = [turns.take(), turns.take(), turns.take(), turns.take()];
    const went: string[] = [];
    void d.wait().then(() => went.push('d'));
    void c.wait().then(() => went.push('c'));
    await a.wait();
    went.push('a');
    // b ends before its turn came (an ignored file): c still waits for a
    b.end();
    await tick();
    expect(went).toEqual(['a']);
    a.end();
    await tick();
    expect(went).toEqual(['a', 'c']);
    c.end();
    c.end(); // idempotent
    await tick();
    expect(went).toEqual(['a', 'c', 'd']);
  });
});
