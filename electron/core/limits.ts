/**
 * Limits on what an upload may hold (API.md "Limits"): defaults a desktop user won't hit
 * by accident, each configurable. Zip bombs are caught by count, total and ratio.
 */
export interface Limits {
  /** bytes of the uploaded ZIP itself */
  maxUploadBytes: number;
  maxEntries: number;
  /** sum of the entries' uncompressed sizes */
  maxTotalUncompressedBytes: number;
  /** uncompressed / compressed, per entry and for the whole archive */
  maxCompressionRatio: number;
  /** characters of an entry's path */
  maxPathLength: number;
}

export const DEFAULT_LIMITS: Limits = {
  maxUploadBytes: 64 * 1024 ** 3,
  maxEntries: 500_000,
  maxTotalUncompressedBytes: 256 * 1024 ** 3,
  maxCompressionRatio: 1000,
  maxPathLength: 4096,
};
