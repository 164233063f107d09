import type { CacheableListings, ResourceNode } from './target.js';

/**
 * The listing batches a target keeps to hand out again (TargetCapabilities.cacheableListings):
 * each frozen, so it stays as it was handed out, and known by identity, so a caller can ask.
 */
export class KeptBatches implements CacheableListings {
  private readonly kept = new WeakSet<readonly ResourceNode[]>();

  /** Freezes `batch` (not its rows) and marks it kept. */
  keep<T extends ResourceNode>(batch: T[]): readonly T[] {
    this.kept.add(Object.freeze(batch));
    return batch;
  }

  readonly isKept = (batch: readonly ResourceNode[]): boolean => this.kept.has(batch);
}
