// Remote failures for WebDAV (a real Apache behind a fault proxy): see scenarios.ts.
import { apacheUnavailableReason } from '../../webdav/apache-webdav.js';
import { describeRemoteFailures } from './scenarios.js';

describeRemoteFailures('webdav', apacheUnavailableReason());
