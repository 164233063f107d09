import { describeTargetContract } from '../../../../test/target-suite/target-contract.js';
import { startGithubEmulator } from '../../../../test/emulators/github/server.js';
import { makeConfig } from '../../config.js';
import { MemorySecretStore } from '../../keychain/memory.js';
import { encodeForgeId } from '../forge/ids.js';
import { createGithubTarget } from './index.js';

async function setup() {
  const emu = await startGithubEmulator();
  const user = { id: 1, login: 'contract' };
  emu.state.tokens.set('ghp_contract', user);
  const repo = emu.state.addRepo(user, 'contract-repo', { 'sample.txt': 'sample bytes\n', 'folder/inner.txt': 'inner' });
  const target = createGithubTarget(makeConfig({ remotes: { ...makeConfig().remotes, githubApiUrl: emu.url } }), new MemorySecretStore(), { writeSpacingMs: 0, maxRateWaitMs: 2000 });
  return {
    target,
    token: 'ghp_contract',
    badToken: 'ghp_invalid',
    writableContainerId: encodeForgeId('r', repo.id),
    sampleFileId: encodeForgeId('r', repo.id, 'sample.txt'),
    missingId: encodeForgeId('r', repo.id, 'no-such-file.txt'),
    teardown: () => emu.close(),
  };
}

describeTargetContract('github', setup);
