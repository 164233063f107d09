import { describe, expect, it } from 'vitest';
import { formatBytes } from './format.js';

describe('formatBytes', () => {
  it.each([
    [0, {}, '0 bytes'],
    [512, {}, '512 bytes'],
    [1024, {}, '1 KiB'],
    [1536, {}, '1.5 KiB'],
    [64 * 1024 ** 3, {}, '64 GiB'],
    [5 * 1024 ** 5, {}, '5120 TiB'],
    [50_000_000_000, { decimal: true }, '50 GB'],
    [10, { decimal: true }, '10 bytes'],
    [1_250_000, { decimal: true }, '1.3 MB'],
  ])('%d bytes %o reads "%s"', (bytes, options, text) => {
    expect(formatBytes(bytes, options)).toBe(text);
  });
});
