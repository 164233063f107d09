import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from 'vitest';
import { describeTargetContract } from '../../../../test/target-suite/target-contract.js';
import { REAL_WEBDAV_SERVERS } from '../../../../test/webdav/servers.js';
import { makeConfig } from '../../config.js';
import { MemorySecretStore } from '../../keychain/memory.js';
import { createWebdavTarget, webdavId } from './index.js';

// The shared Target suite, once per independent real WebDAV server.
for (const kind of REAL_WEBDAV_SERVERS) {
  if (kind.unavailable) {
    describe(`webdav Target contract (${kind.name})`, () => it.skip(`not run: ${kind.unavailable}`, () => undefined));
    continue;
  }
  describeTargetContract(`webdav (${kind.name})`, async () => {
    const server = await kind.start();
    await mkdir(path.join(server.dataDir, 'Writable'));
    await writeFile(path.join(server.dataDir, 'sample.txt'), 'sample bytes');
    if (kind.ownerOfFiles) execFileSync('chown', ['-R', kind.ownerOfFiles, server.dataDir]);
    return {
      target: createWebdavTarget(makeConfig({ dataDir: '/nonexistent' }), new MemorySecretStore(), { retries: 0 }),
      token: JSON.stringify({ url: server.url, username: server.username, password: server.password }),
      badToken: JSON.stringify({ url: server.url, username: server.username, password: 'wrong-password' }),
      writableContainerId: webdavId('/Writable'),
      sampleFileId: webdavId('/sample.txt'),
      missingId: webdavId('/no-such-file.txt'),
      teardown: () => server.stop(),
    };
  });
}
