import { describe, expect, it } from 'vitest';
import { withLookAhead } from './look-ahead.js';

async function* numbers(count: number, log: string[]): AsyncGenerator<number> {
  try {
    for (let i = 0; i < count; i++) {
      log.push(`read ${i}`);
      yield i;
    }
  } finally {
    log.push('source ended');
  }
}

describe('withLookAhead', () => {
  it('hands each item to `ahead` `distance` items before it is yielded, every item in order', async () => {
    const log: string[] = [];
    const seen: number[] = [];
    for await (const n of withLookAhead(numbers(5, log), 2, async (m) => void log.push(`ahead ${m}`))) {
      log.push(`took ${n}`);
      seen.push(n);
    }
    expect(seen).toEqual([0, 1, 2, 3, 4]);
    expect(log).toEqual([
      'read 0', 'ahead 0', 'read 1', 'ahead 1', 'read 2', 'ahead 2', 'took 0',
      'read 3', 'ahead 3', 'took 1', 'read 4', 'ahead 4', 'took 2',
      'source ended', 'took 3', 'took 4',
    ]);
  });

  it('waits for `ahead` before reading further, and ends the source when the consumer stops', async () => {
    const log: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const ahead = async (m: number) => {
      log.push(`ahead ${m}`);
      if (m === 1) await held;
    };
    const iterator = withLookAhead(numbers(10, log), 1, ahead)[Symbol.asyncIterator]();
    const first = iterator.next();
    await new Promise((resolve) => setImmediate(resolve));
    expect(log).toEqual(['read 0', 'ahead 0', 'read 1', 'ahead 1']);
    release();
    expect(await first).toEqual({ value: 0, done: false });
    await iterator.return?.(undefined);
    expect(log.at(-1)).toBe('source ended');
    expect(log).not.toContain('read 3');
  });
});
