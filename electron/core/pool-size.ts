/**
 * A worker pool's size: its environment setting when given (a whole number, at least
 * `least`), else `fallback`. Pools are sized, not switched on and off like a fast path
 * (docs/performance.md, "Worker pools are sized, not switched").
 */
export function poolSizeFrom(setting: string | undefined, least: number, fallback: number): number {
  if (setting === undefined || setting === '') return fallback;
  return Math.max(least, Math.floor(Number(setting)) || least);
}
