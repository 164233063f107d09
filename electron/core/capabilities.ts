import { fastPathOn, type FastPath } from './fast-paths.js';
import type { Target, TargetCapabilities } from './target.js';

// The one place a target's declared capabilities (target.ts) meet the fast-path switches
// (fast-paths.ts): a capability whose fast path is off is not there for any caller, so with
// FERRY_FAST_PATHS=off every caller takes the contract's own path.

/** The fast path each capability of TargetCapabilities serves. */
const FAST_PATH_OF: { readonly [Name in keyof Required<TargetCapabilities>]: FastPath } = {
  stagedWrites: 'staged-bag-check',
  cacheableListings: 'kept-listings',
  columnarListing: 'columnar-listing',
};

/** What `target` declares, less each capability whose fast path is switched off. */
export function capabilitiesOf(target: Target): TargetCapabilities {
  const declared = target.capabilities;
  if (!declared) return {};
  const on: Record<string, unknown> = {};
  for (const name of Object.keys(FAST_PATH_OF) as (keyof TargetCapabilities)[]) {
    if (declared[name] !== undefined && fastPathOn(FAST_PATH_OF[name])) on[name] = declared[name];
  }
  return on as TargetCapabilities;
}
