import { unauthorized } from '../../errors.js';
import type { InvenioAccount } from '../invenio/credentials.js';
import type { InvenioInstance } from '../invenio/invenio-target.js';
import { ONE_AT_A_TIME } from '../../jobs/ordered-pipeline.js';

/**
 * Zenodo as an InvenioRDM instance (docs/targets/zenodo.md): 100 files and 50 GB per record
 * and per file, no empty files (zenodo-rdm `invenio.cfg`: RDM_RECORDS_MAX_FILES_COUNT,
 * RDM_FILES_DEFAULT_QUOTA_SIZE / MAX_FILE_SIZE, RECORDS_RESOURCES_ALLOW_EMPTY_FILES = False).
 * A token is the bare personal access token, for `baseUrl` only: a Zenodo token never names
 * another instance. One file at a time: Zenodo allows 100 requests a minute, and Ferry sends
 * one a second (zenodo/index.ts); a file's three requests take 3 s at that rate whatever is in
 * flight, so a second file in flight would only wait in the rate queue.
 */
export function zenodoInstance(baseUrl: string): InvenioInstance {
  const url = `${baseUrl.replace(/\/+$/, '')}/`;
  return {
    name: 'zenodo',
    readableName: 'Zenodo',
    account(token: string): InvenioAccount {
      const trimmed = token.trim();
      if (!trimmed || /\s/.test(trimmed)) throw unauthorized('The Zenodo token is a personal access token (Account → Applications → Personal access tokens), with no spaces.');
      return { url, token: trimmed };
    },
    maxFiles: 100,
    maxRecordBytes: 50 * 10 ** 9,
    allowEmptyFiles: false,
    concurrency: ONE_AT_A_TIME,
  };
}
