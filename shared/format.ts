// Byte counts as a sentence in an error message reads them. Pure: used by the core and,
// where it fits, the renderer.

const BINARY_UNITS = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
const DECIMAL_UNITS = ['bytes', 'kB', 'MB', 'GB', 'TB'];

/**
 * "512 bytes", "1.5 MiB", "50 GiB": whole numbers without a decimal, others to one decimal.
 * `decimal` counts in powers of 1000 (kB, MB, GB), for limits a service states that way
 * (Zenodo's "50 GB" per record).
 */
export function formatBytes(bytes: number, options: { decimal?: boolean } = {}): string {
  const base = options.decimal ? 1000 : 1024;
  const units = options.decimal ? DECIMAL_UNITS : BINARY_UNITS;
  let value = bytes;
  let unit = 0;
  while (value >= base && unit < units.length - 1) {
    value /= base;
    unit++;
  }
  return `${Number.isInteger(value) ? value : value.toFixed(1)} ${units[unit]}`;
}
