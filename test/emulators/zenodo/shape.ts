/**
 * Key paths of a JSON value with their JSON types ("links.bucket: string"), arrays
 * collapsed to their first element ("files[].checksum: string"). Used to check an emulator's
 * bodies against real recorded ones.
 */
export function shapeOf(value: unknown, prefix = ''): Set<string> {
  const out = new Set<string>();
  const type = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
  if (prefix) out.add(`${prefix}: ${type}`);
  if (Array.isArray(value)) {
    if (value.length > 0) for (const key of shapeOf(value[0], `${prefix}[]`)) out.add(key);
  } else if (value && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) for (const k of shapeOf(child, prefix ? `${prefix}.${key}` : key)) out.add(k);
  }
  return out;
}

/** Recorded key paths the emulator lacks or types differently, minus documented exceptions. */
export function missingFrom(emulated: unknown, recorded: unknown, ignore: RegExp[] = []): string[] {
  const have = shapeOf(emulated);
  return [...shapeOf(recorded)].filter((key) => !have.has(key) && !ignore.some((re) => re.test(key)));
}
