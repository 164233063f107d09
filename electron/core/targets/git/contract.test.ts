import { describe, it } from 'vitest';
import { describeTargetContract } from '../../../../test/target-suite/target-contract.js';
import { apacheGitUnavailableReason, startApacheGit } from '../../../../test/git/apache-git.js';
import { makeConfig } from '../../config.js';
import { MemorySecretStore } from '../../keychain/memory.js';
import { createGitTarget, gitId } from './index.js';

const missing = apacheGitUnavailableReason();
if (missing) {
  console.warn(`[git contract] not run: ${missing}`);
  describe('git Target contract', () => it.skip(`not run: ${missing}`, () => undefined));
} else {
  describeTargetContract('git', async () => {
    const server = await startApacheGit();
    const url = await server.createRepo('contract', { 'sample.txt': 'sample bytes\n', 'Writable/.keep': '', 'folder/inner.txt': 'inner' });
    const target = createGitTarget(makeConfig({ dataDir: '/nonexistent' }), new MemorySecretStore());
    return {
      target,
      token: JSON.stringify({ url, username: server.username, password: server.password }),
      badToken: JSON.stringify({ url, username: server.username, password: 'wrong-password' }),
      writableContainerId: gitId('Writable'),
      sampleFileId: gitId('sample.txt'),
      missingId: gitId('no-such-file.txt'),
      teardown: async () => {
        await target.close?.();
        await server.stop();
      },
    };
  });
}
