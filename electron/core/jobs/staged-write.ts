import type { WriteOptions } from '../target.js';

// A staged write: the target writes every entry to hidden temporaries first, then asks
// `beforeCommit`, and only when it resolves puts them in place. When it throws (or anything
// else fails), nothing of the write is left. The upload job uses it to check a bag's bytes
// against its manifests in the same pass that writes them, instead of a whole pass before.
//
// Not every target can stage (a remote one publishes as it goes), so a target declares
// `capabilities.stagedWrites`; the job asks capabilitiesOf() before relying on it.

export interface StagedWriteOptions extends WriteOptions {
  /** called once every entry is in a temporary, before any is put in place; a throw writes nothing */
  beforeCommit?: () => Promise<void>;
}
