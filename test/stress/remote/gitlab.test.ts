// Remote failures for gitlab: see scenarios.ts (short variant in npm test, long under FERRY_STRESS=1).
import { describeRemoteFailures } from './scenarios.js';

describeRemoteFailures('gitlab');
