import { describe, expect, it } from 'vitest';
import { CancelledError } from '../errors.js';
import { OrderedPipeline } from './ordered-pipeline.js';

/** A task that ends when the test says so, and notes how many ran at once. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('OrderedPipeline', () => {
  it('reports results in entry order, whatever order the work ends in', async () => {
    const reported: string[] = [];
    const pipeline = new OrderedPipeline<string>({ files: 4, bytes: 1000 }, (r) => reported.push(r));
    const gates = [gate(), gate(), gate()];
    await pipeline.start('a', 1, async () => (await gates[0]!.opened, 'a'));
    pipeline.done('folder');
    await pipeline.start('b', 1, async () => (await gates[1]!.opened, 'b'));
    await pipeline.start('c', 1, async () => (await gates[2]!.opened, 'c'));
    gates[2]!.open();
    gates[1]!.open();
    await tick();
    expect(reported).toEqual([]);
    gates[0]!.open();
    await pipeline.finish();
    expect(reported).toEqual(['a', 'folder', 'b', 'c']);
  });

  it('keeps at most `files` tasks, and at most `bytes` of sizes, running at once; a larger one runs alone', async () => {
    let running = 0;
    let most = 0;
    const task = async () => {
      running++;
      most = Math.max(most, running);
      await tick();
      running--;
      return null;
    };
    const byCount = new OrderedPipeline<null>({ files: 3, bytes: 1e9 }, () => undefined);
    for (let i = 0; i < 20; i++) await byCount.start(String(i), 1, task);
    await byCount.finish();
    expect(most).toBe(3);

    most = 0;
    const byBytes = new OrderedPipeline<null>({ files: 10, bytes: 100 }, () => undefined);
    for (let i = 0; i < 20; i++) await byBytes.start(String(i), 40, task);
    await byBytes.finish();
    expect(most).toBe(2);

    most = 0;
    const large = new OrderedPipeline<null>({ files: 10, bytes: 100 }, () => undefined);
    await large.start('small', 10, task);
    await large.start('large', 500, task);
    await large.start('after', 10, task);
    await large.finish();
    expect(most).toBe(1);
  });

  it('takes new limits from the next start on (setLimits), and says whether a task was started', async () => {
    let running = 0;
    let most = 0;
    const gates = Array.from({ length: 4 }, gate);
    const pipeline = new OrderedPipeline<null>({ files: 1, bytes: 0 }, () => undefined);
    const task = (i: number) => async () => {
      running++;
      most = Math.max(most, running);
      await gates[i]!.opened;
      running--;
      return null;
    };
    expect(await pipeline.start('a', 1, task(0))).toBe(true);
    pipeline.setLimits({ files: 3, bytes: 100 });
    await pipeline.start('b', 1, task(1));
    await pipeline.start('c', 1, task(2));
    expect(running).toBe(3);
    for (const g of gates) g.open();
    await pipeline.finish();
    expect(most).toBe(3);
    const failing = new OrderedPipeline<null>({ files: 1, bytes: 0 }, () => undefined);
    await failing.start('x', 1, async () => Promise.reject(new Error('hard')));
    expect(await failing.start('y', 1, task(3))).toBe(false);
    await expect(failing.finish()).rejects.toThrow('hard');
  });

  it('never runs two tasks of the same key at once', async () => {
    const events: string[] = [];
    const pipeline = new OrderedPipeline<null>({ files: 8, bytes: 1e9 }, () => undefined);
    for (const name of ['first', 'second']) {
      await pipeline.start('same', 1, async () => {
        events.push(`${name} starts`);
        await tick();
        await tick();
        events.push(`${name} ends`);
        return null;
      });
    }
    await pipeline.finish();
    expect(events).toEqual(['first starts', 'first ends', 'second starts', 'second ends']);
  });

  it('stops on the first hard failure, and throws it only once everything started has ended', async () => {
    const reported: string[] = [];
    const pipeline = new OrderedPipeline<string>({ files: 4, bytes: 1e9 }, (r) => reported.push(r));
    const slow = gate();
    let slowEnded = false;
    await pipeline.start('slow', 1, async () => {
      await slow.opened;
      slowEnded = true;
      return 'slow';
    });
    await pipeline.start('bad', 1, async () => {
      throw new Error('the server is gone');
    });
    await tick();
    expect(pipeline.stopped).toBe(true);
    let started = false;
    await pipeline.start('later', 1, async () => ((started = true), 'later'));
    const finished = pipeline.finish().then(
      () => 'resolved',
      (error: Error) => error.message,
    );
    await tick();
    expect(slowEnded).toBe(false);
    slow.open();
    expect(await finished).toBe('the server is gone');
    expect(slowEnded).toBe(true);
    expect(started).toBe(false);
    expect(reported).toEqual(['slow']);
  });

  it('honours cancellation: a start waiting for room throws at once, nothing new starts, finish throws once the running task ended', async () => {
    const controller = new AbortController();
    const reported: string[] = [];
    const pipeline = new OrderedPipeline<string>({ files: 1, bytes: 1e9 }, (r) => reported.push(r), controller.signal);
    const running = gate();
    let runningEnded = false;
    await pipeline.start('first', 1, async () => {
      await running.opened;
      runningEnded = true;
      return 'first';
    });
    let secondRan = false;
    const waiting = pipeline.start('second', 1, async () => ((secondRan = true), 'second')).then(
      () => 'started',
      (error: unknown) => error,
    );
    await tick();
    controller.abort();
    expect(await waiting).toBeInstanceOf(CancelledError);
    expect(pipeline.stopped).toBe(true);
    await expect(pipeline.start('third', 1, async () => 'third')).rejects.toBeInstanceOf(CancelledError);
    const finished = pipeline.finish().then(() => 'resolved', (error: unknown) => error);
    await tick();
    expect(runningEnded).toBe(false);
    running.open();
    expect(await finished).toBeInstanceOf(CancelledError);
    expect(runningEnded).toBe(true);
    expect(secondRan).toBe(false);
    // the task that was under way still reports, in order, through the one completion hook
    expect(reported).toEqual(['first']);
  });

  it('runs work ahead (startAhead) within the limits and before later tasks of its key, with no result, and its failure not a hard one', async () => {
    const reported: string[] = [];
    const events: string[] = [];
    const pipeline = new OrderedPipeline<string>({ files: 2, bytes: 1e9 }, (r) => reported.push(r));
    const folder = gate();
    await pipeline.startAhead('folder/', async () => {
      events.push('ahead starts');
      await folder.opened;
      events.push('ahead ends');
    });
    await pipeline.start('a', 1, async () => (events.push('a'), 'a'));
    await pipeline.start('folder/', 0, async () => (events.push('folder'), 'folder'));
    // two running (the work ahead holds a place): a third waits for room
    let thirdStarted = false;
    const third = pipeline.start('b', 1, async () => ((thirdStarted = true), 'b'));
    await tick();
    expect(thirdStarted).toBe(false);
    folder.open();
    await third;
    await pipeline.startAhead('x', async () => {
      throw new Error('found again at its own turn');
    });
    await pipeline.start('c', 1, async () => 'c');
    await pipeline.finish();
    expect(events).toEqual(['ahead starts', 'a', 'ahead ends', 'folder']);
    expect(reported).toEqual(['a', 'folder', 'b', 'c']);
    expect(pipeline.stopped).toBe(false);
  });

  it('hands each entry to its preparation twice its files in flight ahead; one at a time, none', async () => {
    async function* letters(): AsyncGenerator<string> {
      yield* ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
    }
    for (const [files, firstTakenAfter] of [[2, 5], [1, 0]] as const) {
      const prepared: string[] = [];
      const pipeline = new OrderedPipeline<null>({ files, bytes: 1e9 }, () => undefined);
      const taken: string[] = [];
      for await (const letter of pipeline.withPreparation(letters(), async (next) => void prepared.push(next))) {
        if (taken.length === 0) expect(prepared).toHaveLength(firstTakenAfter);
        taken.push(letter);
      }
      expect(taken).toEqual(['a', 'b', 'c', 'd', 'e', 'f', 'g']);
      expect(prepared).toEqual(files > 1 ? taken : []);
    }
  });
});
