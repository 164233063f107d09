/**
 * `source`'s items in their order, each handed to `ahead` (and its promise awaited) `distance`
 * items before it is yielded: a writer sees what is coming while it still works on what is
 * before it, so a folder a later file needs is made while the files before it are under way
 * (OrderedPipeline.startAhead), not when that file's turn comes and the pipeline waits for it.
 * A write's entries are its plan (plan/write-plan.ts), metadata only: reading ahead opens no
 * bytes. Stopping early (a break) ends `source` too.
 */
export async function* withLookAhead<T>(source: AsyncIterable<T>, distance: number, ahead: (item: T) => Promise<unknown>): AsyncGenerator<T> {
  const waiting: T[] = [];
  for await (const item of source) {
    await ahead(item);
    waiting.push(item);
    if (waiting.length > distance) yield waiting.shift()!;
  }
  yield* waiting;
}
