// The shared Target conformance suite (and its capability half), run on the local target over a temp workspace.

import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describeTargetContract } from '../../../../test/target-suite/target-contract.js';
import { encodeLocalId } from './ids.js';
import { LocalTarget } from './local-target.js';
import { tempDir } from './test-helpers.js';

describeTargetContract('local', async () => {
  const { dir, cleanup } = await tempDir('contract');
  await mkdir(path.join(dir, 'Data', 'sub'), { recursive: true });
  await mkdir(path.join(dir, 'Inbox'));
  await writeFile(path.join(dir, 'Data', 'a.txt'), 'alpha\n');
  await writeFile(path.join(dir, 'Data', 'sub', 'data.json'), '{"b": 1}\n');
  await writeFile(path.join(dir, 'Data', 'café #1?.txt'), 'unicode\n');
  await writeFile(path.join(dir, 'notes.md'), '# notes\n');
  // folders changed within the last 2 s are never kept (listing.ts, SETTLED_NS): wait them
  // out, so the capability checks compare kept listings too
  await new Promise((resolve) => setTimeout(resolve, 2100));
  return {
    target: new LocalTarget({ root: dir }),
    token: 'the-access-key-is-checked-by-the-http-layer',
    writableContainerId: encodeLocalId('Inbox'),
    sampleFileId: encodeLocalId('Data/sub/data.json'),
    teardown: cleanup,
  };
});
