// Type-ahead in a list, as in every file manager: letters typed within a second of each
// other spell the start of a name, and the cursor goes to the first row (from the cursor on,
// wrapping) whose name starts so. Typing one letter again moves to the next such row.

export const TYPE_AHEAD_PAUSE_MS = 1000;

export function createTypeAhead(now: () => number = Date.now) {
  let typed = '';
  let last = 0;
  return {
    /** the index to move to, or -1 when no row matches */
    next(key: string, titles: readonly string[], cursorIndex: number): number {
      const time = now();
      typed = time - last > TYPE_AHEAD_PAUSE_MS ? key : typed + key;
      last = time;
      const needle = typed.toLocaleLowerCase();
      // one letter (or the same letter again): look from the next row, so repeats cycle
      const repeats = [...needle].every((c) => c === needle[0]);
      const prefix = repeats ? needle[0]! : needle;
      const start = repeats ? cursorIndex + 1 : Math.max(0, cursorIndex);
      for (let step = 0; step < titles.length; step++) {
        const index = (start + step) % titles.length;
        if (titles[index]!.toLocaleLowerCase().startsWith(prefix)) return index;
      }
      return -1;
    },
  };
}
