import type { FerryConfig } from '../config.js';
import type { SecretStore } from '../keychain/port.js';
import type { Target } from '../target.js';
import { createDataverseTarget } from './dataverse/index.js';
import { createFigshareTarget } from './figshare/index.js';
import { createGitTarget } from './git/index.js';
import { createGithubTarget } from './github/index.js';
import { createGitlabTarget } from './gitlab/index.js';
import { createInvenioTarget } from './invenio/index.js';
import { createLocalTarget } from './local/index.js';
import { createOfflineTarget } from './offline/index.js';
import { createOsfTarget } from './osf/index.js';
import { createWebdavTarget } from './webdav/index.js';
import { createZenodoTarget } from './zenodo/index.js';

/** Every target Ferry ships, in the order the UI offers them. */
export function builtinTargets(config: FerryConfig, secrets: SecretStore): Target[] {
  return [
    createLocalTarget(config, secrets),
    createOfflineTarget(config, secrets),
    createOsfTarget(config, secrets),
    createGithubTarget(config, secrets),
    createGitlabTarget(config, secrets),
    createZenodoTarget(config, secrets),
    createFigshareTarget(config, secrets),
    createWebdavTarget(config, secrets),
    createGitTarget(config, secrets),
    createDataverseTarget(config, secrets),
    createInvenioTarget(config, secrets),
  ];
}
