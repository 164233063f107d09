import type yazl from 'yazl';

// yazl 3.3.1 looks for "the first entry not yet written" by scanning its entries array from
// the start on every pump, which makes a ZIP of n entries cost O(n²): 66,000 small files
// took over a minute. Every entry before the first unfinished one stays finished, so the
// scan may start there. This wraps yazl's (internal) entries array in a view that hides
// the finished prefix from that scan, and shows the whole array again from the moment
// yazl walks it to write the central directory (its `forEach`), after which it also counts
// all entries for the end records. If yazl's internals ever differ, nothing is changed.

interface InternalEntry {
  state: number;
}

export function makeEntryPumpLinear(zip: yazl.ZipFile): void {
  const internal = zip as unknown as { entries?: unknown };
  const all = internal.entries;
  if (!Array.isArray(all) || all.length !== 0) return;
  const entries = all as InternalEntry[];
  const FILE_DATA_DONE = 3; // yazl's Entry.FILE_DATA_DONE
  let base = 0;
  let whole = false;

  internal.entries = new Proxy(entries, {
    get(target, key) {
      if (!whole) {
        if (key === 'length') {
          while (base < target.length && target[base]!.state >= FILE_DATA_DONE) base++;
          return target.length - base;
        }
        if (typeof key === 'string' && /^\d+$/.test(key)) return target[base + Number(key)];
        if (key === 'forEach') whole = true;
      }
      const value: unknown = Reflect.get(target, key);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
