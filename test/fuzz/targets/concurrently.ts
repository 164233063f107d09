import { Finding } from './verdict.js';

/** entries read at once: writers write a few files concurrently (the local target does), so reads overlap */
export const READ_CONCURRENCY = 3;

/** `work` over `items`, at most `limit` at a time; the first failure is thrown once all have settled. */
export async function forEachConcurrently<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const failures: unknown[] = [];
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++]!;
      try {
        await work(item);
      } catch (error) {
        failures.push(error);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failures.length > 0) throw failures.find((error) => error instanceof Finding) ?? failures[0];
}
