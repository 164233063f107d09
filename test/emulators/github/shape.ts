/**
 * Differences between a recorded response body and an emulator's: every key the recording has
 * must be there with the same kind of value (null on either side counts as a nullable field).
 * Arrays are compared through their first elements.
 */
export function shapeDiff(recorded: unknown, actual: unknown, at = '$'): string[] {
  const kind = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
  const [k1, k2] = [kind(recorded), kind(actual)];
  if (k1 === 'null' || k2 === 'null') return [];
  if (k1 !== k2) return [`${at}: recorded ${k1}, emulator ${k2}`];
  if (k1 === 'array') {
    const [a, b] = [(recorded as unknown[])[0], (actual as unknown[])[0]];
    return a === undefined || b === undefined ? [] : shapeDiff(a, b, `${at}[0]`);
  }
  if (k1 !== 'object') return [];
  const problems: string[] = [];
  for (const [key, value] of Object.entries(recorded as Record<string, unknown>)) {
    if (!(key in (actual as Record<string, unknown>))) problems.push(`${at}.${key}: missing`);
    else problems.push(...shapeDiff(value, (actual as Record<string, unknown>)[key], `${at}.${key}`));
  }
  return problems;
}
