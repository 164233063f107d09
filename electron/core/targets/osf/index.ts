import type { FerryConfig } from '../../config.js';
import type { SecretStore } from '../../keychain/port.js';
import type { Target } from '../../target.js';
import { OsfTarget } from './osf-target.js';
import { rateFromEnv } from '../../remote/rate-setting.js';

export { OsfTarget } from './osf-target.js';
export { OsfClient, OSF_API_VERSION } from './client.js';
export { parseOsfId, nodeId, storageId, fileNodeId } from './ids.js';

export interface OsfTargetOptions {
  /** requests per second to each OSF host (default 5, or FERRY_OSF_RATE_PER_SECOND) */
  ratePerSecond?: number;
  /** per request, ms (default 60 s) */
  timeoutMs?: number;
  /** retries on 408/429/5xx, honouring Retry-After (default 4) */
  retries?: number;
}

/**
 * The OSF target on `config.remotes.osfApiUrl` (https://api.osf.io/v2/ by default; the
 * test servers are https://api.test.osf.io/v2/). Tokens come per request through
 * TargetContext; `secrets` is not needed here.
 */
export function createOsfTarget(config: FerryConfig, _secrets: SecretStore, options: OsfTargetOptions = {}): Target {
  return new OsfTarget({
    apiUrl: config.remotes.osfApiUrl,
    ratePerSecond: options.ratePerSecond ?? rateFromEnv('FERRY_OSF_RATE_PER_SECOND') ?? 5,
    timeoutMs: options.timeoutMs,
    retries: options.retries,
  });
}
