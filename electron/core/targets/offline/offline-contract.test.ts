// The shared Target conformance suite (and its capability half: columnar and kept listings)
// run on the offline target over a library of two archives.

import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describeTargetContract } from '../../../../test/target-suite/target-contract.js';
import { collect } from '../../../../test/target-suite/test-entries.js';
import { DEFAULT_LIMITS } from '../../limits.js';
import { rawZip } from '../../zip/testing/raw-zip.js';
import { OfflineTarget } from './offline-target.js';

describeTargetContract('offline', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ferry-offline-contract-'));
  const libraryDir = path.join(dir, 'library');
  await mkdir(libraryDir);
  const names = ['top/a.txt', 'top/say "hi".txt', 'top/naïve café.csv', 'top/sub/deeper/leaf.bin', 'other/plain/one', ...Array.from({ length: 200 }, (_, i) => `many/d${i % 7}/f${i}.txt`)];
  await writeFile(path.join(libraryDir, 'mixed.zip'), rawZip(names.map((name, i) => ({ name, data: Buffer.from(`${name} ${i}\n`) }))));
  await writeFile(path.join(libraryDir, 'second.zip'), rawZip([{ name: 'b/c.txt', data: Buffer.from('c\n') }, { name: 'ä.txt', data: Buffer.from('ä\n') }]));
  const target = new OfflineTarget({ libraryDirs: [libraryDir], stateDir: path.join(dir, 'state'), limits: DEFAULT_LIMITS });
  const archives = await collect(target.list({ token: '', signal: new AbortController().signal }, { container: null }));
  return {
    target,
    token: 'the-access-key-is-checked-by-the-http-layer',
    writableContainerId: archives[0]!.id,
    teardown: () => rm(dir, { recursive: true, force: true }),
  };
});
