import { startInvenioEmulator, type InvenioEmulator, type InvenioEmulatorOptions, type InvenioState } from '../invenio/emulator.js';

/**
 * zenodo.org's records API: the InvenioRDM emulator with Zenodo's settings
 * (docs/targets/zenodo.md; zenodo-rdm `invenio.cfg`, site/zenodo_rdm): record ids are digits
 * (the deposition ids of the legacy API), empty files are refused
 * (RECORDS_RESOURCES_ALLOW_EMPTY_FILES = False), at most 100 files a record, every answer
 * carries `retry-after: 60`, errors are `{message, status}` (faults: ERROR_SHAPES.zenodo).
 * Tokens: `zenodo-token` (user 1), `zenodo-other` (user 2).
 */
export type ZenodoEmulator = InvenioEmulator;
export type ZenodoState = InvenioState;

export function startZenodoEmulator(options: InvenioEmulatorOptions = {}): Promise<ZenodoEmulator> {
  return startInvenioEmulator({ numericIds: true, allowEmptyFiles: false, maxFiles: 100, retryAfterAlways: 60, tokens: { 'zenodo-token': 1, 'zenodo-other': 2 }, ...options });
}
