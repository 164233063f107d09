import type { FerryConfig } from '../../config.js';
import type { SecretStore } from '../../keychain/port.js';
import type { Target } from '../../target.js';
import { WebdavTarget, type WebdavTargetOptions } from './webdav-target.js';

export { WebdavTarget, hashesFromChecksums, parseWebdavId, webdavId, type WebdavTargetOptions } from './webdav-target.js';
export { parseWebdavToken, type WebdavCredentials } from './credentials.js';

/**
 * The `webdav` target. Unlike the other remotes its server URL is per account, so it lives
 * in the token (see credentials.ts): `{"url": ..., "username": ..., "password": ...}`.
 */
export function createWebdavTarget(_config: FerryConfig, _secrets: SecretStore, overrides: WebdavTargetOptions = {}): Target {
  return new WebdavTarget(overrides);
}
