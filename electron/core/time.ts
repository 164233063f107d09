// Timestamps in the contract's one format: ISO 8601 UTC, exactly six fraction digits, `Z`.

/** From a Date (millisecond precision; the last three digits are zero). */
export function formatDate(date: Date): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** From nanoseconds since the epoch (bigint stat), keeping real microseconds. */
export function formatNanoseconds(ns: bigint): string {
  const micros = ns / 1000n;
  const seconds = micros / 1_000_000n;
  const fraction = (micros % 1_000_000n + 1_000_000n) % 1_000_000n;
  const whole = new Date(Number(seconds - (micros < 0n && fraction !== 0n ? 1n : 0n)) * 1000).toISOString();
  return `${whole.slice(0, 19)}.${fraction.toString().padStart(6, '0')}Z`;
}

/**
 * From any ISO-like string a remote sends (`...T02:59:28.146904`, `...Z`, `...+00:00`, no
 * fraction, nine fraction digits). A string without a zone is UTC. Null for empty input.
 */
export function normalizeTimestamp(value: string | null | undefined): string | null {
  if (!value) return null;
  const match = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}:\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:?\d{2})?$/.exec(value.trim());
  if (!match) {
    const parsed = new Date(value);
    return Number.isNaN(parsed.getTime()) ? null : formatDate(parsed);
  }
  const [, day, clock, fraction = '', zone = 'Z'] = match;
  const micros = (fraction + '000000').slice(0, 6);
  const base = new Date(`${day}T${clock}${zone === 'Z' ? 'Z' : zone.length === 5 ? `${zone.slice(0, 3)}:${zone.slice(3)}` : zone}`);
  if (Number.isNaN(base.getTime())) return null;
  return `${base.toISOString().slice(0, 19)}.${micros}Z`;
}
