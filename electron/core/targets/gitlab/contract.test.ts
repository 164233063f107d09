import { describeTargetContract } from '../../../../test/target-suite/target-contract.js';
import { startGitlabEmulator } from '../../../../test/emulators/gitlab/server.js';
import { makeConfig } from '../../config.js';
import { MemorySecretStore } from '../../keychain/memory.js';
import { encodeForgeId } from '../forge/ids.js';
import { createGitlabTarget } from './index.js';

async function setup() {
  const emu = await startGitlabEmulator();
  const user = { id: 1, username: 'contract', name: 'Contract' };
  emu.state.tokens.set('glpat-contract', user);
  const repo = emu.state.addProject(user, 'contract-repo', { 'sample.txt': 'sample bytes\n', 'folder/inner.txt': 'inner' });
  const target = createGitlabTarget(makeConfig({ remotes: { ...makeConfig().remotes, gitlabUrl: emu.url } }), new MemorySecretStore(), { maxRateWaitMs: 2000, ratePerSecond: 50 });
  return {
    target,
    token: 'glpat-contract',
    badToken: 'glpat-invalid',
    writableContainerId: encodeForgeId('p', repo.id),
    sampleFileId: encodeForgeId('p', repo.id, 'sample.txt'),
    missingId: encodeForgeId('p', repo.id, 'no-such-file.txt'),
    teardown: () => emu.close(),
  };
}

describeTargetContract('gitlab', setup);
