import { describe, expect, it } from 'vitest';
import { ZipOutput, type LendingSink } from './zip-output.js';

/** A sink whose unsent bytes the test sets, as a socket's writableLength would move. */
function fakeSink(): LendingSink & { writableLength: number; destroyed: boolean } {
  return { writableLength: 0, destroyed: false };
}

const waitFor = async (check: () => boolean) => {
  const deadline = Date.now() + 2000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
};

describe('ZipOutput loans', () => {
  it('copies lent bytes and gives them back at once when no sink was named', () => {
    const output = new ZipOutput();
    const bytes = Buffer.from('lent bytes');
    let given = 0;
    output.writeLent(bytes, () => given++);
    expect(given).toBe(1);
    bytes.fill(0); // the memory is reused: what was written must not change
    expect(String(output.read())).toBe('lent bytes');
  });

  it('gives a loan back only once every byte up to its end has left the stream and the sink', async () => {
    const sink = fakeSink();
    const output = new ZipOutput();
    output.lendTo(sink);
    const given: string[] = [];
    output.write(Buffer.alloc(10));
    output.writeLent(Buffer.alloc(100), () => given.push('a'));
    output.writeLent(Buffer.alloc(100), () => given.push('b'));
    // all 210 bytes still in the stream
    expect(given).toEqual([]);
    // the reader took them all; the sink holds the last 150 (more than loan b's 100)
    output.read();
    sink.writableLength = 150;
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(given).toEqual([]);
    // 100 unsent: loan a (bytes 10-110) is out, b (110-210) is not
    sink.writableLength = 100;
    await waitFor(() => given.length === 1);
    expect(given).toEqual(['a']);
    sink.writableLength = 1;
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(given).toEqual(['a']);
    sink.writableLength = 0;
    await waitFor(() => given.length === 2);
    expect(given).toEqual(['a', 'b']);
  });

  /** 64 bytes lent, taken by the reader, all still held by the sink. */
  function oneLoanInTheSink() {
    const sink = fakeSink();
    const output = new ZipOutput();
    output.lendTo(sink);
    const loan = { given: 0 };
    output.writeLent(Buffer.alloc(64), () => loan.given++);
    output.read();
    sink.writableLength = 64;
    return { sink, output, loan };
  }

  it('gives every loan back when the sink is destroyed (nothing more is sent)', async () => {
    const { sink, loan } = oneLoanInTheSink();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(loan.given).toBe(0);
    sink.destroyed = true;
    await waitFor(() => loan.given === 1);
  });

  it('once destroyed itself, gives loans back when the sink has sent what it holds', async () => {
    const { sink, output, loan } = oneLoanInTheSink();
    output.destroy();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(loan.given).toBe(0);
    sink.writableLength = 0;
    await waitFor(() => loan.given === 1);
    // bytes lent after that are copied: nothing will send them
    output.writeLent(Buffer.alloc(8), () => loan.given++);
    expect(loan.given).toBe(2);
  });
});
