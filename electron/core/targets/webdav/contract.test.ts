import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from 'vitest';
import { describeTargetContract } from '../../../../test/target-suite/target-contract.js';
import { makeConfig } from '../../config.js';
import { MemorySecretStore } from '../../keychain/memory.js';
import { apacheUnavailableReason, startApacheWebdav } from '../../../../test/webdav/apache-webdav.js';
import { createWebdavTarget, webdavId } from './index.js';

const missing = apacheUnavailableReason();
if (missing) {
  console.warn(`[webdav contract] not run: ${missing}`);
  describe('webdav Target contract', () => it.skip(`not run: ${missing}`, () => undefined));
} else {
  describeTargetContract('webdav', async () => {
    const server = await startApacheWebdav();
    await mkdir(path.join(server.dataDir, 'Writable'));
    await writeFile(path.join(server.dataDir, 'sample.txt'), 'sample bytes');
    // created as root for an httpd that runs as nobody: let it write there
    if (process.getuid?.() === 0) await import('node:child_process').then(({ execFileSync }) => execFileSync('chown', ['-R', 'nobody', server.dataDir]));
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
