// Remote failures (issue 9.6): every remote target behind its emulator (WebDAV: a real Apache
// behind a fault proxy) with faults injected, through the real client code and job runner.
// Short variant in `npm test`; seeded random schedules over more files under FERRY_STRESS=1.
// One file (imported once), the targets side by side: the waits they test overlap.
import { describe } from 'vitest';
import { apacheUnavailableReason } from '../../webdav/apache-webdav.js';
import { describeRemoteFailures } from './scenarios.js';

describe.concurrent('remote failures', () => {
  for (const name of ['osf', 'github', 'gitlab', 'zenodo', 'figshare']) describeRemoteFailures(name);
  describeRemoteFailures('webdav', apacheUnavailableReason());
});
